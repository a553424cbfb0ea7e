# actionloop_add_action(<name> <sources...>)
#
# Builds the C++ action <name> from <sources> the way `compile` builds an uploaded action:
# each source's `main` is renamed to `actionloop_main` by a macro (a global `main` must return
# int; the launcher owns the real one), <actionloop/action.hpp> is included first, and the
# executable links actionloop::launcher. Then packages it as ${CMAKE_CURRENT_BINARY_DIR}/<name>.zip
# holding one top-level `exec`: the layout /init runs as is (`proxy -compile` makes the same),
# so the zip is ready for `wsk action create <name> <name>.zip --kind <a cpp kind>`.
#
# Targets: <name> (the executable) and <name>_zip (the zip, built by default).
# Installed with the launcher (lib/cmake/actionloop) and used in this repository as well.
function(actionloop_add_action name)
  set(sources ${ARGN})
  if(NOT sources)
    message(FATAL_ERROR "actionloop_add_action(${name}): no sources given")
  endif()
  add_executable(${name} ${sources})
  target_link_libraries(${name} PRIVATE actionloop::launcher)
  target_compile_features(${name} PRIVATE cxx_std_17)
  target_compile_options(${name} PRIVATE "SHELL:-include actionloop/action.hpp")
  set_property(SOURCE ${sources} TARGET_DIRECTORY ${name} APPEND
               PROPERTY COMPILE_DEFINITIONS main=actionloop_main)

  set(stage ${CMAKE_CURRENT_BINARY_DIR}/${name}.zip.d)
  set(zip ${CMAKE_CURRENT_BINARY_DIR}/${name}.zip)
  add_custom_command(
    OUTPUT ${zip}
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${stage}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${stage}
    COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:${name}> ${stage}/exec
    COMMAND ${CMAKE_COMMAND} -E chdir ${stage} ${CMAKE_COMMAND} -E tar cf ${zip} --format=zip exec
    DEPENDS ${name}
    COMMENT "Packaging the action ${name} as ${name}.zip"
    VERBATIM)
  add_custom_target(${name}_zip ALL DEPENDS ${zip})
endfunction()
