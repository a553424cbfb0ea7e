// The action's logs and the activation sentinels, through the real proxy: megabytes of logs
// per run never block it, it prints nothing of its own on a clean run, a crash is logged
// (with the signal's name) in the activation that saw it, and a line an action leaves open
// on stderr is ended before the sentinels.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "expectations.hpp"
#include "leak_checks.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::seconds;

TEST_CASE("logs: megabytes of action logs per run never block the proxy, nothing leaks") {
    proxy_process proxy;
    init_with(proxy, "flood.sh");
    size_t fds = 0;
    for (int i = 0; i < 3; ++i) {
        const timed_reply flood = run_timed(proxy, json{{"flood", i}});
        CHECK_REPLY(flood.reply, 200, json{{"flood", i}}.dump() + "\n");
        CHECK(flood.seconds < 20);
        if (i == 0) fds = settled_fds(proxy.pid());  // at rest after a first activation
    }
    CHECK(std::filesystem::file_size(proxy.root() / "proxy.stdout") >= 3U * 5242880U);
    CHECK(std::filesystem::file_size(proxy.root() / "proxy.stderr") >= 3U * 5242880U);
    proxy.check_streams(3);
    check_clean(proxy, fds, 1, 1);
}

TEST_CASE("logs: the proxy prints nothing of its own on a clean run") {
    proxy_process proxy;
    init_with(proxy, "echo.sh");
    CHECK(proxy.run(json{{"a", 1}}).status == 200);
    CHECK(proxy.run(json{{"a", 2}}).status == 200);
    const std::string two = std::string(SENTINEL) + "\n" + SENTINEL + "\n";
    CHECK(wait_until([&] { return proxy.stderr_text().size() >= two.size(); }, seconds(2)));
    CHECK(proxy.stdout_text() == two);
    CHECK(proxy.stderr_text() == two);
}

TEST_CASE("logs: a crash is logged with its signal in the activation that saw it") {
    proxy_process proxy;
    const std::string script =
        "#!/bin/bash\nwhile read line; do\n"
        "  case \"$line\" in *segv*) kill -SEGV $$;; *) echo \"$line\" >&3;; esac\ndone\n";
    REQUIRE(proxy.init(script).status == 200);
    CHECK_ERROR_REPLY(proxy.run(json{{"segv", true}}), 400,
                      "command exited (killed by signal 11, SIGSEGV)");
    const stream_texts logs = proxy.check_streams(1);  // that activation's log, no later run
    CHECK(contains(logs.err, "the action exited during the activation (killed by signal 11 "
                             "(SIGSEGV))"));
    const std::string err = proxy.stderr_text();
    CHECK(err.find("killed by signal 11") < err.find(SENTINEL));
}

// Issue 19 item 25 (the proxy's part): a line a script leaves open on stderr is ended before
// the sentinels the proxy writes after its answer.
TEST_CASE("logs: a script's unterminated stderr line is ended before the sentinels") {
    proxy_process proxy;
    const std::string script =
        "#!/bin/bash\nwhile read line; do printf 'half a line' >&2; echo '{}' >&3; done\n";
    REQUIRE(proxy.init(script).status == 200);
    CHECK_REPLY(proxy.run(json::object()), 200, "{}\n");
    CHECK_REPLY(proxy.run(json::object()), 200, "{}\n");
    proxy.check_streams(2);
    const std::string end = std::string(SENTINEL) + "\n";
    CHECK(proxy.stderr_text() == "half a line\n" + end + "half a line\n" + end);
}
