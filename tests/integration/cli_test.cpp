// The command lines: the proxy's flags (-version, -h, -port, -host, -compile, -env) and the
// `compile` script's (--help, its errors in the user's names, the -O levels).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <set>
#include <sstream>

#include "archive_builder.hpp"
#include "expectations.hpp"
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

const std::string COMPILE = std::string(ACTIONLOOP_BINARY_DIR) + "/stage/bin/compile";

const char* const HELLO_CPP =
    "nlohmann::json main(nlohmann::json args) {\n"
    "    return {{\"greeting\", \"Hello, \" + args.value(\"name\", std::string(\"x\"))}};\n"
    "}\n";

// Runs `compile MAIN src bin` in a fresh dir holding `files` under src/.
command_result compile_sources(const std::string& main,
                               const std::vector<std::pair<std::string, std::string>>& files,
                               const temp_dir& cwd, env_map env = path_only_env()) {
    for (const auto& [name, text] : files) {
        fs::create_directories((cwd.path() / "src" / name).parent_path());
        write_file(cwd.path() / "src" / name, text);
    }
    fs::create_directories(cwd.path() / "bin");
    return run_command({COMPILE, main, "src", "bin"}, "", env, cwd.path(),
                       std::chrono::seconds(300));
}

// Whether something accepts a TCP connection on ADDRESS:port.
bool accepts_on(const char* address, int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, address, &addr.sin_addr);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

// The environment variable names `proxy -h` lists (OW_*, ACTIONLOOP_*, SPDLOG_*): lines
// "  NAME <description>". (No <regex>: GCC 12 warns inside it under the sanitizers.)
std::set<std::string> help_variables(const std::string& help) {
    std::set<std::string> names;
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("  ", 0) != 0) continue;
        const std::string name = line.substr(2, line.find(' ', 2) - 2);
        const bool ours = name.rfind("OW_", 0) == 0 || name.rfind("ACTIONLOOP_", 0) == 0 ||
                          name.rfind("SPDLOG_", 0) == 0;
        if (ours && name.size() < line.size() - 2 &&
            name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == std::string::npos) {
            names.insert(name);
        }
    }
    return names;
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

    const command_result listing =
        run_command({"unzip", "-Z", zip.string()}, "", path_only_env(), cwd.path());
    INFO("unzip -Z: " << listing.out);
    CHECK(listing.exit_code == 0);
    CHECK(contains(listing.out, "number of entries: 1"));
    const std::size_t at = listing.out.find("\n-rwxr-xr-x ");
    REQUIRE(at != std::string::npos);
    const std::string entry = listing.out.substr(at + 1, listing.out.find('\n', at + 1) - at - 1);
    CHECK(entry.substr(entry.size() - 5) == " exec");

    const command_result content =
        run_command({"unzip", "-p", zip.string(), "exec"}, "", path_only_env(), cwd.path());
    CHECK(content.out == script);
}

// Issue 41 item 13: `proxy -compile main < hello.cpp > hello.zip` run in a folder leaves only
// the zip there (it used to leave action/1/src/exec and action/1/bin/exec), and nothing in
// TMPDIR, where it builds: on success, with a zip's data file, and on a compile error.
TEST_CASE("cli: -compile builds in a temp folder it removes, on success and on failure") {
    temp_dir cwd;
    temp_dir tmp;
    env_map env = path_only_env();
    env["OW_COMPILER"] = COMPILE;
    env["TMPDIR"] = tmp.path().string();
    const auto entries = [](const fs::path& dir) {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
        return names;
    };
    const command_result hello = proxy_command({"-compile", "main"}, HELLO_CPP, cwd, env);
    CHECK_MESSAGE(hello.exit_code == 0, hello.err);
    CHECK(hello.out.rfind("PK", 0) == 0);
    CHECK(entries(cwd.path()).empty());
    CHECK(entries(tmp.path()).empty());

    const std::string sources =
        make_zip({file_entry("src/hello.cpp", HELLO_CPP), file_entry("data/greeting.txt", "hi")});
    const command_result with_data = proxy_command({"-compile", "main"}, sources, cwd, env);
    REQUIRE_MESSAGE(with_data.exit_code == 0, with_data.err);
    write_file(tmp.path() / "out.zip", with_data.out);
    const command_result data =
        run_command({"unzip", "-p", (tmp.path() / "out.zip").string(), "data/greeting.txt"}, "",
                    path_only_env(), cwd.path());
    CHECK(data.out == "hi");
    fs::remove(tmp.path() / "out.zip");
    CHECK(entries(cwd.path()).empty());
    CHECK(entries(tmp.path()).empty());

    const command_result broken = proxy_command(
        {"-compile", "main"}, "nlohmann::json main(nlohmann::json) { x }\n", cwd, env);
    CHECK(broken.exit_code == 1);
    CHECK(broken.out.empty());
    CHECK_MESSAGE(contains(broken.err, "action.cpp:1:"), broken.err);
    CHECK(entries(cwd.path()).empty());
    CHECK(entries(tmp.path()).empty());
}

