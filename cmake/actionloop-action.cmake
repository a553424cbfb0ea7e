# actionloop_add_action(<name> [SOURCES] <sources...> [MAIN <entry>] [DATA <files or dirs...>]
#                       [EXEC_ENV <value>] [ZIP <path>])
#
# Builds the C++ action <name> from <sources> the way `compile` builds an uploaded action, and
# packages it as <name>.zip (in ${CMAKE_CURRENT_BINARY_DIR}, or at ZIP) holding `exec`,
# `exec.env` and the DATA files: the layout /init runs as is (`proxy -compile` makes the same),
# ready for `wsk action create <name> <name>.zip --docker <the runtime image>`.
#
#   MAIN      the entry point's name (default main), as `wsk --main`; any function name works
#   DATA      files or directories copied next to exec (by their own name), which the action
#             reads by a relative path: it runs in the directory of exec
#   EXEC_ENV  what exec.env holds: the runtime image's OW_EXECUTION_ENV, which the proxy checks
#             at /init (default ${ACTIONLOOP_EXEC_ENV}, the image's name, actionloop/actionloop-cpp
#             unless set when configuring: -DACTIONLOOP_EXEC_ENV=YOU/actionloop-cpp:0.1.0)
#
# The file that defines the entry point is compiled through a generated wrapper, as `compile`
# does (see actionloop/entry.hpp): `#include "<file>"` then ACTIONLOOP_ENTRY(<entry>), which
# checks the signature at compile time and hands the function to the launcher's int main();
# `main` itself is renamed by a macro in that file only (a global main must return int), and
# every other source and use of the name is compiled as written. The file is picked when CMake
# configures, by compile's rule (the sources with an unqualified `<entry>(`; among several, the
# one where it starts a line): re-run CMake after moving the entry point to another file.
# <actionloop/action.hpp> is included first in every source.
#
# Targets: <name> (the executable; link more libraries with target_link_libraries) and
# <name>_zip (the zip, built by default). Installed with the launcher (lib/cmake/actionloop)
# and used for this repository's own actions as well.
set(ACTIONLOOP_EXEC_ENV "actionloop/actionloop-cpp" CACHE STRING
    "the exec.env of actionloop_add_action's zips: the runtime image's OW_EXECUTION_ENV")

