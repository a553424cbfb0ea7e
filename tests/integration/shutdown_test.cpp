// Graceful shutdown and /health through the real proxy (docs/DEPLOY.md, "Shutdown"): the
// first SIGTERM lets the activations in flight finish while new ones get 503, then the action
// is stopped and the proxy exits 0; a second SIGTERM, or SIGINT, stops it at once.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
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

namespace {

// An activation the proxy was stopped under at once: no answer, or (when the io thread wrote
// it before the process ended) the "command exited" its killed action leads to. Never 200.
void check_cut(const http_reply& reply) {
    CHECK_MESSAGE((reply.status == -1 || reply.status == 400), reply.status << " " << reply.body);
}

const char* const SHUTTING_DOWN = "The action container is shutting down.";

// A proxy running gate.sh, and a FIFO that holds its gated activations until open_gate().
struct gated_action {
    explicit gated_action(env_map env = {}, std::vector<std::string> args = {})
        : proxy(with_env(std::move(env), std::move(args))), gate((proxy.root() / "gate").string()) {
        REQUIRE(::mkfifo(gate.c_str(), 0600) == 0);
        CHECK_REPLY(proxy.init(fixture_text("gate.sh")), 200, OK_BODY);
    }

    // Starts a /run that waits at the gate; returns once the action holds it.
    std::future<http_reply> start_gated_run(const json& extra = json::object()) {
        auto reply = std::async(std::launch::async, [this, extra] {
            return proxy.run(json{{"gate", gate}, {"n", 1}}, extra);
        });
        REQUIRE(wait_until([&] { return fs::exists(gate + ".started"); }, seconds(10)));
        return reply;
    }

    void open_gate() const { std::ofstream(gate) << "go\n"; }

    // Waits (bounded) for the proxy to end; returns its wait status.
    int wait_for_exit(milliseconds bound) {
        REQUIRE_MESSAGE(wait_until([&] { return !proxy.running(); }, bound),
                        "the proxy is still running");
        return proxy.stop();  // the status, already reaped
    }

    proxy_process proxy;
    std::string gate;
};

void check_exit_code(int status, int code) {
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == code);
}

void check_killed_by(int status, int sig) {
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
}

void check_health(const proxy_process& proxy, int status) {
    const http_reply health = proxy.get("/health");
    if (status == 200) {
        CHECK_REPLY(health, 200, OK_BODY);
    } else {
        CHECK_ERROR_REPLY(health, status, SHUTTING_DOWN);
    }
}

// A proxy with /metrics on `metrics_port`, plus `env`.
proxy_options metered(int metrics_port, env_map env = {}) {
    return with_env(std::move(env), {"-metrics-port", std::to_string(metrics_port)});
}

// Waits until the proxy has accepted `count` activations that are not answered yet.
bool wait_in_flight(int metrics_port, double count) {
    return wait_until(
        [&] { return scrape_metrics(metrics_port).at("actionloop_in_flight") == count; },
        seconds(10));
}

}  // namespace

TEST_CASE("shutdown: /health is 200 {\"ok\":true} while serving, whatever the action does") {
    const int metrics_port = pick_free_port();
    proxy_process proxy(metered(metrics_port));
    check_health(proxy, 200);                                      // before any /init
    CHECK_REPLY(proxy.post("/health?probe=1", ""), 200, OK_BODY);  // any method, query ignored
    CHECK_REPLY(proxy.init(fixture_text("hang.sh")), 200, OK_BODY);
    auto hung = std::async(std::launch::async, [&] {
        return proxy.run(json{{"hang", true}}, {}, seconds(20));
    });
    // The action is busy for good: /health is answered on the io thread all the same.
    REQUIRE(wait_in_flight(metrics_port, 1));
    for (int i = 0; i < 5; ++i) check_health(proxy, 200);
    proxy.stop();
    check_cut(hung.get());
}

TEST_CASE("shutdown: SIGTERM lets an activation in flight finish, new ones get 503, exit 0") {
    gated_action action;
    proxy_process& proxy = action.proxy;
    auto in_flight = action.start_gated_run();
    const std::vector<pid_t> started = descendant_pids(proxy.pid());
    REQUIRE_FALSE(started.empty());
    ::kill(proxy.pid(), SIGTERM);
    // Draining: refused (with Connection: close) until the activation in flight is done.
    REQUIRE(wait_until([&] { return proxy.get("/health").status == 503; }, seconds(5)));
    check_health(proxy, 503);
    const http_reply run = proxy.run(json{{"late", 1}});
    CHECK_ERROR_REPLY(run, 503, SHUTTING_DOWN);
    CHECK(run.header("connection") == "close");
    CHECK_ERROR_REPLY(proxy.init(fixture_text("echo.sh")), 503, SHUTTING_DOWN);
    CHECK(proxy.running());
    for (pid_t pid : started) CHECK(process_alive(pid));

    action.open_gate();
    CHECK_REPLY(in_flight.get(), 200, json{{"gate", action.gate}, {"n", 1}}.dump() + "\n");
    check_exit_code(action.wait_for_exit(seconds(5)), 0);
    for (pid_t pid : started) CHECK_MESSAGE(!process_alive(pid), pid);
    // Only the finished activation wrote its sentinels.
    CHECK(sentinel_count(proxy.stdout_text()) == 1);
}

