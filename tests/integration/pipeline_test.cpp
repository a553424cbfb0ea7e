// Pipelining (proxy/engine/engine.hpp): with the ack, the proxy offers it and the C++ launcher
// accepts; concurrent /runs are then written to the action without waiting for each other.
// What users see must not change: every /run gets its own answer, each activation's logs sit
// between its own sentinels, a crash or a missed deadline costs only the activation being
// served, and OW_PIPELINE=0 turns it off.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <thread>

#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr auto NO_HANG = seconds(60);
const std::string SENTINEL = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX\n";

void init_action(proxy_process& proxy) {
    REQUIRE(proxy.init(fixture_text("cpp/pipeline.cpp")).status == 200);
}

// The text between consecutive sentinels of one stream.
std::vector<std::string> activations_of(const std::string& stream) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t at; (at = stream.find(SENTINEL, start)) != std::string::npos;
         start = at + SENTINEL.size()) {
        parts.push_back(stream.substr(start, at - start));
    }
    return parts;
}

// `count` concurrent runs of {"n": first + i} (plus `extra` fields), started together.
std::vector<std::future<http_reply>> run_many(const proxy_process& proxy, int first, int count,
                                              const json& extra = json::object()) {
    std::vector<std::future<http_reply>> replies;
    for (int i = 0; i < count; ++i) {
        json value = extra;
        value["n"] = first + i;
        replies.push_back(std::async(std::launch::async, [&proxy, value] {
            return proxy.run(value, json::object(), NO_HANG);
        }));
    }
    return replies;
}

// Each reply is 200 with its own n; returns the pids that answered.
std::set<long> check_own_answers(std::vector<std::future<http_reply>>& replies, int first) {
    std::set<long> pids;
    for (size_t i = 0; i < replies.size(); ++i) {
        const http_reply reply = replies[i].get();
        CHECK_MESSAGE(reply.status == 200, reply.body);
        const json answer = json_of(reply);
        CHECK(answer.value("n", -1) == first + static_cast<int>(i));
        pids.insert(answer.value("pid", 0L));
    }
    return pids;
}

// The proxy's own log lines (warnings about restarts) taken out of a segment.
std::string without_proxy_lines(const std::string& text) {
    std::string kept;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        end = end == std::string::npos ? text.size() : end + 1;
        const std::string line = text.substr(start, end - start);
        if (line.find(" [warning] ") == std::string::npos) kept += line;
        start = end;
    }
    return kept;
}

// Every activation's segment of both streams holds exactly its own "n=N" line.
void check_log_segments(const proxy_process& proxy, size_t expected,
                        const std::set<std::string>& allowed_empty = {}) {
    proxy.check_streams(expected);
    for (const std::string& stream : {proxy.stdout_text(), proxy.stderr_text()}) {
        std::set<std::string> seen;
        for (std::string part : activations_of(stream)) {
            part = without_proxy_lines(part);
            if (part.empty()) {
                CHECK_MESSAGE(!allowed_empty.empty(), "an activation without its log line");
                continue;
            }
            // A crashed activation's stderr: the launcher's crash report (docs/SDK.md).
            if (part.rfind("actionloop: the action crashed: ", 0) == 0) {
                CHECK_MESSAGE(allowed_empty.count("crash") == 1, part);
                CHECK_MESSAGE(contains(part, "\nbacktrace (most recent call first):\n"), part);
                continue;
            }
            CHECK_MESSAGE(part.rfind("n=", 0) == 0, part);
            CHECK_MESSAGE(std::count(part.begin(), part.end(), '\n') == 1, part);
            CHECK_MESSAGE(seen.insert(part).second, "twice: " << part);
        }
    }
}

}  // namespace

TEST_CASE("pipeline: 64 concurrent runs each get their own answer, logs between their sentinels") {
    proxy_process proxy(cpp_runtime());
    init_action(proxy);
    std::vector<std::future<http_reply>> replies = run_many(proxy, 0, 64);
    const std::set<long> pids = check_own_answers(replies, 0);
    CHECK(pids.size() == 1);  // one warm process served them all
    CHECK(json_of(proxy.run(json{{"n", 64}})).value("offer", "") == "1");
    check_log_segments(proxy, 65);
}

TEST_CASE("pipeline: big and small requests mixed, more than the pipe holds, all answered") {
    proxy_process proxy(cpp_runtime());
    init_action(proxy);
    std::vector<std::future<http_reply>> replies;
    for (int i = 0; i < 24; ++i) {
        // Every fourth is 3 MB (bigger than the 1 MiB stdin pipe): those go alone.
        const size_t pad = i % 4 == 0 ? (3u << 20) : static_cast<size_t>(i) * 1000;
        json value{{"n", i}, {"pad", std::string(pad, 'p')}};
        replies.push_back(std::async(std::launch::async, [&proxy, value] {
            return proxy.run(value, json::object(), NO_HANG);
        }));
    }
    check_own_answers(replies, 0);
    check_log_segments(proxy, 24);
}

TEST_CASE("pipeline: a crash fails only the activation being served, the queued ones are sent "
          "again to the restarted process") {
    proxy_process proxy(cpp_runtime());
    init_action(proxy);
    const long first_pid = json_of(proxy.run(json{{"n", -10}})).value("pid", 0L);
    temp_dir scratch;
    const std::string started = (scratch.path() / "started").string();
    auto crash = std::async(std::launch::async, [&proxy, started] {
        return proxy.run(json{{"n", -1}, {"sleep_ms", 400}, {"crash", true}, {"started", started}},
                         json::object(), NO_HANG);
    });
    // The crash is being served before the others arrive.
    REQUIRE(wait_until([&] { return fs::exists(started); }, milliseconds(10000)));
    std::vector<std::future<http_reply>> replies = run_many(proxy, 0, 16);
    CHECK_ERROR_REPLY(crash.get(), 400, "command exited (killed by signal 6, SIGABRT)");
    const std::set<long> pids = check_own_answers(replies, 0);
    CHECK(pids.size() == 1);
    CHECK(pids.count(first_pid) == 0);  // answered by the restarted process
    check_log_segments(proxy, 18, {"crash"});
    CHECK(proxy.children().size() == 1);
}

