// http/: the HTTP layer. This header is the folder's public face; behind it are
//   session.hpp    one connection: read a request, dispatch it, write the answer, keep-alive
//   answers.hpp    routing, and the one place /init and /run outcomes become HTTP answers
//   http_error.hpp the failure every protocol step throws (a status and a message)
//   timeouts.hpp   the connections' deadlines, swept once a second
//   event_loop.hpp running the loop, with a short poll before it sleeps (OW_SPIN_US)
//
// The HTTP server: Boost.Beast on one Boost.Asio io_context thread (accept, parse, respond),
// one session per connection (session.hpp). /run goes to the activation engine on that same
// thread (the action's pipes are descriptors on the same io_context: engine/engine.hpp), so an
// activation costs no thread hand-off; /init, which blocks on extraction, the compiler and the
// action's start, runs on a pool of worker threads and posts its answer back to the session.
// An idle, slow or vanished client costs no thread and never delays another. /health and the
// metrics port (ops/metrics_server.hpp) are answered on the io thread too.
#pragma once

#include <string>

#include "action_proxy.hpp"
#include "knative/handler.hpp"
#include "ops/metrics.hpp"
#include "ops/shutdown.hpp"

namespace actionloop {

/// What the server reports to and reads from ops/: the drain and the metrics.
struct server_ops {
    drain_state& drain;
    activation_metrics& metrics;
    int metrics_port = 0;                 // GET /metrics on host:metrics_port; 0: not served
    knative::handler* knative = nullptr;  // single-entrypoint mode: every request goes there
};

/// Binds `host`:`port` (SO_REUSEADDR, not SO_REUSEPORT, backlog SOMAXCONN) and serves until
/// the process ends. Throws std::runtime_error saying why when the port or the metrics port
/// cannot be listened on (e.g. "cannot listen on 0.0.0.0:8080: Address already in use"). Raises the
/// soft limit of open files to the hard one first, so a thousand connections fit. With
/// `ops.knative` (single-entrypoint mode), every request but /health goes to it instead of /init
/// and /run.
void serve_http(action_proxy& proxy, const std::string& host, int port, const server_ops& ops);

}  // namespace actionloop