TEST_CASE("cli: -compile with empty stdin exits 1 with an error on stderr and no stdout") {
    temp_dir cwd;
    const command_result result = proxy_command({"-compile", "main"}, "", cwd);
    CHECK(result.exit_code == 1);
    CHECK(contains(result.err,
                   "proxy -compile: stdin is empty; give the action on stdin: a source file or a "
                   "zip of sources (built with OW_COMPILER), or an executable, e.g. proxy "
                   "-compile main < main.cpp > action.zip"));
    CHECK(result.out.empty());
}

TEST_CASE("cli: a second proxy on a port already in use exits with an error") {
    proxy_process first;
    temp_dir cwd;
    const command_result second =
        run_command({ACTIONLOOP_PROXY_BIN, "-port", std::to_string(first.port())}, "",
                    path_only_env(), cwd.path(), std::chrono::seconds(5));
    CHECK_FALSE(second.timed_out);  // it did not share the port (no SO_REUSEPORT)
    CHECK(second.exit_code == 1);
    CHECK_MESSAGE(contains(second.err, "cannot listen on 0.0.0.0:" + std::to_string(first.port()) +
                                           ": Address already in use"),
                  second.err);
    CHECK(first.running());
}

namespace {

// The proxy started with `name`=`value` exits 2 and its stderr says `message`.
void check_rejected_setting(const std::string& name, const std::string& value,
                            const std::string& message) {
    temp_dir cwd;
    env_map env = path_only_env();
    env[name] = value;
    const command_result result =
        run_command({ACTIONLOOP_PROXY_BIN}, "", env, cwd.path(), std::chrono::seconds(5));
    CHECK(result.exit_code == 2);
    CHECK_MESSAGE(contains(result.err, message), result.err);
}

}  // namespace

TEST_CASE("cli: OW_LOG_FORMAT takes plain or json, anything else exits 2 and says so") {
    check_rejected_setting("OW_LOG_FORMAT", "xml",
                           "invalid OW_LOG_FORMAT 'xml': use plain (the default) or json");
}

TEST_CASE("cli: OW_SCHED_BATCH takes auto, 1 or 0, anything else exits 2 and says so") {
    check_rejected_setting("OW_SCHED_BATCH", "yes",
                           "invalid OW_SCHED_BATCH 'yes': use auto (the default), 1 or 0");
}

TEST_CASE("cli: a -host that is not an IP address exits 1 and says so") {
    temp_dir cwd;
    const command_result result = run_command({ACTIONLOOP_PROXY_BIN, "-host", "nowhere"}, "",
                                              path_only_env(), cwd.path(), std::chrono::seconds(5));
    CHECK(result.exit_code == 1);
    CHECK_MESSAGE(
        contains(result.err, "cannot listen on nowhere:8080: 'nowhere' is not an IP address"),
        result.err);
}