function(actionloop_add_action name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MAIN;EXEC_ENV;ZIP" "SOURCES;DATA")
  set(sources ${ARG_SOURCES} ${ARG_UNPARSED_ARGUMENTS})
  if(NOT sources)
    message(FATAL_ERROR "actionloop_add_action(${name}): no sources given")
  endif()
  set(entry main)
  if(DEFINED ARG_MAIN)
    set(entry ${ARG_MAIN})
  endif()
  if(NOT entry MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "actionloop_add_action(${name}): MAIN '${entry}' is not a C++ identifier")
  endif()
  set(exec_env ${ACTIONLOOP_EXEC_ENV})
  if(DEFINED ARG_EXEC_ENV)
    set(exec_env ${ARG_EXEC_ENV})
  endif()
  if(exec_env STREQUAL "")
    message(FATAL_ERROR "actionloop_add_action(${name}): EXEC_ENV is empty: the runtime image "
                        "refuses a zip without exec.env")
  endif()
  set(zip ${CMAKE_CURRENT_BINARY_DIR}/${name}.zip)
  if(DEFINED ARG_ZIP)
    get_filename_component(zip ${ARG_ZIP} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  endif()

  # The file that defines the entry point (compile's rule), compiled through its wrapper.
  set(cpp_sources "")
  set(others "")
  foreach(source IN LISTS sources)
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if(path MATCHES "\\.(cpp|cc|cxx)$")
      list(APPEND cpp_sources ${path})
    else()
      list(APPEND others ${path})
    endif()
  endforeach()
  set(use "(^|[^A-Za-z0-9_:.>])${entry}[ \t]*\\(")
  set(defining "")
  set(at_top "")
  foreach(path IN LISTS cpp_sources)
    file(STRINGS ${path} hits REGEX "${use}")
    if(hits)
      list(APPEND defining ${path})
      foreach(line IN LISTS hits)
        if(line MATCHES "^[A-Za-z_]")
          list(APPEND at_top ${path})
          break()
        endif()
      endforeach()
    endif()
  endforeach()
  list(LENGTH defining count)
  if(count GREATER 1 AND at_top)
    set(defining ${at_top})
  endif()
  if(NOT defining)
    if(NOT cpp_sources)
      message(FATAL_ERROR "actionloop_add_action(${name}): no C++ source (*.cpp, *.cc, *.cxx)")
    endif()
    # Perhaps in a header: the wrapper's check says so if it is not in this file either.
    set(defining ${cpp_sources})
  endif()
  list(GET defining 0 entry_file)
  set(wrapper ${CMAKE_CURRENT_BINARY_DIR}/${name}.entry.cpp)
  set(rename "")
  set(entry_name ${entry})
  if(entry STREQUAL "main")
    set(rename "#define main actionloop_user_main\n")
    set(entry_name actionloop_user_main)
  endif()
  file(GENERATE OUTPUT ${wrapper} CONTENT
       "${rename}#include \"${entry_file}\"\n#undef main\n#include <actionloop/entry.hpp>\nACTIONLOOP_ENTRY(${entry_name})\n")
  set(compiled ${cpp_sources} ${others})
  list(REMOVE_ITEM compiled ${entry_file})
  list(APPEND compiled ${wrapper})
  add_executable(${name} ${compiled})
  target_link_libraries(${name} PRIVATE actionloop::launcher)
  target_compile_features(${name} PRIVATE cxx_std_17)
  target_compile_options(${name} PRIVATE "SHELL:-include actionloop/action.hpp")
  # As `compile`: ACTIONLOOP_CXXFLAGS (a CMake variable, else the environment's) adds compiler
  # flags, and the executable keeps its function symbols (the launcher's crash backtraces name
  # them) but loses its debug sections, unless -g asks for them (there, in CMAKE_CXX_FLAGS, or
  # a Debug or RelWithDebInfo build): the backtraces then also say file:line.
  set(user_flags "${ACTIONLOOP_CXXFLAGS}")
  if(user_flags STREQUAL "")
    set(user_flags "$ENV{ACTIONLOOP_CXXFLAGS}")
  endif()
  separate_arguments(user_flags UNIX_COMMAND "${user_flags}")
  target_compile_options(${name} PRIVATE ${user_flags})
  if(NOT " ${user_flags} ${CMAKE_CXX_FLAGS} " MATCHES "[ ;]-g([1-3]|gdb|dwarf)?[-0-9]*[ ;]")
    target_link_options(${name} PRIVATE
      "$<$<NOT:$<OR:$<CONFIG:Debug>,$<CONFIG:RelWithDebInfo>>>:LINKER:--strip-debug>")
  endif()
  # The sources' own folders, for their "..." includes of one another (as compile's -I SRC).
  set(dirs "")
  foreach(source IN LISTS sources)
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(dir ${path} DIRECTORY)
    list(APPEND dirs ${dir})
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  target_include_directories(${name} PRIVATE ${dirs})

  # The zip: exec, exec.env and the data files, at its top.
  # (Beside the zip, named after it: <zip without .zip>.d, where tests find the exec.)
  string(REGEX REPLACE "\\.zip$" "" stage ${zip})
  set(stage ${stage}.d)
  set(copies "")
  set(names exec exec.env)
  set(data_depends "")
  foreach(item IN LISTS ARG_DATA)
    get_filename_component(path ${item} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(item_name ${path} NAME)
    if(IS_DIRECTORY ${path})
      list(APPEND copies COMMAND ${CMAKE_COMMAND} -E copy_directory ${path} ${stage}/${item_name})
      file(GLOB_RECURSE inside CONFIGURE_DEPENDS ${path}/*)
      list(APPEND data_depends ${inside})
    elseif(EXISTS ${path})
      list(APPEND copies COMMAND ${CMAKE_COMMAND} -E copy ${path} ${stage}/${item_name})
      list(APPEND data_depends ${path})
    else()
      message(FATAL_ERROR "actionloop_add_action(${name}): DATA ${item}: no such file or directory")
    endif()
    list(APPEND names ${item_name})
  endforeach()
  file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${name}.exec.env CONTENT "${exec_env}")
  add_custom_command(
    OUTPUT ${zip}
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${stage}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${stage}
    COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:${name}> ${stage}/exec
    COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_BINARY_DIR}/${name}.exec.env ${stage}/exec.env
    ${copies}
    COMMAND ${CMAKE_COMMAND} -E rm -f ${zip}
    COMMAND ${CMAKE_COMMAND} -E chdir ${stage} ${CMAKE_COMMAND} -E tar cf ${zip} --format=zip ${names}
    DEPENDS ${name} ${CMAKE_CURRENT_BINARY_DIR}/${name}.exec.env ${data_depends}
    COMMENT "Packaging the action ${name} as ${zip}"
    VERBATIM)
  add_custom_target(${name}_zip ALL DEPENDS ${zip})
endfunction()
