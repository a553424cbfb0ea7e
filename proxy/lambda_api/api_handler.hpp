// The local Runtime API's HTTP face: the handler the proxy's HTTP server (http/server.hpp)
// calls for every request. It reads the request (requests.hpp), hands it to the rules
// (broker.hpp) with the time, and keeps one timer on the event loop armed for the earliest
// deadline in flight. A parked /next or a queued invoke asks its connection to say when the
// client goes away (client_watch), so that a dead poller is never given an invoke.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "lambda_api/broker.hpp"
#include "protocol/exchange.hpp"

namespace actionloop::lambda_api {

class api_handler : public handler {
public:
    /// Both must outlive the handler; everything runs on `loop`'s thread.
    api_handler(broker& rules, boost::asio::io_context& loop) : rules_(rules), timer_(loop) {}

    bool needs_headers() const override { return true; }
    void handle(request req, reply_fn reply) override;
    /// 413 in Lambda's shape; a runtime's oversized answer fails its invocation.
    std::optional<answer> too_large(std::string_view target, size_t limit) override;

    /// Invocations are with the runtime (http/event_loop.hpp: the loop then sleeps when idle).
    bool busy() const { return rules_.busy(); }

private:
    void post(request& req, std::string_view id, bool error, const reply_fn& reply);
    void invoke(request& req, reply_fn reply);
    void arm_deadline();
    void on_deadline();

    broker& rules_;
    boost::asio::steady_timer timer_;
    std::optional<std::int64_t> armed_;  // the deadline the timer waits for
};

/// The wall clock in Unix epoch milliseconds (Lambda-Runtime-Deadline-Ms's clock).
std::int64_t epoch_ms();

}  // namespace actionloop::lambda_api
