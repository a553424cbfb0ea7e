// /metrics through the real proxy (docs/DEPLOY.md, "Metrics"): scraped before and after a
// known sequence of activations, each counter moves by exactly what the sequence did.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "expectations.hpp"
#include "process_tools.hpp"
#include "prometheus_text.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using namespace std::chrono;
using nlohmann::json;

namespace {

// Echoes .value; .value.do = "crash" exits without answering, "garbage" answers non-JSON,
// "hang" never answers.
const char* const SCRIPT = R"SH(#!/bin/bash
while read line; do
  case "$(echo "$line" | jq -r '.value.do // "echo"')" in
    crash) exit 3 ;;
    garbage) echo 'not json' >&3 ;;
    hang) exec sleep 3600 ;;
    *) echo "$line" | jq -c .value >&3 ;;
  esac
done
)SH";

std::string activations(const char* route, const char* outcome) {
    return std::string("actionloop_activations_total{outcome=\"") + outcome + "\",route=\"" +
           route + "\"}";
}

proxy_options with_metrics(int port) {
    proxy_options options;
    options.args = {"-metrics-port", std::to_string(port)};
    return options;
}

// A proxy with /metrics on a port of its own.
struct metered_proxy {
    metered_proxy() : metrics_port(pick_free_port()), proxy(with_metrics(metrics_port)) {}

    sample_map scrape() const { return scrape_metrics(metrics_port); }

    // POSTs `body` and adds its size and the answer's to the byte totals.
    http_reply post(const std::string& path, const std::string& body) {
        http_reply reply = proxy.post(path, body);
        bytes_in += static_cast<double>(body.size());
        bytes_out += static_cast<double>(reply.body.size());
        return reply;
    }

    int metrics_port;
    proxy_process proxy;
    double bytes_in = 0;
    double bytes_out = 0;
};

command_result proxy_command(const std::vector<std::string>& args, const temp_dir& cwd,
                             const env_map& extra = {}) {
    std::vector<std::string> argv{ACTIONLOOP_PROXY_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    env_map env = path_only_env();
    for (const auto& [name, value] : extra) env[name] = value;
    return run_command(argv, "", env, cwd.path(), seconds(20));
}

double delta(const sample_map& before, const sample_map& after, const std::string& name) {
    const auto was = before.find(name);
    const auto now = after.find(name);
    REQUIRE_MESSAGE(now != after.end(), name);
    return now->second - (was != before.end() ? was->second : 0.0);
}

}  // namespace

TEST_CASE("metrics: each counter moves by exactly what a known sequence of activations did") {
    metered_proxy m;
    const sample_map before = m.scrape();
    CHECK(before.at(activations("run", "success")) == 0);
    CHECK(before.at("actionloop_run_duration_seconds_count") == 0);
    CHECK(before.at("process_resident_memory_bytes") > 0);

    const std::string init = init_payload(SCRIPT).dump();
    CHECK_REPLY(m.post("/init", init), 200, OK_BODY);
    CHECK(m.post("/init", init).status == 403);  // a second init: rejected
    CHECK_REPLY(m.post("/run", R"({"value":{"a":1}})"), 200, "{\"a\":1}\n");
    CHECK_REPLY(m.post("/run", R"({"value":{"error":"boom"}})"), 200, "{\"error\":\"boom\"}\n");
    CHECK(m.post("/run", R"({"value":{"do":"garbage"}})").status == 502);
    CHECK_ERROR_REPLY(m.post("/run", R"({"value":{"do":"crash"}})"), 400, "command exited");
    CHECK_REPLY(m.post("/run", R"({"value":{"b":2}})"), 200, "{\"b\":2}\n");  // restarted
    const sample_map after = m.scrape();

    const std::pair<std::string, double> expected[] = {
        {activations("init", "success"), 1},
        {activations("init", "rejected"), 1},
        {activations("init", "action_error"), 0},
        {activations("run", "success"), 2},
        {activations("run", "application_error"), 1},
        {activations("run", "action_error"), 1},
        {activations("run", "crash"), 1},
        {activations("run", "rejected"), 0},
        {activations("run", "shutting_down"), 0},
        {"actionloop_init_duration_seconds_count", 2},
        {"actionloop_init_duration_seconds_bucket{le=\"+Inf\"}", 2},
        {"actionloop_run_duration_seconds_count", 5},
        {"actionloop_run_duration_seconds_bucket{le=\"+Inf\"}", 5},
        {"actionloop_action_restarts_total", 1},
        {"actionloop_received_bytes_total", m.bytes_in},
        {"actionloop_sent_bytes_total", m.bytes_out},
    };
    for (const auto& sample : expected) {  // not a structured binding: CHECK captures it
        CHECK_MESSAGE(delta(before, after, sample.first) == sample.second, sample.first);
    }
    CHECK(after.at("actionloop_in_flight") == 0);
    CHECK(after.at("actionloop_queue_depth") == 0);
    CHECK(after.at("actionloop_run_duration_seconds_sum") > 0);
    // /metrics is not served on the action port (upstream's 200, nothing, for other paths).
    CHECK(m.proxy.get("/metrics").body.empty());
}

