// The HTTP server: Boost.Beast on one Boost.Asio io_context thread (accept, parse, respond),
// one session per connection (session.hpp). /init and /run, which block on the action or
// the compiler, run on a pool of worker threads and post their answer back to the session,
// so an idle, slow or vanished client costs no thread and never delays another.
#pragma once

#include <string>

#include "action_proxy.hpp"
#include "handler.hpp"

namespace actionloop {

/// Binds `host`:`port` (SO_REUSEADDR, not SO_REUSEPORT, backlog SOMAXCONN) and serves until
/// the process ends. False when the port cannot be bound. Raises the soft limit of open
/// files to the hard one first, so a thousand connections fit. With `knative` (single-
/// entrypoint mode), every request goes to it instead of /init and /run.
bool serve_http(action_proxy& proxy, const std::string& host, int port,
                knative::handler* knative = nullptr);

}  // namespace actionloop