TEST_CASE("cli: -flag=value and --flag=value, as Go's flag package takes them") {
    temp_dir cwd;
    for (const std::string form : {"-port=", "--port="}) {
        INFO("form: " << form);
        const int port = pick_free_port();
        spawn_spec spec;
        spec.argv = {ACTIONLOOP_PROXY_BIN, form + std::to_string(port), "--host=127.0.0.1"};
        spec.env = path_only_env();
        spec.cwd = cwd.path();
        spec.stdout_file = cwd.path() / "out.txt";
        spec.stderr_file = cwd.path() / "err.txt";
        const pid_t pid = spawn_process(spec);
        bool listening = false;
        for (int i = 0; i < 1000 && !listening; ++i) {
            listening = port_accepts(port);
            if (!listening) ::usleep(10000);
        }
        CHECK(listening);
        CHECK_FALSE(accepts_on("127.0.0.2", port));  // --host=127.0.0.1 was taken too
        terminate_and_reap(pid, std::chrono::seconds(5));
    }
    // A switch takes Go's booleans; a bad value or a missing one is a usage error.
    CHECK(proxy_command({"-version=true"}, "", cwd).exit_code == 0);
    CHECK(proxy_command({"--help=1"}, "", cwd).exit_code == 0);
    const command_result off = proxy_command({"-help=false", "-version"}, "", cwd);
    CHECK(off.exit_code == 0);
    CHECK(off.out.rfind("OpenWhisk ActionLoop Proxy", 0) == 0);
    const command_result bad_switch = proxy_command({"-debug=maybe"}, "", cwd);
    CHECK(bad_switch.exit_code == 2);
    CHECK(contains(bad_switch.err, "invalid boolean value 'maybe' for -debug: true or false"));
    const command_result bad_port = proxy_command({"--port=80x"}, "", cwd);
    CHECK(bad_port.exit_code == 2);
    CHECK(contains(bad_port.err, "invalid -port '80x': a number from 1 to 65535"));
    // '=' and nothing after it is a missing value, for every flag that takes one.
    for (const std::string flag : {"port", "host", "metrics-port", "compile", "env"}) {
        const command_result empty = proxy_command({"--" + flag + "="}, "", cwd);
        CHECK(empty.exit_code == 2);
        CHECK(contains(empty.err, "flag needs an argument: -" + flag + "\nusage: proxy"));
    }
    // Flags are whole words: -hx is no -h (there are no one-letter flags to group).
    CHECK(contains(proxy_command({"-hx"}, "", cwd).err, "unknown flag '-hx'"));
}

TEST_CASE("cli: -h, -help and --help print every flag and variable with its default") {
    temp_dir cwd;
    for (const std::string flag : {"-h", "-help", "--help"}) {
        INFO("flag: " << flag);
        const command_result result = proxy_command({flag}, "", cwd);
        CHECK(result.exit_code == 0);
        CHECK(result.err.empty());
        for (const char* name :
             {"-port N", "-host ADDR", "-debug", "-compile MAIN", "-env JSON", "-version",
              "OW_COMPILER", "OW_SAVE_JAR", "OW_MAX_EXTRACT_BYTES", "OW_HOST",
              "ACTIONLOOP_CXXFLAGS", "[8080]", "[0.0.0.0]", "[1073741824]", "[52428800]"}) {
            CHECK_MESSAGE(contains(result.out, name), name);
        }
        // OW_THREADS is the pool for blocking work (main.cpp: /init, restarts, big
        // single-entrypoint bodies), not HTTP's: that and /run are on the event loop.
        CHECK(contains(result.out, "OW_THREADS             [64] worker threads for what "
                                   "blocks: /init (unpack, compile, start), an action's "
                                   "restart, a large single-entrypoint body; HTTP and /run are "
                                   "served on one event-loop thread\n"));
    }
}