TEST_CASE("pipeline: a missed deadline stops the process, the queued runs are answered") {
    proxy_process proxy(cpp_runtime());
    init_action(proxy);
    const std::string deadline = std::to_string(epoch_millis() + 300);
    temp_dir scratch;
    const std::string started = (scratch.path() / "started").string();
    auto slow = std::async(std::launch::async, [&proxy, deadline, started] {
        return proxy.run(json{{"n", -1}, {"sleep_ms", 20000}, {"started", started}},
                         json{{"deadline", deadline}}, NO_HANG);
    });
    REQUIRE(wait_until([&] { return fs::exists(started); }, milliseconds(10000)));
    std::vector<std::future<http_reply>> replies = run_many(proxy, 0, 8);
    CHECK_ERROR_REPLY(slow.get(), 502,
                      "The action did not answer before its deadline and was stopped.");
    check_own_answers(replies, 0);
    check_log_segments(proxy, 9, {"deadline"});
    CHECK(proxy.children().size() == 1);
}

TEST_CASE("pipeline: OW_PIPELINE=0 serves one activation at a time, without the offer") {
    proxy_process proxy(cpp_runtime({{"OW_PIPELINE", "0"}}));
    init_action(proxy);
    std::vector<std::future<http_reply>> replies = run_many(proxy, 0, 16);
    check_own_answers(replies, 0);
    CHECK(json_of(proxy.run(json{{"n", 16}})).value("offer", "?") == "");
    check_log_segments(proxy, 17);
}

// OW_SCHED_BATCH=1 (main.cpp): the action the proxy starts inherits SCHED_BATCH (policy 3 in
// /proc/<pid>/stat's 41st field), even a window of one; OW_SCHED_BATCH=0 never switches.
TEST_CASE("pipeline: OW_SCHED_BATCH=1 runs every action under SCHED_BATCH, 0 never") {
    const std::string script = "#!/bin/bash\nwhile read line; do\n"
                               "  policy=$(cut -d' ' -f41 /proc/$$/stat)\n"
                               "  echo \"{\\\"policy\\\":$policy}\" >&3\n"
                               "done\n";
    for (const bool batch : {false, true}) {
        CAPTURE(batch);
        proxy_process proxy(with_env(env_map{{"OW_SCHED_BATCH", batch ? "1" : "0"}}));
        REQUIRE(proxy.init(script).status == 200);
        CHECK_REPLY(proxy.run(json::object()), 200,
                    batch ? "{\"policy\":3}\n" : "{\"policy\":0}\n");
    }
}

namespace {

// The policy of the proxy's event loop (its main thread) from /proc: 0 or 3.
int loop_policy(const proxy_process& proxy) {
    std::ifstream stat("/proc/" + std::to_string(proxy.pid()) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));  // field 3 onwards
    std::string field;
    for (int i = 3; i <= 41 && fields >> field; ++i) {
    }
    return std::stoi(field);
}

// One activation held in the action while 8 more queue behind it: the write of those leaves
// them in flight together. Returns the policy of the lone run that follows them.
int overlapped_policy(proxy_process& proxy, int first) {
    temp_dir scratch;
    const std::string started = (scratch.path() / "started").string();
    auto slow = std::async(std::launch::async, [&proxy, first, started] {
        return proxy.run(json{{"n", first}, {"sleep_ms", 300}, {"started", started}},
                         json::object(), NO_HANG);
    });
    REQUIRE(wait_until([&] { return fs::exists(started); }, milliseconds(10000)));
    std::vector<std::future<http_reply>> replies = run_many(proxy, first + 1, 8);
    CHECK(json_of(slow.get()).value("n", -1) == first);
    check_own_answers(replies, first + 1);
    return json_of(proxy.run(json{{"n", first + 9}})).value("policy", -1);
}

}  // namespace

// The default (auto, engine/batch_scheduling.hpp): the action and the loop switch to
// SCHED_BATCH while activations overlap, and back once 64 writes in a row left one in flight.
TEST_CASE("pipeline: by default the action runs under SCHED_BATCH while activations overlap") {
    proxy_process proxy(cpp_runtime());
    init_action(proxy);
    CHECK(json_of(proxy.run(json{{"n", 0}})).value("policy", -1) == 0);
    CHECK(loop_policy(proxy) == 0);
    CHECK(overlapped_policy(proxy, 1) == 3);
    CHECK(loop_policy(proxy) == 3);
    int policy = -1;
    // The 64th write switches (the action may answer it before); the writes after it find
    // the default policy.
    for (int n = 0; n < 70; ++n) policy = json_of(proxy.run(json{{"n", n}})).value("policy", -1);
    CHECK(policy == 0);
    CHECK(loop_policy(proxy) == 0);
    CHECK(overlapped_policy(proxy, 100) == 3);  // and again
}

TEST_CASE("pipeline: OW_SCHED_BATCH=0 keeps overlapping activations under SCHED_OTHER") {
    proxy_process proxy(cpp_runtime({{"OW_SCHED_BATCH", "0"}}));
    init_action(proxy);
    CHECK(overlapped_policy(proxy, 1) == 0);
    CHECK(loop_policy(proxy) == 0);
}
