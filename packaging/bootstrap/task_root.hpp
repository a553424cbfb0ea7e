// What the Lambda bootstrap (bootstrap.cpp) starts, as pure functions of what it reads: the task
// root (where the zip was unpacked) and the command line that starts the proxy through the
// zip's own dynamic loader.
#pragma once

#include <string>
#include <vector>

namespace actionloop::bootstrap {

/// The glibc dynamic loader of this architecture, by the file name the programs and libc.so.6
/// ask for (their PT_INTERP, and libc's DT_NEEDED). lambda-zip copies the proxy's loader into
/// lib/ under this name (its check that the packaged bootstrap starts the proxy fails
/// otherwise). Lambda runs x86_64 and arm64 only.
#if defined(ACTIONLOOP_LOADER_NAME)
inline constexpr const char* LOADER_NAME = ACTIONLOOP_LOADER_NAME;
#elif defined(__x86_64__)
inline constexpr const char* LOADER_NAME = "ld-linux-x86-64.so.2";
#elif defined(__aarch64__)
inline constexpr const char* LOADER_NAME = "ld-linux-aarch64.so.1";
#else
#error \
    "the Lambda bootstrap knows the loader of x86_64 and aarch64 only: -DACTIONLOOP_LOADER_NAME=..."
#endif

/// `path` without its last component ("/var/task/bootstrap" → "/var/task", "/bootstrap" →
/// "/"); "" when `path` has no '/'.
std::string folder_of(const std::string& path);

/// `path` made absolute against `cwd` (when relative and `cwd` is not empty), without
/// trailing slashes ("/" stays "/").
std::string absolute(const std::string& path, const std::string& cwd);

/// The task root, from the first of these that gives one: LAMBDA_TASK_ROOT (`lambda_task_root`,
/// null when unset; "" counts as unset), the folder of the bootstrap's own file (`self_exe`,
/// /proc/self/exe's target, "" when it cannot be read), the folder of `argv0` (when it has a
/// '/'); made absolute against `cwd`. "" when none does.
std::string task_root(const char* lambda_task_root, const std::string& self_exe, const char* argv0,
                      const std::string& cwd);

/// How the proxy is started.
struct start_plan {
    std::string loader;        // <root>/lib/LOADER_NAME: what is executed
    std::string library_path;  // <root>/lib
    std::string proxy;         // <root>/bin/proxy
    /// {loader, "--library-path", library_path, proxy, args...}
    std::vector<std::string> argv;
};

/// The plan for the task root `root`, passing `args` (the bootstrap's own, after argv[0]) on.
start_plan plan_start(const std::string& root, const std::vector<std::string>& args);

}  // namespace actionloop::bootstrap
