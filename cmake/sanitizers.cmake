# With ACTIONLOOP_SANITIZE every target (proxy, launcher, actions, tests) is built with
# ASan + UBSan, and any finding aborts the process.
function(actionloop_enable_sanitizers_globally)
  if(ACTIONLOOP_SANITIZE)
    set(flags -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
    add_compile_options(${flags})
    add_link_options(${flags})
  endif()
endfunction()
