// action_command (engine/action_command.hpp): the action's command line, started directly or,
// in a Lambda zip, through the dynamic loader and library folder its bootstrap named.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/action_command.hpp"
#include "test_util.hpp"

using namespace actionloop;

namespace {

using strings = std::vector<std::string>;

std::optional<bundled_loader> loader_in(const std::map<std::string, std::string>& env) {
    return bundled_loader_from([&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    });
}

}  // namespace

TEST_CASE("action_command: without ACTIONLOOP_LOADER, exec is started directly") {
    CHECK_FALSE(loader_in({}).has_value());
    CHECK_FALSE(loader_in({{"ACTIONLOOP_LOADER", ""}, {"ACTIONLOOP_LIBRARY_PATH", "/l"}}));
    CHECK(action_argv("/a/bin/exec", std::nullopt, true) == strings{"/a/bin/exec"});
}

TEST_CASE("action_command: with ACTIONLOOP_LOADER, an ELF exec starts through the loader") {
    const auto loader = loader_in({{"ACTIONLOOP_LOADER", "/var/task/lib/ld-linux-x86-64.so.2"},
                                   {"ACTIONLOOP_LIBRARY_PATH", "/var/task/lib"}});
    REQUIRE(loader.has_value());
    CHECK(loader->path == "/var/task/lib/ld-linux-x86-64.so.2");
    CHECK(loader->library_path == "/var/task/lib");
    CHECK(action_argv("/var/task/exec", loader, true) ==
          strings{"/var/task/lib/ld-linux-x86-64.so.2", "--library-path", "/var/task/lib",
                  "/var/task/exec"});
}

TEST_CASE("action_command: a loader without a library folder is given no --library-path") {
    const auto loader = loader_in({{"ACTIONLOOP_LOADER", "/l/ld.so"}});
    REQUIRE(loader.has_value());
    CHECK(loader->library_path.empty());
    CHECK(action_argv("/a/exec", loader, true) == strings{"/l/ld.so", "/a/exec"});
}

TEST_CASE("action_command: an exec that is not ELF (a #! script) is started directly") {
    const auto loader =
        loader_in({{"ACTIONLOOP_LOADER", "/l/ld.so"}, {"ACTIONLOOP_LIBRARY_PATH", "/l"}});
    CHECK(action_argv("/a/exec", loader, false) == strings{"/a/exec"});
}

TEST_CASE("action_command: is_elf_file reads the first four bytes only") {
    support::temp_dir dir;
    const auto path = [&dir](const char* name) { return (dir.path() / name).string(); };
    support::write_file(path("elf"), std::string("\x7f"
                                                 "ELF\x02\x01\x01",
                                                 7));
    support::write_file(path("script"), "#!/bin/sh\necho hi\n");
    support::write_file(path("short"), "\x7f"
                                       "EL");
    support::write_file(path("empty"), "");
    CHECK(is_elf_file(path("elf")));
    CHECK_FALSE(is_elf_file(path("script")));
    CHECK_FALSE(is_elf_file(path("short")));
    CHECK_FALSE(is_elf_file(path("empty")));
    CHECK_FALSE(is_elf_file(path("missing")));
    CHECK(is_elf_file("/proc/self/exe"));  // this test, a real ELF program
}
