// The port's bounds (issue 33) through the real proxy: in single-entrypoint mode a client's
// `deadline` never lifts OW_RUN_TIMEOUT_MS, and OW_MAX_QUEUED bounds the requests waiting for
// the action; in both modes OW_MAX_CONNECTIONS bounds the open connections. Each refusal is an
// immediate 503 with Retry-After and an exact JSON error; /health still answers.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "expectations.hpp"
#include "http_client.hpp"
#include "prometheus_text.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using namespace std::chrono;
using nlohmann::json;
using steady = steady_clock;

namespace {

constexpr auto NO_HANG = seconds(30);  // an HTTP timeout every bound must come well before

// Answers each request after 0.3 s (a slow action), with {"ok":1}.
const char* const SLOW =
    "#!/bin/bash\nwhile read line; do sleep 0.3; echo '{\"ok\":1}' >&3; done\n";

proxy_options knative(env_map extra = {}) {
    proxy_options options;
    options.env = std::move(extra);
    options.env["__OW_RUNTIME_PLATFORM"] = "knative";
    return options;
}

// A request to / that initialises the stem cell with `code`, alone.
std::string init_body(const std::string& code) { return json{{"init", {{"code", code}}}}.dump(); }

// An exact error answer of single-entrypoint mode: compact {"error":…}, JSON.
void check_error(const http_reply& reply, int status, const std::string& message) {
    CHECK_MESSAGE(reply.status == status, "transport: " << reply.error << " body: " << reply.body);
    CHECK(reply.body == json{{"error", message}}.dump());
    CHECK(reply.header("content-type") == "application/json");
}

std::string post_request(const std::string& path, const std::string& body) {
    return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// One response from each connection (polled together), each until complete or closed.
std::vector<http_reply> read_all(const std::vector<int>& fds, milliseconds timeout) {
    std::vector<std::string> raw(fds.size());
    std::vector<http_reply> replies(fds.size());
    std::vector<bool> done(fds.size(), false);
    size_t left = fds.size();
    const auto until = steady::now() + timeout;
    while (left > 0 && steady::now() < until) {
        std::vector<pollfd> polled;
        std::vector<size_t> index;
        for (size_t i = 0; i < fds.size(); ++i) {
            if (done[i]) continue;
            polled.push_back({fds[i], POLLIN, 0});
            index.push_back(i);
        }
        if (::poll(polled.data(), polled.size(), 100) <= 0) continue;
        for (size_t k = 0; k < polled.size(); ++k) {
            if (polled[k].revents == 0) continue;
            const size_t i = index[k];
            char buf[4096];
            const ssize_t n = ::recv(fds[i], buf, sizeof buf, 0);
            if (n > 0) raw[i].append(buf, static_cast<size_t>(n));
            bool complete = false;
            replies[i] = parse_response(raw[i], complete);
            if (complete || n <= 0) {
                done[i] = true;
                --left;
            }
        }
    }
    return replies;
}

// True when the peer has closed `fd` (reads EOF within `timeout`).
bool closed_by_peer(int fd, milliseconds timeout) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
    char buf[256];
    return ::recv(fd, buf, sizeof buf, 0) == 0;
}

std::string queue_full_text(int limit) {
    return "The runtime is busy: OW_MAX_QUEUED (" + std::to_string(limit) +
           ") requests are waiting for the action; try again later.";
}

std::string connections_text(int limit) {
    return "The runtime is busy: OW_MAX_CONNECTIONS (" + std::to_string(limit) +
           ") connections are open; try again later.";
}

}  // namespace

TEST_CASE(
    "knative limits: a client's deadline far past OW_RUN_TIMEOUT_MS is stopped at the bound") {
    proxy_process proxy(knative({{"OW_RUN_TIMEOUT_MS", "1000"}}));
    REQUIRE(proxy.post("/", init_body(fixture_text("hang.sh"))).status == 200);
    const std::string an_hour = std::to_string(epoch_millis() + 3600 * 1000);
    const json hang = {{"value", {{"hang", true}}}, {"activation", {{"deadline", an_hour}}}};
    const auto start = steady::now();
    const http_reply stopped = proxy.post("/", hang.dump(), NO_HANG);
    const auto took = steady::now() - start;
    check_error(stopped, 502,
                "The action did not answer within OW_RUN_TIMEOUT_MS (1000 ms, the bound of every "
                "request in single-entrypoint mode) and was stopped.");
    CHECK(took >= milliseconds(950));
    CHECK(took < seconds(5));
    CHECK(wait_until(  // the proxy's lines may trail the answer a little (logging.hpp)
        [&] {
            return contains(proxy.stderr_text(),
                            "the action ran longer than OW_RUN_TIMEOUT_MS (1000 ms)");
        },
        seconds(5)));
    // A deadline before the bound still stops the action at that deadline.
    const std::string soon = std::to_string(epoch_millis() + 300);
    const auto again = steady::now();
    check_error(
        proxy.post("/",
                   json{{"value", {{"hang", true}}}, {"activation", {{"deadline", soon}}}}.dump(),
                   NO_HANG),
        502, "The action did not answer before its deadline and was stopped.");
    CHECK(steady::now() - again < milliseconds(900));
    const http_reply later = proxy.post("/", json{{"value", {{"n", 1}}}}.dump(), NO_HANG);
    CHECK(later.status == 200);
    CHECK(later.body == "{\"n\":1}");
}

