# Sanitizer builds (the two cannot be combined: ASan and TSan each own the shadow memory).
#
# ACTIONLOOP_SANITIZE: every target (proxy, launcher, actions, tests) is built with
# ASan + UBSan, and any finding aborts the process.
#
# ACTIONLOOP_TSAN: ThreadSanitizer on the proxy: the actionloop_proxy library and, through
# its PUBLIC usage requirements, everything that links it (the proxy binary, the unit and
# integration test executables). The launcher and the actions stay uninstrumented: they are
# single-threaded, and `compile` links user actions against the launcher without TSan.
function(actionloop_enable_sanitizers_globally)
  if(ACTIONLOOP_SANITIZE AND ACTIONLOOP_TSAN)
    message(FATAL_ERROR "ACTIONLOOP_SANITIZE (ASan) and ACTIONLOOP_TSAN cannot be combined")
  endif()
  if(ACTIONLOOP_SANITIZE)
    set(flags -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
    add_compile_options(${flags})
    add_link_options(${flags})
  endif()
endfunction()

# Called once the proxy's targets exist.
function(actionloop_enable_tsan_on_proxy)
  if(ACTIONLOOP_TSAN)
    target_compile_options(actionloop_proxy PUBLIC -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(actionloop_proxy PUBLIC -fsanitize=thread)
  endif()
endfunction()