TEST_CASE("metrics: in-flight and queue depth while the action hangs, scrapes stay prompt") {
    metered_proxy m;
    CHECK_REPLY(m.proxy.init(SCRIPT), 200, OK_BODY);
    auto hung = std::async(std::launch::async, [&] {
        return m.proxy.run(json{{"do", "hang"}}, {}, seconds(30));
    });
    REQUIRE(wait_until([&] { return m.scrape().at("actionloop_in_flight") == 1; }, seconds(10)));
    auto queued = std::async(std::launch::async, [&] {
        return m.proxy.run(json{{"n", 1}}, {}, seconds(30));
    });
    REQUIRE(wait_until([&] { return m.scrape().at("actionloop_queue_depth") == 1; }, seconds(10)));
    CHECK(m.scrape().at("actionloop_in_flight") == 2);
    m.proxy.stop();
    CHECK(hung.get().status != 200);  // stopped under them: cut (no answer, or 400)
    CHECK(queued.get().status != 200);
}

TEST_CASE("metrics: the metrics port answers only GET or HEAD /metrics") {
    metered_proxy m;
    CHECK(http_get(m.metrics_port, "/").status == 404);
    CHECK(http_get(m.metrics_port, "/health").status == 404);
    const http_reply post = http_post(m.metrics_port, "/metrics", "{}");
    CHECK(post.status == 405);
    CHECK(post.header("allow") == "GET, HEAD");
    const http_reply head = raw_exchange(
        m.metrics_port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(head.status == 200);
    CHECK(head.body.empty());
    CHECK(std::stoul(head.header("content-length")) > 0);
    CHECK(contains(http_get(m.metrics_port, "/metrics?x=1").body,
                   "# TYPE actionloop_activations_total counter"));
}

TEST_CASE("metrics: off unless a port is set, a bad or busy port is a clear startup error") {
    proxy_process plain;
    CHECK(plain.get("/health").status == 200);  // serving, and nothing else listens
    temp_dir cwd;
    const command_result bad = proxy_command({"-metrics-port", "0"}, cwd);
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, "invalid -metrics-port '0': a number from 1 to 65535"));
    const command_result bad_env =
        proxy_command({"-port", std::to_string(pick_free_port())}, cwd, {{"OW_METRICS_PORT", "x"}});
    CHECK(bad_env.exit_code == 2);
    CHECK(contains(bad_env.err, "invalid OW_METRICS_PORT 'x'"));
    // A metrics port another proxy already serves on.
    const std::string busy_port = std::to_string(plain.port());
    const command_result busy =
        proxy_command({"-port", std::to_string(pick_free_port()), "-metrics-port", busy_port}, cwd);
    CHECK(busy.exit_code == 1);
    CHECK(contains(busy.err,
                   "cannot serve metrics on 0.0.0.0:" + busy_port + ": Address already in use"));
}

