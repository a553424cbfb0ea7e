// bootstrap: the program AWS Lambda runs in an OS-only runtime (provided.al2023, provided.al2),
// at the top of the zip lambda-zip makes. Linked statically, so that it needs nothing from the
// system, not even a shell: it finds the task root (task_root.hpp; LAMBDA_TASK_ROOT is set to
// it when it was not), tells the proxy which loader and libraries it runs with
// (ACTIONLOOP_LOADER, ACTIONLOOP_LIBRARY_PATH: the proxy starts the action through the same,
// see proxy/engine/action_command.hpp), and replaces itself
// with `<root>/lib/<loader> --library-path <root>/lib <root>/bin/proxy <its own arguments>`.
// Any failure: one line on stderr, exit status 127 (as a shell's "command not found").
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/task_root.hpp"

namespace {

using namespace actionloop::bootstrap;

int fail(const std::string& why) {
    const std::string line = "bootstrap: " + why + "\n";
    if (::write(2, line.data(), line.size()) < 0) return 127;  // nowhere left to say it
    return 127;
}

// The target of the link /proc/self/exe ("" when it cannot be read: no /proc).
std::string own_file() {
    char path[PATH_MAX];
    const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (length <= 0) return "";
    return std::string(path, static_cast<size_t>(length));
}

std::string working_folder() {
    char path[PATH_MAX];
    return ::getcwd(path, sizeof path) != nullptr ? path : "";
}

}  // namespace

int main(int argc, char** argv) {
    const std::string root = task_root(std::getenv("LAMBDA_TASK_ROOT"), own_file(),
                                       argc > 0 ? argv[0] : nullptr, working_folder());
    if (root.empty()) {
        return fail(
            "cannot find the task root: LAMBDA_TASK_ROOT is not set, /proc/self/exe cannot be "
            "read and argv[0] names no folder");
    }
    const start_plan plan =
        plan_start(root, std::vector<std::string>(argv + (argc > 0 ? 1 : 0), argv + argc));
    if (::access(plan.proxy.c_str(), R_OK) != 0) {
        return fail("no proxy at " + plan.proxy + ": " + std::strerror(errno) + " (the task root " +
                    root + " must hold the zip made by lambda-zip, unpacked whole)");
    }
    // LAMBDA_TASK_ROOT as well, when it was not set (a zip run by hand): the proxy finds the
    // action there, and must find it beside this bootstrap.
    if (::setenv("ACTIONLOOP_LOADER", plan.loader.c_str(), 1) != 0 ||
        ::setenv("ACTIONLOOP_LIBRARY_PATH", plan.library_path.c_str(), 1) != 0 ||
        ::setenv("LAMBDA_TASK_ROOT", root.c_str(), 0) != 0) {
        return fail(std::string("cannot set the environment: ") + std::strerror(errno));
    }
    std::vector<char*> args;
    args.reserve(plan.argv.size() + 1);
    for (const std::string& arg : plan.argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    ::execv(plan.loader.c_str(), args.data());
    return fail("cannot start the loader " + plan.loader + ": " + std::strerror(errno) +
                " (the zip made by lambda-zip holds it in lib/)");
}
