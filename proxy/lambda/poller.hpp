// One worker's loop in Lambda mode: park one `GET …/invocation/next`, hand the invocation
// to the host (which sends it to an idle worker), post its result, park again. With
// AWS_LAMBDA_MAX_CONCURRENCY=N there are N pollers, so never more than N `/next` are parked
// and never more than N activations run.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "host/action_host.hpp"
#include "lambda/invocation.hpp"
#include "lambda/runtime_connection.hpp"
#include "ops/shutdown.hpp"

namespace actionloop::lambda {

/// Where the Runtime API is: its address and its Host header.
struct api_address {
    boost::asio::ip::tcp::endpoint endpoint;
    std::string host;  // as AWS_LAMBDA_RUNTIME_API gave it, e.g. "127.0.0.1:9001"
};

class poller : public std::enable_shared_from_this<poller> {
public:
    poller(action_host& host, drain_state& drain, const api_address& api, unsigned index);

    /// Parks the first `/next`; on the loop.
    void start() { poll(); }

private:
    void poll();
    void on_next(const boost::system::error_code& ec, response& res);
    void serve(invocation inv);
    void send(const post& p, const std::string& invocation_id, bool retry_too_large);
    void too_large(const std::string& target, const std::string& invocation_id);
    void after_failure();

    action_host& host_;
    drain_state& drain_;
    api_address api_;
    runtime_connection connection_;
    std::optional<runtime_connection> side_;  // a post while connection_ has /next parked
    boost::asio::steady_timer backoff_;
    std::string name_;                        // "poller 2" in its log lines (several pollers)
    unsigned failures_ = 0;                   // consecutive failed polls
    std::optional<in_flight_ticket> ticket_;  // the invocation being served holds the drain
};

}  // namespace actionloop::lambda