TEST_CASE("metrics: workers, busy workers, and each worker's resident memory and restarts") {
    metered_proxy m;
    const sample_map before = m.scrape();
    CHECK(before.at("actionloop_workers") == 0);  // no action yet
    CHECK(before.at("actionloop_workers_busy") == 0);
    CHECK(before.count("actionloop_worker_resident_bytes{worker=\"0\"}") == 0);
    CHECK_REPLY(m.proxy.init(SCRIPT), 200, OK_BODY);
    const sample_map idle = m.scrape();
    CHECK(idle.at("actionloop_workers") == 1);
    CHECK(idle.at("actionloop_workers_busy") == 0);
    CHECK(idle.at("actionloop_worker_resident_bytes{worker=\"0\"}") > 0);
    CHECK(idle.at("actionloop_worker_restarts_total{worker=\"0\"}") == 0);
    CHECK_ERROR_REPLY(m.proxy.run(json{{"do", "crash"}}), 400, "command exited");
    CHECK_REPLY(m.proxy.run(json{{"b", 2}}), 200, "{\"b\":2}\n");  // on the restarted process
    CHECK(m.scrape().at("actionloop_worker_restarts_total{worker=\"0\"}") == 1);
    auto hung = std::async(std::launch::async, [&] {
        return m.proxy.run(json{{"do", "hang"}}, {}, seconds(30));
    });
    REQUIRE(wait_until([&] { return m.scrape().at("actionloop_workers_busy") == 1; }, seconds(10)));
    CHECK(m.scrape().at("actionloop_worker_resident_bytes{worker=\"0\"}") > 0);
    m.proxy.stop();
    CHECK(hung.get().status != 200);
}

TEST_CASE("metrics: every family a scrape renders is in docs/DEPLOY.md's metrics table") {
    metered_proxy m;
    CHECK_REPLY(m.proxy.init(SCRIPT), 200, OK_BODY);  // the per-worker families appear
    const std::string doc = read_file(fs::path(ACTIONLOOP_SOURCE_DIR) / "docs/DEPLOY.md");
    for (const auto& [sample, value] : m.scrape()) {
        std::string name = sample.substr(0, sample.find('{'));
        for (const char* suffix : {"_bucket", "_sum", "_count"}) {
            const std::string s(suffix);
            if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
                contains(name, "_duration_seconds")) {
                name.resize(name.size() - s.size());
            }
        }
        CHECK_MESSAGE(contains(doc, "| `" + name), name);
    }
}

TEST_CASE("metrics: in single-entrypoint mode the outcome is the action's, whatever its "
          "statusCode, and the mode's refusals are rejected") {
    proxy_options options = with_metrics(pick_free_port());
    const int port = std::stoi(options.args[1]);
    options.env["__OW_RUNTIME_PLATFORM"] = "knative";
    proxy_process proxy(options);
    REQUIRE(proxy.post("/", json{{"init", {{"code", SCRIPT}}}}.dump()).status == 200);
    const auto request = [&](const json& value) {
        return proxy.post("/", json{{"value", value}}.dump());
    };
    CHECK(request({{"statusCode", 404}, {"body", "none"}}).status == 404);
    CHECK(request({{"error", "boom"}}).status == 200);
    CHECK(request({{"do", "crash"}}).status == 400);
    CHECK(proxy.post("/", "{not json").status == 500);  // a bad envelope
    const sample_map after = scrape_metrics(port);
    const std::pair<std::string, double> expected[] = {
        {activations("run", "success"), 2},  // the init request is a run of the mode too
        {activations("run", "application_error"), 1}, {activations("run", "crash"), 1},
        {activations("run", "rejected"), 1},          {activations("run", "action_error"), 0},
    };
    for (const auto& sample : expected) {
        CHECK_MESSAGE(after.at(sample.first) == sample.second, sample.first);
    }
}
