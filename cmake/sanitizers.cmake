# Sanitizer builds, as target helpers (the two cannot be combined: ASan and TSan each own the
# shadow memory).
#
# ACTIONLOOP_SANITIZE: ASan + UBSan on every target the project builds (proxy, launcher,
# actions, tests, benchmarks; the test drivers with ASan only, below), and any finding aborts
# the process. The top-level CMakeLists.txt calls actionloop_sanitize_targets_under() once all
# folders are added, which applies actionloop_target_sanitizers() to each of their targets, so
# none is missed.
#
# ACTIONLOOP_TSAN: ThreadSanitizer on the proxy: the actionloop_proxy library and, through
# its PUBLIC usage requirements, everything that links it (the proxy binary, the unit and
# integration test executables). The launcher and the actions stay uninstrumented: they are
# single-threaded, and `compile` links user actions against the launcher without TSan.
set(ACTIONLOOP_ASAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
                          -fno-omit-frame-pointer)
# The test drivers (the targets of a folder with the directory property ACTIONLOOP_TEST_DRIVERS,
# and of its subfolders: tests/) compile with ASan only. UBSan's checks cost a third of their
# compile time at -O0 (tests/integration/knative_test.cpp: 21 s with, 14 s without), a quarter of
# the ASan build, in code that is not the product. What they test (the proxy, launcher and alert
# libraries and binaries) keeps both, and the drivers link UBSan's runtime for it.
set(ACTIONLOOP_ASAN_DRIVER_FLAGS -fsanitize=address -fno-omit-frame-pointer)

if(ACTIONLOOP_SANITIZE AND ACTIONLOOP_TSAN)
  message(FATAL_ERROR "ACTIONLOOP_SANITIZE (ASan) and ACTIONLOOP_TSAN cannot be combined")
endif()

# actionloop_target_sanitizers(<target> [DRIVER]): ASan + UBSan on <target> when
# ACTIONLOOP_SANITIZE (DRIVER: compiled with ASan only, linked with both).
function(actionloop_target_sanitizers target)
  if(ACTIONLOOP_SANITIZE)
    if("DRIVER" IN_LIST ARGN)
      target_compile_options(${target} PRIVATE ${ACTIONLOOP_ASAN_DRIVER_FLAGS})
    else()
      target_compile_options(${target} PRIVATE ${ACTIONLOOP_ASAN_FLAGS})
    endif()
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE" OR type STREQUAL "SHARED_LIBRARY"
       OR type STREQUAL "MODULE_LIBRARY")
      target_link_options(${target} PRIVATE ${ACTIONLOOP_ASAN_FLAGS})
    endif()
  endif()
endfunction()

# actionloop_sanitize_targets_under(<dir> [DRIVER]): actionloop_target_sanitizers() on every
# compiled target defined in <dir> and its subdirectories, but those with the property
# ACTIONLOOP_NO_SANITIZERS set (the Lambda bootstrap, linked statically); as DRIVERs from a
# folder with ACTIONLOOP_TEST_DRIVERS down.
function(actionloop_sanitize_targets_under dir)
  set(kind ${ARGN})
  get_property(drivers DIRECTORY ${dir} PROPERTY ACTIONLOOP_TEST_DRIVERS)
  if(drivers)
    set(kind DRIVER)
  endif()
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(skip ${target} ACTIONLOOP_NO_SANITIZERS)  # e.g. a static program
    if(skip)
      continue()
    endif()
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      actionloop_target_sanitizers(${target} ${kind})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    actionloop_sanitize_targets_under(${subdir} ${kind})
  endforeach()
endfunction()

# Called once the proxy's targets exist.
function(actionloop_enable_tsan_on_proxy)
  if(ACTIONLOOP_TSAN)
    target_compile_options(actionloop_proxy PUBLIC -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(actionloop_proxy PUBLIC -fsanitize=thread)
  endif()
endfunction()