TEST_CASE("cli: the README's settings table has every variable of proxy -h, with its default") {
    temp_dir cwd;
    const std::string help = proxy_command({"-h"}, "", cwd).out;
    const std::string readme = read_file(fs::path(ACTIONLOOP_SOURCE_DIR) / "README.md");
    const std::set<std::string> names = help_variables(help);
    CHECK(names.size() >= 16);
    for (const std::string& name : names) {
        INFO("variable: " << name);
        const std::size_t row = readme.find("\n| `" + name + "` |");
        REQUIRE(row != std::string::npos);
        const std::string line = readme.substr(row + 1, readme.find('\n', row + 1) - row - 1);
        const std::size_t at = help.find("  " + name + " ");
        const std::string help_line = help.substr(at, help.find('\n', at) - at);
        const std::size_t open = help_line.find('[');  // the default, as "[value]"
        const std::size_t close = help_line.find(']', open);
        REQUIRE(open != std::string::npos);
        REQUIRE(close != std::string::npos);
        const std::string fallback = help_line.substr(open + 1, close - open - 1);
        CHECK_MESSAGE(contains(line, "| " + fallback + " |"), line);
    }
}

TEST_CASE("cli: a port out of range or not a number is a usage error, exit status 2") {
    temp_dir cwd;
    for (const std::string port : {"99999", "65536", "0", "-1", "abc", "80x", ""}) {
        INFO("-port '" << port << "'");
        const command_result result = proxy_command({"-port", port}, "", cwd);
        CHECK_FALSE(result.timed_out);
        CHECK(result.exit_code == 2);
        CHECK(contains(result.err, "invalid -port '" + port + "': a number from 1 to 65535"));
        CHECK(contains(result.err, "usage: proxy"));
    }
    const command_result missing = proxy_command({"-port"}, "", cwd);
    CHECK(missing.exit_code == 2);
    CHECK(contains(missing.err, "flag needs an argument: -port"));
}

TEST_CASE("cli: -host and OW_HOST choose the listening address, by default every one") {
    // 127.0.0.2 is another loopback address: a proxy bound to 127.0.0.1 does not answer there.
    proxy_process all;
    CHECK(accepts_on("127.0.0.2", all.port()));
    proxy_options by_flag;
    by_flag.args = {"-host", "127.0.0.1"};
    proxy_process flag(by_flag);
    CHECK(accepts_on("127.0.0.1", flag.port()));
    CHECK_FALSE(accepts_on("127.0.0.2", flag.port()));
    proxy_options by_env;
    by_env.env["OW_HOST"] = "127.0.0.1";
    proxy_process env(by_env);
    CHECK_FALSE(accepts_on("127.0.0.2", env.port()));
    CHECK(accepts_on("127.0.0.1", env.port()));
}

TEST_CASE("cli: -compile of a C++ source without OW_COMPILER fails and says what to set") {
    temp_dir cwd;
    const command_result result = proxy_command({"-compile", "main"}, HELLO_CPP, cwd);
    CHECK(result.exit_code == 1);
    CHECK(result.out.empty());
    CHECK(contains(result.err, "OW_COMPILER is not set"));
}

TEST_CASE("cli: -env that is not a JSON object is a usage error") {
    temp_dir cwd;
    const command_result result =
        proxy_command({"-compile", "main", "-env", "{not json"}, "#!/bin/sh\n", cwd);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(contains(result.err, "-env must be a JSON object"));
}

TEST_CASE(
    "cli: -compile passes ACTIONLOOP_CXXFLAGS from the shell to the compiler, and -env wins") {
    temp_dir cwd;
    // A compiler that builds an action whose exec prints the flags it was given.
    const fs::path compiler = cwd.path() / "flags_compile.sh";
    write_file(
        compiler,
        "#!/bin/bash\nprintf '#!/bin/sh\\necho \"%s\"\\n' \"$ACTIONLOOP_CXXFLAGS\" > $3/exec\n"
        "chmod 755 $3/exec\n",
        fs::perms(0755));
    env_map env = path_only_env();
    env["OW_COMPILER"] = compiler.string();
    env["ACTIONLOOP_CXXFLAGS"] = "-O2";
    auto exec_of = [&](const std::vector<std::string>& args) {
        const command_result result = proxy_command(args, HELLO_CPP, cwd, env);
        REQUIRE_MESSAGE(result.exit_code == 0, result.err);
        write_file(cwd.path() / "out.zip", result.out);
        return run_command({"unzip", "-p", (cwd.path() / "out.zip").string(), "exec"}, "",
                           path_only_env(), cwd.path())
            .out;
    };
    CHECK(exec_of({"-compile", "main"}) == "#!/bin/sh\necho \"-O2\"\n");
    CHECK(exec_of({"-compile", "main", "-env", R"({"ACTIONLOOP_CXXFLAGS":"-O3"})"}) ==
          "#!/bin/sh\necho \"-O3\"\n");
}

