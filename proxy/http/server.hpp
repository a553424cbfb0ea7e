// http/: the HTTP layer, Beast I/O only. This header is the folder's public face; behind it are
//   session.hpp    one connection: read a request, hand it to the handler, write the answer
//   timeouts.hpp   the connections' deadlines, swept once a second
//   event_loop.hpp running the loop, with a short poll before it sleeps (OW_SPIN_US)
//
// The HTTP server: Boost.Beast on one Boost.Asio io_context thread (accept, parse, respond),
// one session per connection. Every request goes to one handler (protocol/exchange.hpp), on
// the loop's thread; the handler answers on that thread too, now (/run's action pipes are
// descriptors on the same loop) or later (/init, which blocks, runs on a worker and posts its
// answer back). An idle, slow or vanished client costs no thread and never delays another.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "engine/activation_queue.hpp"
#include "ops/metrics.hpp"
#include "protocol/exchange.hpp"

namespace actionloop {

struct listen_options {
    std::string host;
    int port = 8080;
    size_t max_body_bytes = 0;               // OW_MAX_BODY_BYTES: 413 past it
    std::chrono::microseconds spin{0};       // OW_SPIN_US: the idle poll (event_loop.hpp)
    admission_limit* connections = nullptr;  // OW_MAX_CONNECTIONS (null: no bound), on the loop
    activation_metrics* metrics = nullptr;   // counts the connections refused (may be null)
};

/// Binds `options.host`:`options.port` (SO_REUSEADDR, not SO_REUSEPORT, backlog SOMAXCONN) and
/// serves every request with `requests` on `loop` until the loop stops. `busy` says whether
/// answers are awaited (the idle poll runs only then). Throws std::runtime_error saying why
/// when the port cannot be listened on (e.g. "cannot listen on 0.0.0.0:8080: Address already
/// in use"). Raises the soft limit of open files to the hard one first, so a thousand
/// connections fit.
void serve_http(boost::asio::io_context& loop, handler& requests, const listen_options& options,
                const std::function<bool()>& busy);

}  // namespace actionloop
