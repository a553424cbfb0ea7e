# Sanitizer builds, as target helpers (the two cannot be combined: ASan and TSan each own the
# shadow memory).
#
# ACTIONLOOP_SANITIZE: ASan + UBSan on every target the project builds (proxy, launcher,
# actions, tests, benchmarks), and any finding aborts the process. The top-level
# CMakeLists.txt calls actionloop_sanitize_targets_under() once all folders are added, which
# applies actionloop_target_sanitizers() to each of their targets, so none is missed.
#
# ACTIONLOOP_TSAN: ThreadSanitizer on the proxy: the actionloop_proxy library and, through
# its PUBLIC usage requirements, everything that links it (the proxy binary, the unit and
# integration test executables). The launcher and the actions stay uninstrumented: they are
# single-threaded, and `compile` links user actions against the launcher without TSan.
set(ACTIONLOOP_ASAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
                          -fno-omit-frame-pointer)

if(ACTIONLOOP_SANITIZE AND ACTIONLOOP_TSAN)
  message(FATAL_ERROR "ACTIONLOOP_SANITIZE (ASan) and ACTIONLOOP_TSAN cannot be combined")
endif()

# actionloop_target_sanitizers(<target>): ASan + UBSan on <target> when ACTIONLOOP_SANITIZE.
function(actionloop_target_sanitizers target)
  if(ACTIONLOOP_SANITIZE)
    target_compile_options(${target} PRIVATE ${ACTIONLOOP_ASAN_FLAGS})
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE" OR type STREQUAL "SHARED_LIBRARY"
       OR type STREQUAL "MODULE_LIBRARY")
      target_link_options(${target} PRIVATE ${ACTIONLOOP_ASAN_FLAGS})
    endif()
  endif()
endfunction()

# actionloop_sanitize_targets_under(<dir>): actionloop_target_sanitizers() on every compiled
# target defined in <dir> and its subdirectories, but those with the property
# ACTIONLOOP_NO_SANITIZERS set (the Lambda bootstrap, linked statically).
function(actionloop_sanitize_targets_under dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(skip ${target} ACTIONLOOP_NO_SANITIZERS)  # e.g. a static program
    if(skip)
      continue()
    endif()
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      actionloop_target_sanitizers(${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    actionloop_sanitize_targets_under(${subdir})
  endforeach()
endfunction()

# Called once the proxy's targets exist.
function(actionloop_enable_tsan_on_proxy)
  if(ACTIONLOOP_TSAN)
    target_compile_options(actionloop_proxy PUBLIC -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(actionloop_proxy PUBLIC -fsanitize=thread)
  endif()
endfunction()
