// The proxy's command line: -version and the offline -compile mode, as upstream's proxy.
#include <doctest/doctest.h>

#include "process_tools.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;

namespace {

command_result proxy_command(const std::vector<std::string>& args, const std::string& input,
                             const temp_dir& cwd, env_map env = path_only_env()) {
    std::vector<std::string> argv{ACTIONLOOP_PROXY_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, input, env, cwd.path(), std::chrono::seconds(120));
}

}  // namespace

TEST_CASE("cli: -version prints one line and exits 0") {
    temp_dir cwd;
    for (const std::string flag : {"-version", "--version"}) {
        INFO("flag: " << flag);
        const command_result result = proxy_command({flag}, "", cwd);
        CHECK(result.exit_code == 0);
        CHECK(result.out.rfind("OpenWhisk ActionLoop Proxy", 0) == 0);
        CHECK(count_occurrences(result.out, "\n") == 1);
        CHECK(result.out.back() == '\n');
    }
}

TEST_CASE("cli: -compile main turns a script on stdin into a zip with one 0755 exec") {
    temp_dir cwd;
    const std::string script = "#!/bin/bash\nwhile read line\ndo echo '{}' >&3\ndone\n";
    const command_result result = proxy_command({"-compile", "main"}, script, cwd);
    REQUIRE_MESSAGE(result.exit_code == 0, result.err);
    REQUIRE(result.out.rfind("PK", 0) == 0);
    const auto zip = cwd.path() / "main.zip";
    write_file(zip, result.out);

    const command_result listing = run_command({"unzip", "-Z", zip.string()}, "",
                                               path_only_env(), cwd.path());
    INFO("unzip -Z: " << listing.out);
    CHECK(listing.exit_code == 0);
    CHECK(contains(listing.out, "number of entries: 1"));
    const std::size_t at = listing.out.find("\n-rwxr-xr-x ");
    REQUIRE(at != std::string::npos);
    const std::string entry = listing.out.substr(at + 1, listing.out.find('\n', at + 1) - at - 1);
    CHECK(entry.substr(entry.size() - 5) == " exec");

    const command_result content = run_command({"unzip", "-p", zip.string(), "exec"}, "",
                                               path_only_env(), cwd.path());
    CHECK(content.out == script);
}

TEST_CASE("cli: -compile with empty stdin exits 1 with an error on stderr and no stdout") {
    temp_dir cwd;
    const command_result result = proxy_command({"-compile", "main"}, "", cwd);
    CHECK(result.exit_code == 1);
    CHECK_FALSE(trim(result.err).empty());
    CHECK(result.out.empty());
}

TEST_CASE("cli: a second proxy on a port already in use exits with an error") {
    proxy_process first;
    temp_dir cwd;
    const command_result second = run_command(
        {ACTIONLOOP_PROXY_BIN, "-port", std::to_string(first.port())}, "", path_only_env(),
        cwd.path(), std::chrono::seconds(5));
    CHECK_FALSE(second.timed_out);  // it did not share the port (no SO_REUSEPORT)
    CHECK(second.exit_code != 0);
    CHECK(first.running());
}
