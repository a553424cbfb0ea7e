// A Lambda zip's bootstrap starts the proxy through the zip's own dynamic loader and says so in
// ACTIONLOOP_LOADER and ACTIONLOOP_LIBRARY_PATH (engine/action_command.hpp): the proxy then
// starts a C++ action through that loader, with that library folder, and a #! script directly.
// Here the loader is this system's own (the one this test program names as its interpreter),
// so the cases run in any build; tests/scripts/lambda_empty_root_test.sh runs the real zip
// where nothing but its own files exists.
#include <doctest/doctest.h>

#include <elf.h>
#include <link.h>

#include <filesystem>
#include <string>
#include <vector>

#include "expectations.hpp"
#include "process_tools.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

namespace {

// What dl_iterate_phdr reports of this program: the loader it names (its PT_INTERP; the first
// object reported is the program itself) and the path of each library it loaded.
struct loaded_objects {
    std::string loader;
    std::vector<std::string> libraries;
};

loaded_objects own_objects() {
    loaded_objects seen;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) -> int {
            auto& objects = *static_cast<loaded_objects*>(out);
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                if (info->dlpi_phdr[i].p_type == PT_INTERP && objects.loader.empty()) {
                    objects.loader =
                        reinterpret_cast<const char*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
                }
            }
            if (info->dlpi_name != nullptr && *info->dlpi_name != '\0') {
                objects.libraries.emplace_back(info->dlpi_name);
            }
            return 0;
        },
        &seen);
    return seen;
}

std::string own_loader() {
    const std::string loader = own_objects().loader;
    REQUIRE_MESSAGE(!loader.empty(), "this test program has no PT_INTERP");
    return std::filesystem::canonical(loader).string();
}

std::filesystem::path own_library(const std::string& soname) {
    for (const std::string& path : own_objects().libraries) {
        if (std::filesystem::path(path).filename() == soname) return path;
    }
    FAIL("this test program loads no " << soname);
    return {};
}

// /proc/PID/cmdline, split at its NULs.
std::vector<std::string> command_line(pid_t pid) {
    const std::string raw = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    std::vector<std::string> args;
    size_t start = 0;
    for (size_t nul = raw.find('\0'); nul != std::string::npos; nul = raw.find('\0', start)) {
        args.push_back(raw.substr(start, nul - start));
        start = nul + 1;
    }
    return args;
}

// The one action process of `proxy`.
pid_t action_pid(const proxy_process& proxy) {
    const std::vector<pid_t> children = proxy.children();
    REQUIRE(children.size() == 1);
    return children.front();
}

}  // namespace

TEST_CASE("bundled loader: a C++ action starts through ACTIONLOOP_LOADER, with its libraries") {
    const std::string loader = own_loader();
    // The library folder holds the action's libstdc++: the action must map it from there.
    temp_dir libs("actionloop-loader-libs");
    std::filesystem::copy_file(std::filesystem::canonical(own_library("libstdc++.so.6")),
                               libs.path() / "libstdc++.so.6");
    proxy_process proxy(cpp_runtime(
        {{"ACTIONLOOP_LOADER", loader}, {"ACTIONLOOP_LIBRARY_PATH", libs.path().string()}}));
    CHECK_REPLY(proxy.init(fixture_text("cpp/hello.cpp")), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"name", "Mike"}}), 200, "{\"greeting\":\"Hello, Mike!\"}\n");

    const pid_t pid = action_pid(proxy);
    const std::vector<std::string> argv = command_line(pid);
    REQUIRE(argv.size() == 4);
    CHECK(argv[0] == loader);
    CHECK(argv[1] == "--library-path");
    CHECK(argv[2] == libs.path().string());
    CHECK(argv[3] == (proxy.cwd() / "action/1/bin/exec").string());
    const std::string maps = read_file("/proc/" + std::to_string(pid) + "/maps");
    CHECK_MESSAGE(contains(maps, (libs.path() / "libstdc++.so.6").string()), maps);
}

TEST_CASE("bundled loader: a #! script action is started directly, by its interpreter") {
    proxy_process proxy(with_env(
        {{"ACTIONLOOP_LOADER", own_loader()}, {"ACTIONLOOP_LIBRARY_PATH", "/nonexistent"}}));
    init_with(proxy, "echo.sh");
    CHECK_REPLY(proxy.run(json{{"name", "Mike"}}), 200, "{\"name\":\"Mike\"}\n");
    const std::vector<std::string> argv = command_line(action_pid(proxy));
    REQUIRE(argv.size() == 2);
    CHECK(argv[0] == "/bin/bash");
    CHECK(argv[1] == (proxy.cwd() / "action/1/bin/exec").string());
}

TEST_CASE("bundled loader: a crash's backtrace still names the action's functions") {
    // Started through the loader, the action's /proc/self/exe is the loader, not exec: the
    // launcher's backtraces must still find exec's symbols.
    proxy_process proxy(cpp_runtime({{"ACTIONLOOP_LOADER", own_loader()}}));
#ifdef ACTIONLOOP_TEST_SANITIZED
    const json env = {{"ACTIONLOOP_CXXFLAGS", "-fno-sanitize=null,integer-divide-by-zero"}};
    REQUIRE(proxy.init(fixture_text("cpp/diagnostics.cpp"), "main", &env).status == 200);
#else
    REQUIRE(proxy.init(fixture_text("cpp/diagnostics.cpp")).status == 200);
#endif
    REQUIRE(command_line(action_pid(proxy)).front() == own_loader());
    CHECK_ERROR_REPLY(proxy.run(json{{"fail", "null"}}), 400,
                      "command exited (killed by signal 11, SIGSEGV)");
    REQUIRE(proxy.wait_for_sentinels(1, std::chrono::seconds(10)));
    const std::string err = proxy.stderr_text();
    CHECK_MESSAGE(contains(err, "backtrace (most recent call first):\n  #0 shop::read_price (0x"),
                  err);
}
