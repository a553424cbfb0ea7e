# actionloop_target_warnings(<target>): our warning set, PRIVATE, errors when
# ACTIONLOOP_WARNINGS_AS_ERRORS is on. Third-party headers come in as SYSTEM includes.
function(actionloop_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(ACTIONLOOP_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
