// Issue 41, item 3: ctx.time_left() is the bound the proxy applies to the /run, whatever the
// request's `deadline` (docs/protocol.md, "/run": "The bound of a /run"): the platform's
// deadline when it is in the future; OW_RUN_TIMEOUT_MS from the request's arrival when it is
// missing, already passed or out of range; in single-entrypoint mode never more than
// OW_RUN_TIMEOUT_MS. An action that outlives time_left() is stopped there (502).
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "process_tools.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;

namespace {

constexpr long long BOUND_MS = 1500;  // OW_RUN_TIMEOUT_MS of these proxies
const std::string BOUND = std::to_string(BOUND_MS);

// tests/fixtures/cpp/time_left.cpp, compiled once (`proxy -compile`), as base64 for /init.
const std::string& time_left_zip() {
    static const std::string zip = [] {
        temp_dir cwd;
        env_map env = path_only_env();
        env["OW_COMPILER"] = compiler_script().string();
        const command_result compiled =
            run_command({ACTIONLOOP_PROXY_BIN, "-compile", "main"},
                        fixture_text("cpp/time_left.cpp"), env, cwd.path());
        REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.err);
        return base64_encode(compiled.out);
    }();
    return zip;
}

long long epoch_ms_in(milliseconds from_now) {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch() + from_now).count();
}

// The ms_left the action reports for a /run with these context members.
long long ms_left_of(const proxy_process& proxy, const json& extra) {
    const http_reply reply = proxy.run(json::object(), extra);
    REQUIRE_MESSAGE(reply.status == 200, reply.body);
    return json_of(reply).at("ms_left").get<long long>();
}

// A classic proxy with the time_left action, OW_RUN_TIMEOUT_MS=BOUND.
struct classic_proxy {
    proxy_process proxy{cpp_runtime({{"OW_RUN_TIMEOUT_MS", BOUND}})};
    classic_proxy() { REQUIRE(proxy.init(time_left_zip(), "main").status == 200); }
};

// time_left() is OW_RUN_TIMEOUT_MS less the few milliseconds the request took to arrive.
void check_is_the_run_timeout(long long ms_left) {
    CHECK(ms_left > BOUND_MS - 1000);
    CHECK(ms_left <= BOUND_MS);
}

// An action that sleeps past its time_left() is stopped with `error` about when time_left()
// said, not later.
void check_stopped_at_time_left(const proxy_process& proxy, const json& extra,
                                const std::string& error, milliseconds time_left) {
    const auto start = steady::now();
    const http_reply reply = proxy.run(json{{"outlive", true}}, extra);
    const auto took = std::chrono::duration_cast<milliseconds>(steady::now() - start);
    CHECK(reply.status == 502);
    CHECK(json_of(reply) == json{{"error", error}});
    CHECK(took >= time_left);
    CHECK(took < time_left + milliseconds(1500));  // long before the action's extra 400 ms end
}

std::string run_timeout_error(const std::string& why) {
    return "The action did not answer within OW_RUN_TIMEOUT_MS (" + BOUND + " ms; " + why +
           ") and was stopped.";
}

}  // namespace

TEST_CASE("time_left: without a deadline it is OW_RUN_TIMEOUT_MS, where the proxy stops it") {
    classic_proxy c;
    check_is_the_run_timeout(ms_left_of(c.proxy, json::object()));
    check_stopped_at_time_left(c.proxy, json::object(),
                               run_timeout_error("the request had no deadline"),
                               milliseconds(BOUND_MS - 100));
}

TEST_CASE("time_left: a deadline already passed gets OW_RUN_TIMEOUT_MS, not zero, and runs") {
    classic_proxy c;
    // Upstream's own test sends "123": the action runs and sees that deadline as sent.
    const json passed = {{"deadline", "123"}};
    check_is_the_run_timeout(ms_left_of(c.proxy, passed));
    check_is_the_run_timeout(
        ms_left_of(c.proxy, json{{"deadline", std::to_string(epoch_ms_in(-milliseconds(5)))}}));
    check_stopped_at_time_left(c.proxy, passed,
                               run_timeout_error("the request's deadline had already passed"),
                               milliseconds(BOUND_MS - 100));
}

TEST_CASE("time_left: a deadline out of range or not a number is OW_RUN_TIMEOUT_MS") {
    classic_proxy c;
    check_is_the_run_timeout(ms_left_of(c.proxy, json{{"deadline", "99999999999999"}}));
    check_is_the_run_timeout(ms_left_of(c.proxy, json{{"deadline", "soon"}}));
    check_stopped_at_time_left(c.proxy, json{{"deadline", "99999999999999"}},
                               run_timeout_error("the request's deadline was not a usable time"),
                               milliseconds(BOUND_MS - 100));
}

TEST_CASE("time_left: the platform's deadline is the bound, even past OW_RUN_TIMEOUT_MS") {
    classic_proxy c;
    const long long later =
        ms_left_of(c.proxy, json{{"deadline", std::to_string(epoch_ms_in(milliseconds(20000)))}});
    CHECK(later > 19000);
    CHECK(later <= 20000);
    const json soon = {{"deadline", std::to_string(epoch_ms_in(milliseconds(700)))}};
    check_stopped_at_time_left(c.proxy, soon,
                               "The action did not answer before its deadline and was stopped.",
                               milliseconds(600));
}

TEST_CASE("time_left: a proxy_deadline in the request does not change it") {
    // The proxy's member comes last and the launcher takes the last one: a sender cannot
    // make time_left() say more (or less) than the bound applied.
    classic_proxy c;
    const json forged = {{"proxy_deadline", std::to_string(epoch_ms_in(std::chrono::hours(5)))}};
    check_is_the_run_timeout(ms_left_of(c.proxy, forged));
    const json with_deadline = {{"proxy_deadline", "1"},
                                {"deadline", std::to_string(epoch_ms_in(milliseconds(9000)))}};
    const long long left = ms_left_of(c.proxy, with_deadline);
    CHECK(left > 8000);
    CHECK(left <= 9000);
}

TEST_CASE("time_left: single-entrypoint mode, never past OW_RUN_TIMEOUT_MS") {
    proxy_process proxy(
        cpp_runtime({{"OW_RUN_TIMEOUT_MS", BOUND}, {"__OW_RUNTIME_PLATFORM", "knative"}}));
    const auto ms_left = [&](const json& activation, bool init) {
        json request = {{"activation", activation}, {"value", json::object()}};
        if (init) request["init"] = {{"code", time_left_zip()}, {"binary", true}};
        const http_reply reply = proxy.post("/", request.dump());
        REQUIRE_MESSAGE(reply.status == 200, reply.body);
        return json::parse(reply.body).at("ms_left").get<long long>();
    };
    check_is_the_run_timeout(ms_left(json::object(), true));
    check_is_the_run_timeout(
        ms_left(json{{"deadline", std::to_string(epoch_ms_in(std::chrono::minutes(5)))}}, false));
    check_is_the_run_timeout(ms_left(json{{"deadline", "123"}}, false));
    const long long shorter =
        ms_left(json{{"deadline", std::to_string(epoch_ms_in(milliseconds(800)))}}, false);
    CHECK(shorter > 0);
    CHECK(shorter <= 800);
}