TEST_CASE("knative limits: past OW_MAX_QUEUED a request is refused at once with 503 and "
          "Retry-After, /health answers, and the queued ones are served") {
    const int metrics_port = pick_free_port();
    proxy_options options = knative({{"OW_MAX_QUEUED", "4"}});
    options.args = {"-metrics-port", std::to_string(metrics_port)};
    proxy_process proxy(options);
    REQUIRE(proxy.post("/", init_body(SLOW)).status == 200);
    constexpr int COUNT = 12;
    std::vector<int> fds;
    for (int i = 0; i < COUNT; ++i) fds.push_back(connect_to(proxy.port()));
    const auto start = steady::now();
    for (int fd : fds) send_text(fd, post_request("/", json{{"value", json::object()}}.dump()));
    // The refusals come at once, well before the first queued answer (0.3 s).
    const auto health_at = steady::now();
    const http_reply health = proxy.get("/health");
    CHECK(health.status == 200);
    CHECK(steady::now() - health_at < seconds(1));
    const std::vector<http_reply> replies = read_all(fds, seconds(20));
    int served = 0;
    int refused = 0;
    for (const http_reply& reply : replies) {
        if (reply.status == 200) {
            CHECK(reply.body == "{\"ok\":1}");
            ++served;
            continue;
        }
        check_error(reply, 503, queue_full_text(4));
        CHECK(reply.header("retry-after") == "1");
        ++refused;
    }
    CHECK(served == 4);
    CHECK(refused == COUNT - 4);
    CHECK(steady::now() - start < seconds(10));
    const sample_map samples = scrape_metrics(metrics_port);
    CHECK(samples.at("actionloop_refused_total{reason=\"queue\"}") == COUNT - 4);
    // Room again: the next request is served.
    const http_reply after = proxy.post("/", json{{"value", json::object()}}.dump(), NO_HANG);
    CHECK(after.status == 200);
    for (int fd : fds) ::close(fd);
}

TEST_CASE("knative limits: past OW_MAX_CONNECTIONS a connection gets 503, Retry-After and a "
          "close, /health is still answered, and a freed place serves again") {
    const int metrics_port = pick_free_port();
    proxy_options options = knative({{"OW_MAX_CONNECTIONS", "8"}});
    options.args = {"-metrics-port", std::to_string(metrics_port)};
    proxy_process proxy(options);
    REQUIRE(proxy.post("/", init_body(SLOW)).status == 200);
    // Eight connections hold every place, each waiting for the slow action.
    std::vector<int> held;
    for (int i = 0; i < 8; ++i) held.push_back(connect_to(proxy.port()));
    for (int fd : held) send_text(fd, post_request("/", json{{"value", json::object()}}.dump()));
    std::this_thread::sleep_for(milliseconds(100));
    // Over the limit: each further connection is answered 503 at once and closed.
    std::vector<int> over;
    for (int i = 0; i < 6; ++i) over.push_back(connect_to(proxy.port()));
    const auto start = steady::now();
    for (int fd : over) send_text(fd, post_request("/", json{{"value", json::object()}}.dump()));
    const std::vector<http_reply> refused = read_all(over, seconds(5));
    CHECK(steady::now() - start < seconds(1));
    for (size_t i = 0; i < over.size(); ++i) {
        INFO("connection " << i);
        CHECK(refused[i].status == 503);
        CHECK(refused[i].body == error_body(connections_text(8)));
        CHECK(refused[i].header("content-type") == "application/json");
        CHECK(refused[i].header("retry-after") == "1");
        CHECK(refused[i].header("connection") == "close");
        CHECK(closed_by_peer(over[i], seconds(2)));
        ::close(over[i]);
    }
    // /health past the limit (a probe must not fail because clients hold every place).
    const auto health_at = steady::now();
    CHECK_REPLY(proxy.get("/health"), 200, "{\"ok\":true}\n");
    CHECK(steady::now() - health_at < seconds(1));
    // The held ones are all served, their connections stay open; one closes, a new one is served.
    const std::vector<http_reply> served = read_all(held, seconds(20));
    for (const http_reply& reply : served) {
        CHECK(reply.status == 200);
        CHECK(reply.body == "{\"ok\":1}");
    }
    ::close(held.back());
    held.pop_back();
    CHECK(wait_until(
        [&] { return scrape_metrics(metrics_port).at("actionloop_open_connections") == 7; },
        seconds(2)));
    CHECK(proxy.post("/", json{{"value", json::object()}}.dump()).status == 200);
    CHECK(scrape_metrics(metrics_port).at("actionloop_refused_total{reason=\"connections\"}") == 6);
    for (int fd : held) ::close(fd);
}

TEST_CASE("knative limits: OW_MAX_CONNECTIONS holds in the classic mode too") {
    proxy_process proxy(with_env({{"OW_MAX_CONNECTIONS", "2"}}));
    init_with(proxy, "echo.sh");
    std::vector<int> held{connect_to(proxy.port()), connect_to(proxy.port())};
    std::this_thread::sleep_for(milliseconds(100));
    const http_reply refused = proxy.run(json{{"x", 1}});
    CHECK(refused.status == 503);
    CHECK(refused.body == error_body(connections_text(2)));
    CHECK(refused.header("retry-after") == "1");
    ::close(held[0]);
    const bool freed = wait_until(
        [&] {
            return proxy.run(json{{"x", 2}}).status == 200;
        },
        seconds(5));
    CHECK(freed);
    ::close(held[1]);
}
