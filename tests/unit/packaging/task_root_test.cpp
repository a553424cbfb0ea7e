// The Lambda bootstrap's pure part (packaging/bootstrap/task_root.hpp): where the zip was
// unpacked, and the command line that starts the proxy through the zip's loader.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "bootstrap/task_root.hpp"
#include "test_util.hpp"

using namespace actionloop::bootstrap;

TEST_CASE("bootstrap: folder_of and absolute") {
    CHECK(folder_of("/var/task/bootstrap") == "/var/task");
    CHECK(folder_of("/bootstrap") == "/");
    CHECK(folder_of("./bootstrap") == ".");
    CHECK(folder_of("bootstrap") == "");
    CHECK(absolute("/var/task/", "/x") == "/var/task");
    CHECK(absolute("task", "/home/me") == "/home/me/task");
    CHECK(absolute(".", "/home/me/") == "/home/me/.");
    CHECK(absolute("task", "") == "task");
    CHECK(absolute("/", "/x") == "/");
}

TEST_CASE("bootstrap: the task root is LAMBDA_TASK_ROOT first, then the bootstrap's folder") {
    CHECK(task_root("/var/task", "/opt/bootstrap", "/opt/bootstrap", "/") == "/var/task");
    CHECK(task_root("/var/task/", "", nullptr, "/") == "/var/task");
    CHECK(task_root("rel", "", nullptr, "/work") == "/work/rel");
    // Unset or empty: the folder of /proc/self/exe's target, then of argv[0].
    CHECK(task_root(nullptr, "/opt/fn/bootstrap", "/elsewhere/bootstrap", "/") == "/opt/fn");
    CHECK(task_root("", "/opt/fn/bootstrap", nullptr, "/") == "/opt/fn");
    CHECK(task_root(nullptr, "", "/opt/fn/bootstrap", "/") == "/opt/fn");
    CHECK(task_root(nullptr, "", "./bootstrap", "/srv/fn") == "/srv/fn/.");
    CHECK(task_root(nullptr, "/bootstrap", nullptr, "/") == "/");
    // None: argv[0] without a folder (found on PATH), or no argv[0] at all.
    CHECK(task_root(nullptr, "", "bootstrap", "/") == "");
    CHECK(task_root(nullptr, "", nullptr, "/") == "");
}

TEST_CASE("bootstrap: the proxy starts through the zip's loader, with the arguments passed on") {
    const std::string loader = std::string("/var/task/lib/") + LOADER_NAME;
    const start_plan plan = plan_start("/var/task", {"-version"});
    CHECK(plan.loader == loader);
    CHECK(plan.library_path == "/var/task/lib");
    CHECK(plan.proxy == "/var/task/bin/proxy");
    CHECK(plan.argv == std::vector<std::string>{loader, "--library-path", "/var/task/lib",
                                                "/var/task/bin/proxy", "-version"});
    CHECK(plan_start("/", {}).argv == std::vector<std::string>{std::string("/lib/") + LOADER_NAME,
                                                               "--library-path", "/lib",
                                                               "/bin/proxy"});
}

TEST_CASE("bootstrap: the loader's name is the one this system's programs ask for") {
    // What lambda-zip copies into lib/ is the proxy's PT_INTERP: on this architecture, the
    // loader this test program was started by has the same file name.
    const std::string maps = support::read_file("/proc/self/maps");
    CHECK_MESSAGE(maps.find(std::string("/") + LOADER_NAME + "\n") != std::string::npos, maps);
}