TEST_CASE("shutdown: SIGTERM with nothing in flight stops the action and exits 0 at once") {
    gated_action action;
    proxy_process& proxy = action.proxy;
    CHECK_REPLY(proxy.run(json{{"n", 2}}), 200, "{\"n\":2}\n");
    // The script's jq may still be exiting when its answer has arrived.
    std::vector<pid_t> started;
    REQUIRE(wait_until(
        [&] {
            started = descendant_pids(proxy.pid());
            return started.size() == 1;
        },
        seconds(5)));
    ::kill(proxy.pid(), SIGTERM);
    check_exit_code(action.wait_for_exit(seconds(5)), 0);
    CHECK_FALSE(process_alive(started.front()));
}

TEST_CASE("shutdown: an activation in flight ends at its own deadline, then the proxy exits 0") {
    const int metrics_port = pick_free_port();
    proxy_process proxy(metered(metrics_port, {{"OW_DEADLINE_GRACE_MS", "0"}}));
    CHECK_REPLY(proxy.init(fixture_text("hang.sh")), 200, OK_BODY);
    const auto deadline =
        duration_cast<milliseconds>(system_clock::now().time_since_epoch()) + milliseconds(3000);
    auto hung = std::async(std::launch::async, [&] {
        return proxy.run(json{{"hang", true}},
                         json{{"deadline", std::to_string(deadline.count())}});
    });
    REQUIRE(wait_in_flight(metrics_port, 1));
    ::kill(proxy.pid(), SIGTERM);
    CHECK_ERROR_REPLY(hung.get(), 502,
                      "The action did not answer before its deadline and was stopped.");
    REQUIRE(wait_until([&] { return !proxy.running(); }, seconds(5)));
    check_exit_code(proxy.stop(), 0);
}

TEST_CASE("shutdown: OW_SHUTDOWN_TIMEOUT_MS caps the drain: the action is stopped, exit 0") {
    gated_action action(env_map{{"OW_SHUTDOWN_TIMEOUT_MS", "300"}});
    proxy_process& proxy = action.proxy;
    auto in_flight = action.start_gated_run();
    const std::vector<pid_t> started = descendant_pids(proxy.pid());
    ::kill(proxy.pid(), SIGTERM);
    check_exit_code(action.wait_for_exit(seconds(5)), 0);
    for (pid_t pid : started) CHECK_MESSAGE(!process_alive(pid), pid);
    // Cut: the action was stopped under it, and its answer still went out before the exit.
    CHECK_ERROR_REPLY(in_flight.get(), 400, "command exited");
    CHECK(contains(proxy.stderr_text(), "1 activation(s) still in flight after 300 ms"));
}

TEST_CASE("shutdown: a second SIGTERM during the drain stops the proxy at once") {
    gated_action action;
    proxy_process& proxy = action.proxy;
    auto in_flight = action.start_gated_run();
    const std::vector<pid_t> started = descendant_pids(proxy.pid());
    ::kill(proxy.pid(), SIGTERM);
    REQUIRE(wait_until([&] { return proxy.get("/health").status == 503; }, seconds(5)));
    ::kill(proxy.pid(), SIGTERM);
    check_killed_by(action.wait_for_exit(seconds(5)), SIGTERM);
    for (pid_t pid : started) CHECK_MESSAGE(!process_alive(pid), pid);
    check_cut(in_flight.get());
}

TEST_CASE("shutdown: SIGINT stops at once, in a drain or not") {
    for (bool drain_first : {false, true}) {
        INFO("SIGTERM first: " << drain_first);
        gated_action action;
        proxy_process& proxy = action.proxy;
        auto in_flight = action.start_gated_run();
        const std::vector<pid_t> started = descendant_pids(proxy.pid());
        if (drain_first) {
            ::kill(proxy.pid(), SIGTERM);
            REQUIRE(wait_until([&] { return proxy.get("/health").status == 503; }, seconds(5)));
        }
        ::kill(proxy.pid(), SIGINT);
        check_killed_by(action.wait_for_exit(seconds(5)), SIGINT);
        for (pid_t pid : started) CHECK_MESSAGE(!process_alive(pid), pid);
        check_cut(in_flight.get());
    }
}

TEST_CASE("shutdown: the drain shows on /metrics: one in flight, the refused ones counted") {
    const int metrics_port = pick_free_port();
    gated_action action({}, {"-metrics-port", std::to_string(metrics_port)});
    proxy_process& proxy = action.proxy;
    auto in_flight = action.start_gated_run();
    ::kill(proxy.pid(), SIGTERM);
    REQUIRE(wait_until([&] { return proxy.get("/health").status == 503; }, seconds(5)));
    CHECK(proxy.run(json{{"late", 1}}).status == 503);
    CHECK(proxy.post("/init", "{}").status == 503);
    const sample_map scraped = scrape_metrics(metrics_port);
    CHECK(scraped.at("actionloop_in_flight") == 1);
    CHECK(scraped.at("actionloop_activations_total{outcome=\"shutting_down\",route=\"run\"}") == 1);
    CHECK(scraped.at("actionloop_activations_total{outcome=\"shutting_down\",route=\"init\"}") ==
          1);
    action.open_gate();
    CHECK(in_flight.get().status == 200);
    check_exit_code(action.wait_for_exit(seconds(5)), 0);
}