TEST_CASE("compile: --help names the program and its arguments") {
    temp_dir cwd;
    for (const std::string flag : {"-h", "--help"}) {
        const command_result result = run_command({COMPILE, flag}, "", path_only_env(), cwd.path());
        CHECK(result.exit_code == 0);
        CHECK(result.out.rfind("usage: compile MAIN SRC_DIR BIN_DIR\n", 0) == 0);
        CHECK(contains(result.out, "ACTIONLOOP_CXXFLAGS"));
    }
    const command_result wrong = run_command({COMPILE, "main"}, "", path_only_env(), cwd.path());
    CHECK(wrong.exit_code == 1);
    CHECK(wrong.out.rfind("usage: compile MAIN SRC_DIR BIN_DIR\n", 0) == 0);
}

TEST_CASE("compile: an entry point missing from the sources is named, before compiling") {
    temp_dir cwd;
    const command_result result = compile_sources("greet", {{"exec", HELLO_CPP}}, cwd);
    CHECK(result.exit_code == 1);
    CHECK(result.out ==
          "compile: no function 'greet' found in the sources; define\n"
          "  nlohmann::json greet(nlohmann::json args)\n"
          "or give the name of your entry point as the action's main (wsk --main NAME)\n");
    CHECK_FALSE(fs::exists(cwd.path() / "bin" / "exec"));
}

TEST_CASE("compile: errors name the user's files and functions, not the build's") {
    temp_dir single;
    const command_result one = compile_sources(
        "greet",
        {{"exec", "nlohmann::json greet(nlohmann::json args) {\n  return args.nope();\n}\n"}},
        single);
    CHECK(one.exit_code == 1);
    INFO("single file: " << one.out);
    CHECK(contains(one.out, "action.cpp:2:"));
    CHECK(contains(one.out, "greet("));
    for (const char* build_name : {"src/exec", "actionloop_main", "json_abi_v", ".entry.h"}) {
        CHECK_MESSAGE(!contains(one.out, build_name), build_name);
    }
    temp_dir zip;
    const command_result many = compile_sources(
        "main",
        {{"main.cpp", "#include \"lib/util.hpp\"\nnlohmann::json main(nlohmann::json a) {\n"
                      "  return util(a);\n}\n"},
         {"lib/util.hpp", "nlohmann::json util(nlohmann::json a);\n"},
         {"lib/util.cpp", "#include \"util.hpp\"\nnlohmann::json util(nlohmann::json a) {\n"
                          "  return a.missing_member;\n}\n"}},
        zip);
    CHECK(many.exit_code == 1);
    INFO("zip: " << many.out);
    CHECK(contains(many.out, "lib/util.cpp:3:"));
    CHECK_FALSE(contains(many.out, "src/lib"));
    CHECK_FALSE(contains(many.out, "json_abi_v"));
}

TEST_CASE("compile: ACTIONLOOP_CXXFLAGS=-O2 and -O3 build and run (the -O1 PCH is not used)") {
#ifdef ACTIONLOOP_TEST_SANITIZED
    // compile adds the sanitizer's flags there, which no per-level header was built with.
    skip_test("the per-level precompiled headers are checked in the plain build");
    return;
#endif
    for (const std::string level : {"-O2", "-O3"}) {
        INFO("ACTIONLOOP_CXXFLAGS=" << level);
        proxy_process proxy(cpp_runtime());
        const nlohmann::json env = {
            {"ACTIONLOOP_CXXFLAGS", level + " -Winvalid-pch -Werror=invalid-pch"}};
        CHECK_REPLY(proxy.init(HELLO_CPP, "main", &env), 200, OK_BODY);
        CHECK_REPLY(proxy.run(nlohmann::json{{"name", "O"}}), 200, "{\"greeting\":\"Hello, O\"}\n");
    }
}
