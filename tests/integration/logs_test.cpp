// The action's logs and the activation sentinels, through the real proxy: megabytes of logs
// per run never block it, it prints nothing of its own on a clean run, a crash is logged
// (with the signal's name) in the activation that saw it, and a line an action leaves open
// on stderr is ended before the sentinels.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

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
    // The action's lines may trail its answer (output_pipe.hpp): megabytes of them, under
    // ThreadSanitizer, by more than a moment (CI saw stderr a megabyte short at the answer).
    CHECK(proxy.wait_for_sentinels(3, seconds(60)));
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
    CHECK(wait_until(
        [&] {
            return proxy.stderr_text().size() >= two.size() &&
                   proxy.stdout_text().size() >= two.size();
        },
        seconds(2)));
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

// --- OW_LOG_FORMAT=json ---

namespace {

// The JSON records of one stream (sentinel lines skipped; every other line must parse).
std::vector<json> records_of(const std::string& text) {
    std::vector<json> records;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        start = end + 1;
        if (line == SENTINEL) continue;
        json record = json::parse(line, nullptr, false);
        CHECK_MESSAGE(record.is_object(), "not a JSON record: " << line);
        if (record.is_object()) records.push_back(std::move(record));
    }
    return records;
}

size_t count_of(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("logs: OW_LOG_FORMAT=json tags each line of 64 pipelined activations with its own id") {
    proxy_process proxy(cpp_runtime({{"OW_LOG_FORMAT", "json"}}));
    REQUIRE(proxy.init(fixture_text("cpp/pipeline.cpp")).status == 200);
    constexpr int RUNS = 64;
    std::vector<std::future<http_reply>> replies;
    for (int n = 0; n < RUNS; ++n) {
        replies.push_back(std::async(std::launch::async, [&proxy, n] {
            const json context = {{"activation_id", "act-" + std::to_string(n)},
                                  {"transaction_id", "tx-" + std::to_string(n)},
                                  {"action_name", "/guest/pipeline"}};
            return proxy.run(json{{"n", n}}, context, seconds(60));
        }));
    }
    for (auto& reply : replies) CHECK(reply.get().status == 200);
    proxy.wait_for_sentinels(RUNS, seconds(5));  // the last lines may trail the answers
    const std::string end = std::string(SENTINEL) + "\n";
    for (const char* stream : {"stdout", "stderr"}) {
        CAPTURE(stream);
        const std::string text =
            std::string(stream) == "stdout" ? proxy.stdout_text() : proxy.stderr_text();
        CHECK(count_of(text, end) == RUNS);
        const std::vector<json> records = records_of(text);
        REQUIRE(records.size() == RUNS);
        for (const json& r : records) {
            const std::string message = r.value("message", "");
            REQUIRE(message.rfind("n=", 0) == 0);
            const std::string n = message.substr(2);
            CHECK(r["activationId"] == "act-" + n);
            CHECK(r["transactionId"] == "tx-" + n);
            CHECK(r["action"] == "/guest/pipeline");
            CHECK(r["stream"] == stream);
            CHECK(r["time"].get<std::string>().size() == 24);  // 2026-12-02T10:22:22.123Z
        }
    }
}

TEST_CASE("logs: OW_LOG_FORMAT=json keeps JSON lines as objects, cuts long lines, logs the proxy's "
          "own lines") {
    proxy_process proxy(with_env({{"OW_LOG_FORMAT", "json"}, {"OW_LOG_LINE_BYTES", "100"}}));
    const std::string script = "#!/bin/bash\nwhile read line; do\n"
                               "  case \"$line\" in *segv*) kill -SEGV $$;; esac\n"
                               "  echo '{\"alertDelay\": 1250, \"type\": \"Online\"}'\n"
                               "  printf '%0120d\\n' 7 >&2\n"
                               "  echo -n 'open' >&2\n"
                               "  echo '{\"ok\":true}' >&3\n"
                               "done\n";
    REQUIRE(proxy.init(script).status == 200);
    CHECK(proxy.run(json::object(), json{{"activation_id", "a1"}}).status == 200);
    CHECK(proxy.run(json{{"segv", true}}, json{{"activation_id", "a2"}}).status == 400);
    CHECK(proxy.wait_for_sentinels(2, seconds(5)));  // both streams forwarded (output_pipe)
    const std::vector<json> out = records_of(proxy.stdout_text());
    REQUIRE(out.size() == 1);
    CHECK(out[0]["message"] == json{{"alertDelay", 1250}, {"type", "Online"}});
    CHECK(out[0]["activationId"] == "a1");
    const std::vector<json> err = records_of(proxy.stderr_text());
    REQUIRE(err.size() == 3);
    CHECK(err[0]["message"] == std::string(100, '0'));  // 119 zeros and a 7: cut at 100
    CHECK(err[0]["truncated"] == 20);
    CHECK(err[1]["message"] == "open");  // ended before the sentinels, as its own record
    CHECK(err[1]["activationId"] == "a1");
    // The crash: the proxy's own line, as a record of the proxy, before a2's sentinel.
    CHECK(err[2]["stream"] == "proxy");
    CHECK(err[2]["level"] == "warning");
    CHECK(contains(err[2]["message"].get<std::string>(), "killed by signal 11"));
}

TEST_CASE("logs: OW_LOG_FORMAT=json: the proxy's records about one activation name it") {
    // A crash, OW_RUN_TIMEOUT_MS, a missed deadline, an oversized answer: each verdict is a
    // record of the proxy's that a search by activationId (and transactionId) finds.
    proxy_process proxy(with_env(
        {{"OW_LOG_FORMAT", "json"}, {"OW_RUN_TIMEOUT_MS", "500"}, {"OW_MAX_ANSWER_BYTES", "100"}}));
    const std::string script = "#!/bin/bash\nwhile read line; do\n"
                               "  case \"$line\" in\n"
                               "    *segv*) kill -SEGV $$;;\n"
                               "    *hang*) sleep 30;;\n"
                               "    *big*) printf '{\"a\":\"%0200d\"}\\n' 7 >&3; continue;;\n"
                               "  esac\n"
                               "  echo '{\"ok\":true}' >&3\n"
                               "done\n";
    REQUIRE(proxy.init(script).status == 200);
    const auto run = [&](const std::string& what, const std::string& id, json extra = {}) {
        extra["activation_id"] = id;
        extra["transaction_id"] = "tx-" + id;
        extra["action_name"] = "/guest/verdicts";
        return proxy.run(json{{what, true}}, extra).status;
    };
    CHECK(run("segv", "a-crash") == 400);
    CHECK(run("hang", "a-timeout") == 502);
    const auto soon = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch() + std::chrono::milliseconds(300));
    CHECK(run("hang", "a-deadline", json{{"deadline", std::to_string(soon.count())}}) == 502);
    CHECK(run("big", "a-big") == 502);
    CHECK(proxy.wait_for_sentinels(4, seconds(5)));
    const std::vector<json> err = records_of(proxy.stderr_text());
    const auto record_with = [&](const std::string& text) {
        for (const json& r : err) {
            if (r.value("stream", "") == "proxy" && contains(r.value("message", ""), text)) {
                return r;
            }
        }
        FAIL("no proxy record with '" << text << "' in:\n" << proxy.stderr_text());
        return json();
    };
    const std::vector<std::pair<std::string, std::string>> verdicts = {
        {"the action exited during the activation (killed by signal 11", "a-crash"},
        {"the action ran longer than OW_RUN_TIMEOUT_MS (500 ms)", "a-timeout"},
        {"the action missed its deadline", "a-deadline"},
        {"the action's answer passed 100 bytes", "a-big"}};
    for (const auto& [text, id] : verdicts) {
        CAPTURE(text);
        const json r = record_with(text);
        CHECK(r["activationId"] == id);
        CHECK(r["transactionId"] == "tx-" + id);
        CHECK(r["action"] == "/guest/verdicts");
        CHECK(r["level"] == "warning");
    }
}
