# actionloop_derive_json_header(<out_dir> <result_var>)
#
# Writes <out_dir>/nlohmann/json.hpp: a copy of the system's <nlohmann/json.hpp> in which the
# two literal operators (operator "" _json and operator "" _json_pointer) are declared instead
# of defined inline; launcher/src/json_literals.cpp defines them once, in the launcher library.
# It ends with `extern template class nlohmann::basic_json<>;`: json's members are compiled
# once, into the launcher (launcher/src/json_instance.cpp), so an action's translation units
# (and the precompiled header `compile` uses) do not instantiate them again. Both are
# cold-start optimisations of /init that stay out of the user's header, <actionloop/action.hpp>.
# Sets <result_var> to ON when the header was derived, OFF when the system header does not
# hold the expected text (another nlohmann-json version): then nothing is written (a stale
# copy is removed) and everything uses the plain system header, correct but slower.
#
# Why: the inline definition of operator "" _json calls json::parse(const char*, const char*),
# a member template the explicit instantiation of basic_json<> does not cover, so every
# translation unit that includes json.hpp instantiates the whole parser for const char* at its
# end, used or not. A precompiled header records that instantiation as pending, not done, so
# `compile` paid it (about 0.6 s of a 1 s empty translation unit) on every /init. Declared, the
# operator costs nothing; defined once in the launcher, "..."_json still links.
#
# The ODR: every translation unit of a program that links the launcher must see the same
# declaration. `compile` puts <out_dir> first on the include path of the precompiled header
# and of every user source, and the launcher library compiles all its own sources against it
# (a PUBLIC SYSTEM BEFORE include, so add_action targets get it too). The one exception is a
# static library built against nlohmann_json directly and linked into an add_action target
# (actions/alerts): it sees the inline definition, which it never odr-uses (so no code), and
# were it emitted it would be a COMDAT weak copy of the same body that the launcher's strong
# definition overrides — formally the "declared inline in one unit only" case of
# [dcl.inline]/6, harmless in practice with GCC and GNU/gold ld.
function(actionloop_derive_json_header out_dir result_var)
  set(target ${out_dir}/nlohmann/json.hpp)
  set(${result_var} OFF PARENT_SCOPE)
  get_target_property(dirs nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT dirs)
    set(dirs "")
  endif()
  find_file(ACTIONLOOP_SYSTEM_JSON_HPP nlohmann/json.hpp HINTS ${dirs}
            DOC "the <nlohmann/json.hpp> the json literals are derived from")
  if(NOT ACTIONLOOP_SYSTEM_JSON_HPP)
    message(STATUS "nlohmann/json.hpp not found by path: the precompiled header uses the "
                   "plain header (json literals instantiated per /init, slower)")
    file(REMOVE ${target})
    return()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ACTIONLOOP_SYSTEM_JSON_HPP})
  file(READ ${ACTIONLOOP_SYSTEM_JSON_HPP} text)

  # The definitions exactly as nlohmann-json 3.11.x writes them, and their declarations.
  set(def_json [=[
inline nlohmann::json operator "" _json(const char* s, std::size_t n)
{
    return nlohmann::json::parse(s, s + n);
}
]=])
  set(decl_json [=[
nlohmann::json operator "" _json(const char* s, std::size_t n);  // actionloop: json_literals.cpp
]=])
  set(def_pointer [=[
inline nlohmann::json::json_pointer operator "" _json_pointer(const char* s, std::size_t n)
{
    return nlohmann::json::json_pointer(std::string(s, n));
}
]=])
  set(decl_pointer [=[
nlohmann::json::json_pointer operator "" _json_pointer(const char* s, std::size_t n);  // actionloop: json_literals.cpp
]=])
  foreach(def def_json def_pointer)
    string(FIND "${text}" "${${def}}" first)
    string(FIND "${text}" "${${def}}" last REVERSE)
    if(first EQUAL -1 OR NOT first EQUAL last)
      message(WARNING "${ACTIONLOOP_SYSTEM_JSON_HPP}: its json literal operators are not the "
                     "expected text (another nlohmann-json version?); the precompiled header "
                     "uses the plain header: correct, but each /init instantiates the parser "
                     "(about 0.6 s slower)")
      file(REMOVE ${target})
      return()
    endif()
  endforeach()
  string(REPLACE "${def_json}" "${decl_json}" text "${text}")
  string(REPLACE "${def_pointer}" "${decl_pointer}" text "${text}")
  set(header [=[
// Derived from @SRC@ by actionloop-cpp's build (cmake/json_literals.cmake); do not edit.
// The changes: operator "" _json and operator "" _json_pointer are declared, not defined
// inline, and basic_json<> is declared extern at the end; libactionloop_launcher.a defines
// both (json_literals.cpp, json_instance.cpp). See those files for why.
#pragma GCC system_header
#define ACTIONLOOP_JSON_LITERALS_OUTLINED 1
]=])
  string(REPLACE "@SRC@" "${ACTIONLOOP_SYSTEM_JSON_HPP}" header "${header}")
  set(footer [=[

// actionloop: basic_json<> is instantiated once, in libactionloop_launcher.a (json_instance.cpp).
#ifndef ACTIONLOOP_JSON_EXTERN_TEMPLATE
#define ACTIONLOOP_JSON_EXTERN_TEMPLATE
#ifndef ACTIONLOOP_INSTANTIATE_JSON
extern template class nlohmann::basic_json<>;
#endif
#endif
]=])
  # Rewritten only when it changes, so a reconfigure does not rebuild the precompiled header.
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/json.hpp.derived "${header}${text}${footer}")
  configure_file(${CMAKE_CURRENT_BINARY_DIR}/json.hpp.derived ${target} COPYONLY)
  message(STATUS "json literals: declared in ${target}, defined in the launcher")
  set(${result_var} ON PARENT_SCOPE)
endfunction()
