// OW_RUN_TIMEOUT_MS (issue 19, item 2): every activation has a bound. A /run whose request
// carries no `deadline` (Knative, a plain HTTP client) is stopped at OW_RUN_TIMEOUT_MS with a
// 502 that names the setting; the action is started again for later requests; /health
// answers 503 while an activation has run longer than the setting. In both modes.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using steady = std::chrono::steady_clock;

namespace {

constexpr auto NO_HANG = seconds(30);  // an HTTP timeout the bound must come well before

proxy_options run_timeout(const std::string& ms, env_map extra = {}) {
    proxy_options options;
    options.env = std::move(extra);
    options.env["OW_RUN_TIMEOUT_MS"] = ms;
    return options;
}

std::string run_timeout_error(int ms) {
    return "The action did not answer within OW_RUN_TIMEOUT_MS (" + std::to_string(ms) +
           " ms; the request had no deadline) and was stopped.";
}

const char* const HEALTHY = "{\"ok\":true}\n";

// /health until it answers `status` (bounded); the last reply.
http_reply health_until(const proxy_process& proxy, int status, milliseconds limit) {
    const auto until = steady::now() + limit;
    http_reply reply = proxy.get("/health");
    while (reply.status != status && steady::now() < until) {
        std::this_thread::sleep_for(milliseconds(20));
        reply = proxy.get("/health");
    }
    return reply;
}

}  // namespace

TEST_CASE(
    "run timeout: a /run without a deadline is stopped at OW_RUN_TIMEOUT_MS, later ones run") {
    proxy_process proxy(run_timeout("1000"));
    REQUIRE(proxy.init(fixture_text("hang.sh")).status == 200);
    const auto start = steady::now();
    auto hung = std::async(std::launch::async, [&] {
        return proxy.run(json{{"hang", true}}, json::object(), NO_HANG);
    });
    std::this_thread::sleep_for(milliseconds(300));
    CHECK_REPLY(proxy.get("/health"), 200, HEALTHY);  // within its bound: still serving
    CHECK_ERROR_REPLY(hung.get(), 502, run_timeout_error(1000));
    const auto took = steady::now() - start;
    CHECK(took >= milliseconds(950));
    CHECK(took < seconds(10));
    CHECK(wait_until(  // the proxy's lines may trail the answer a little (logging.hpp)
        [&] {
            return contains(proxy.stderr_text(),
                            "the action ran longer than OW_RUN_TIMEOUT_MS (1000 ms)");
        },
        seconds(5)));
    // The action is started again for the next /run; /health is 200.
    CHECK_REPLY(proxy.run(json{{"x", 1}}, json::object(), NO_HANG), 200, "{\"x\":1}\n");
    CHECK_REPLY(proxy.get("/health"), 200, HEALTHY);
    CHECK(proxy.children().size() == 1);
    proxy.check_streams(2);  // the stopped activation has its sentinels too
}

TEST_CASE("run timeout: a request's own deadline wins over OW_RUN_TIMEOUT_MS, and /health says 503 "
          "while it overruns the setting") {
    proxy_process proxy(run_timeout("500"));
    REQUIRE(proxy.init(fixture_text("hang.sh")).status == 200);
    const std::string deadline = std::to_string(epoch_millis() + 3000);
    const auto start = steady::now();
    auto hung = std::async(std::launch::async, [&] {
        return proxy.run(json{{"hang", true}}, json{{"deadline", deadline}}, NO_HANG);
    });
    // Past 500 ms the activation has overrun the setting, though its deadline is not reached.
    const http_reply overrun = health_until(proxy, 503, seconds(2));
    CHECK(steady::now() - start < milliseconds(2900));
    REQUIRE_MESSAGE(overrun.status == 503, "transport: " << overrun.error);
    CHECK(overrun.header("content-type") == "application/json");
    const std::string error = json::parse(overrun.body).at("error").get<std::string>();
    CHECK(error.rfind("An activation has been running for ", 0) == 0);
    CHECK(contains(error, " ms, longer than OW_RUN_TIMEOUT_MS (500 ms): the action is not "
                          "serving until it answers or is stopped and started again."));
    // The request's deadline (not the setting) stopped it.
    CHECK_ERROR_REPLY(hung.get(), 502,
                      "The action did not answer before its deadline and was stopped.");
    CHECK(steady::now() - start >= milliseconds(2900));
    CHECK_REPLY(proxy.get("/health"), 200, HEALTHY);
    CHECK_REPLY(proxy.run(json{{"x", 2}}, json::object(), NO_HANG), 200, "{\"x\":2}\n");
    CHECK_REPLY(proxy.get("/health"), 200, HEALTHY);
}

TEST_CASE("run timeout: OW_RUN_TIMEOUT_MS=0 sets no bound") {
    proxy_process proxy(run_timeout("0"));
    REQUIRE(proxy.init(fixture_text("hang.sh")).status == 200);
    // The client gives up; the proxy has not answered in that time.
    const http_reply hung = proxy.run(json{{"hang", true}}, json::object(), seconds(2));
    CHECK(hung.status == -1);
    CHECK_FALSE(hung.error.empty());
    CHECK_REPLY(proxy.get("/health"), 200, HEALTHY);
}

TEST_CASE("run timeout: single-entrypoint mode, one hanging request does not take the pod down") {
    proxy_process proxy(run_timeout("2000", {{"__OW_RUNTIME_PLATFORM", "knative"}}));
    const json init = {{"init", {{"code", fixture_text("hang.sh")}}}};
    REQUIRE(proxy.post("/", init.dump()).status == 200);
    const auto start = steady::now();
    auto hung = std::async(std::launch::async, [&] {
        return proxy.post("/", json{{"value", {{"hang", true}}}}.dump(), NO_HANG);
    });
    std::this_thread::sleep_for(milliseconds(500));
    CHECK_REPLY(proxy.get("/health"), 200, HEALTHY);
    std::this_thread::sleep_for(milliseconds(500));
    // A request behind the hanging one waits for it to be stopped, then is served (its own
    // bound is a second later than the hanging one's).
    auto behind = std::async(std::launch::async, [&] {
        return proxy.post("/", json{{"value", {{"n", 1}}}}.dump(), NO_HANG);
    });
    const http_reply stopped = hung.get();
    CHECK(stopped.status == 502);
    CHECK(stopped.body == json{{"error", run_timeout_error(2000)}}.dump());
    CHECK(steady::now() - start >= milliseconds(1950));
    CHECK(steady::now() - start < seconds(10));
    const http_reply served = behind.get();
    CHECK_MESSAGE(served.status == 200, "transport: " << served.error << " body: " << served.body);
    CHECK(served.body == "{\"n\":1}");
    const http_reply later = proxy.post("/", json{{"value", {{"n", 2}}}}.dump(), NO_HANG);
    CHECK(later.status == 200);
    CHECK(later.body == "{\"n\":2}");
    CHECK_REPLY(proxy.get("/health"), 200, HEALTHY);
}
