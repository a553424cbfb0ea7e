// OW_MAX_INFLIGHT through the real proxy (issue 35, "Backpressure"): past the bound an activation
// is answered 429 with Retry-After at once, before the body is read and without queuing, in the
// classic /run and in single-entrypoint mode; /init is never refused by it; /health answers
// 503 while single-entrypoint mode is saturated; every refusal is counted in /metrics; and
// without the setting nothing is refused.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "expectations.hpp"
#include "prometheus_text.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using namespace std::chrono;
using nlohmann::json;
using steady = steady_clock;

namespace {

// Answers each activation after 1 s, with {"ok":1}.
const char* const SLEEPS =
    "#!/bin/bash\nwhile read line; do sleep 1; echo '{\"ok\":1}' >&3; done\n";

std::string inflight_text(int limit) {
    return "The runtime is busy: OW_MAX_INFLIGHT (" + std::to_string(limit) +
           ") activations are running or waiting for the action; try again later.";
}

const char* const INFLIGHT_REFUSALS = "actionloop_refused_total{reason=\"inflight\"}";

// A proxy with /metrics on a port of its own, `extra` in its environment.
struct bounded_proxy {
    explicit bounded_proxy(env_map extra)
        : metrics_port(pick_free_port()),
          proxy(with_env(std::move(extra), {"-metrics-port", std::to_string(metrics_port)})) {}

    sample_map scrape() const { return scrape_metrics(metrics_port); }

    // Waits until `count` activations are admitted (/metrics' in-flight gauge).
    void wait_in_flight(double count) const {
        REQUIRE(
            wait_until([&] { return scrape().at("actionloop_in_flight") == count; }, seconds(10)));
    }

    int metrics_port;
    proxy_process proxy;
};

std::future<http_reply> post_async(const proxy_process& proxy, const std::string& path,
                                   const std::string& body) {
    return std::async(std::launch::async,
                      [&proxy, path, body] { return proxy.post(path, body, seconds(30)); });
}

bool still_running(std::future<http_reply>& f) {
    return f.wait_for(milliseconds(0)) == std::future_status::timeout;
}

void check_refused(const http_reply& reply, int limit, const std::string& newline = "\n") {
    CHECK_MESSAGE(reply.status == 429, "transport: " << reply.error << " body: " << reply.body);
    CHECK(reply.body == json{{"error", inflight_text(limit)}}.dump() + newline);
    CHECK(reply.header("content-type") == "application/json");
    CHECK(reply.header("retry-after") == "1");
}

std::string knative_request(const json& value) { return json{{"value", value}}.dump(); }

}  // namespace

TEST_CASE("backpressure: past OW_MAX_INFLIGHT a /run gets 429 with Retry-After at once, /init is "
          "never refused, and after the burst /run is served again") {
    bounded_proxy b(env_map{{"OW_MAX_INFLIGHT", "2"}});
    CHECK_REPLY(b.proxy.init(SLEEPS), 200, OK_BODY);
    auto first = post_async(b.proxy, "/run", R"({"value":{"n":1}})");
    auto second = post_async(b.proxy, "/run", R"({"value":{"n":2}})");
    b.wait_in_flight(2);  // one in the action, one queued behind it
    const auto start = steady::now();
    // Not a body the proxy could read: refused before it is looked at.
    const http_reply third = b.proxy.post("/run", "not json", seconds(30));
    const auto took = steady::now() - start;
    check_refused(third, 2);
    CHECK(took < milliseconds(500));
    CHECK(still_running(first));  // answered before the sleeping ones finished
    CHECK(still_running(second));
    CHECK_REPLY(b.proxy.get("/health"), 200, "{\"ok\":true}\n");  // classic: not saturation
    // /init is not bounded by it: a second /init gets its own answer, not 429.
    CHECK(b.proxy.init(SLEEPS).status == 403);
    CHECK_REPLY(first.get(), 200, "{\"ok\":1}\n");
    CHECK_REPLY(second.get(), 200, "{\"ok\":1}\n");
    CHECK_REPLY(b.proxy.run(json{{"n", 3}}), 200, "{\"ok\":1}\n");  // room again
    const sample_map after = b.scrape();
    CHECK(after.at(INFLIGHT_REFUSALS) == 1);
    // A refusal is not an activation.
    CHECK(after.at("actionloop_activations_total{outcome=\"success\",route=\"run\"}") == 3);
    CHECK(after.at("actionloop_activations_total{outcome=\"rejected\",route=\"run\"}") == 0);
    CHECK(after.at("actionloop_in_flight") == 0);
}

TEST_CASE("backpressure: in single-entrypoint mode past OW_MAX_INFLIGHT a request gets 429 at "
          "once and /health answers 503 until one is answered") {
    bounded_proxy b(env_map{{"OW_MAX_INFLIGHT", "2"}, {"__OW_RUNTIME_PLATFORM", "knative"}});
    REQUIRE(b.proxy.post("/", json{{"init", {{"code", SLEEPS}}}}.dump()).status == 200);
    CHECK_REPLY(b.proxy.get("/health"), 200, "{\"ok\":true}\n");
    auto first = post_async(b.proxy, "/", knative_request({{"n", 1}}));
    auto second = post_async(b.proxy, "/", knative_request({{"n", 2}}));
    b.wait_in_flight(2);
    const auto start = steady::now();
    const http_reply health = b.proxy.get("/health");
    const http_reply third = b.proxy.post("/", "{not json", seconds(30));
    CHECK(steady::now() - start < milliseconds(500));
    CHECK(health.status == 503);
    CHECK(health.body ==
          json{{"error", "The runtime is busy: OW_MAX_INFLIGHT (2) activations are running or "
                         "waiting for the action; not ready until one is answered."}}
                  .dump() +
              "\n");
    check_refused(third, 2);
    CHECK(still_running(first));
    CHECK(still_running(second));
    CHECK(first.get().status == 200);
    CHECK(second.get().status == 200);
    CHECK_REPLY(b.proxy.get("/health"), 200, "{\"ok\":true}\n");  // ready again
    const http_reply again = b.proxy.post("/", knative_request({{"n", 3}}), seconds(30));
    CHECK(again.status == 200);
    CHECK(again.body == "{\"ok\":1}");
    CHECK(b.scrape().at(INFLIGHT_REFUSALS) == 1);
}

TEST_CASE("backpressure: without OW_MAX_INFLIGHT every concurrent activation is served") {
    bounded_proxy b(env_map{});
    CHECK_REPLY(b.proxy.init(SLEEPS), 200, OK_BODY);
    std::vector<std::future<http_reply>> runs;
    runs.reserve(3);
    for (int i = 0; i < 3; ++i) runs.push_back(post_async(b.proxy, "/run", R"({"value":{}})"));
    b.wait_in_flight(3);
    CHECK_REPLY(b.proxy.get("/health"), 200, "{\"ok\":true}\n");
    for (auto& run : runs) CHECK_REPLY(run.get(), 200, "{\"ok\":1}\n");
    CHECK(b.scrape().at(INFLIGHT_REFUSALS) == 0);
}
