// The /metrics listener (common/metrics/metrics_server), on its own io_context: what a scrape
// gets, the 404 and 405 answers, and the bind error that names the address.
#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>
#include <stdexcept>
#include <string>
#include <thread>

#include "http_client.hpp"
#include "metrics/metrics_server.hpp"

using support::http_reply;

namespace {

// The listener on 127.0.0.1 (a port picked by the system), served by a thread of its own.
class listener {
public:
    listener() {
        port_ = actionloop::start_metrics_server(
            io_, "127.0.0.1", 0, [this] { return "scrape " + std::to_string(++n_) + "\n"; });
        thread_ = std::thread([this] { io_.run(); });
    }
    ~listener() {
        io_.stop();
        thread_.join();
    }
    listener(const listener&) = delete;
    listener& operator=(const listener&) = delete;
    int port() const { return port_; }

private:
    boost::asio::io_context io_;
    int port_ = 0;
    int n_ = 0;
    std::thread thread_;
};

}  // namespace

TEST_CASE("metrics server: GET /metrics renders once per scrape, in Prometheus' text format") {
    listener server;
    const http_reply first = support::http_get(server.port(), "/metrics");
    CHECK(first.status == 200);
    CHECK(first.body == "scrape 1\n");
    CHECK(first.header("content-type") == "text/plain; version=0.0.4; charset=utf-8");
    CHECK(support::http_get(server.port(), "/metrics?x=1").body == "scrape 2\n");
    const http_reply head = support::raw_exchange(
        server.port(), "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(head.status == 200);
    CHECK(head.body.empty());
    CHECK(head.header("content-length") == "9");
}

TEST_CASE("metrics server: another path is 404, another method 405 naming GET and HEAD") {
    listener server;
    CHECK(support::http_get(server.port(), "/").status == 404);
    CHECK(support::http_get(server.port(), "/metrics/x").status == 404);
    const http_reply post = support::http_post(server.port(), "/metrics", "{}");
    CHECK(post.status == 405);
    CHECK(post.header("allow") == "GET, HEAD");
}

TEST_CASE("metrics server: a port it cannot bind, or a bad address, is an error naming it") {
    listener server;
    boost::asio::io_context io;
    const std::string busy = std::to_string(server.port());
    CHECK_THROWS_WITH_AS(
        actionloop::start_metrics_server(io, "127.0.0.1", server.port(), [] { return ""; }),
        ("cannot serve metrics on 127.0.0.1:" + busy + ": Address already in use").c_str(),
        std::runtime_error);
    CHECK_THROWS_WITH_AS(
        actionloop::start_metrics_server(io, "not-an-address", 9, [] { return ""; }),
        doctest::Contains("cannot serve metrics on not-an-address:9: "), std::runtime_error);
}
