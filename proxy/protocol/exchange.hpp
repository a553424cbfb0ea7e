// protocol/: the runtime protocol (docs/protocol.md) between the HTTP server above and the
// host of the action below. This header is the folder's public face: what the server hands
// to a handler (a request) and gets back (an answer). Behind it are
//   router.hpp       the classic protocol: /init, /run, /health; admission and metrics
//   init_step.hpp    /init: the body decoded, the host's init, its outcome as the answer
//   run_step.hpp     /run: the deadline, the host's activation, its outcome as the answer
//   health.hpp       /health and the 503 of a draining proxy
//   error_answer.hpp the one renderer of every error answer, and the statuses
//   knative/         single-entrypoint mode: one request to / as an init, a run, or both
// The protocol layer is the only code that maps outcomes to statuses and bodies. It knows no
// Beast: the HTTP layer (http/) reads and writes, the host (host/) runs the action.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ops/outcome.hpp"
#include "ops/shutdown.hpp"

namespace actionloop {

using header_list = std::vector<std::pair<std::string, std::string>>;

/// A connection as a handler that holds its request unanswered sees it (a long poll: the local
/// Lambda Runtime API's parked GET …/invocation/next). Without it, a client that went away
/// would only be found when its answer is written, too late to give that answer to another.
class client_watch {
public:
    /// Asks to be told, once, on the event loop, that the client closed the connection before
    /// the request's answer: `gone` runs then, the connection is closed, and the reply may be
    /// dropped unanswered. The answer ends the watch; a client that sends more bytes first (a
    /// pipelined request) ends it too, untold. At most one watch per request.
    virtual void on_gone(std::function<void()> gone) = 0;

protected:
    ~client_watch() = default;
};

/// One HTTP request as the server read it.
struct request {
    std::string_view method;  // as sent, e.g. "POST"; valid until handle() returns
    std::string_view target;  // path and query; valid until handle() returns
    header_list headers;      // as received, in order: only for a handler that needs_headers()
    std::string body;
    /// Where an admitted /init or /run holds its place in the drain (ops/shutdown.hpp): the
    /// server keeps it until the answer is written, so a drain waits for the write.
    std::optional<in_flight_ticket>* ticket = nullptr;
    /// The connection, for a handler that may hold the request (valid while `reply` is held).
    client_watch* watch = nullptr;
};

/// One HTTP answer, for the server to write.
struct answer {
    int status = 200;
    std::string body;
    bool json = true;       // Content-Type: application/json
    header_list headers;    // more header fields, in order (single-entrypoint mode)
    bool bodyless = false;  // 204/304: no body, no Content-Length
    bool head = false;      // an answer to HEAD: the body's Content-Length, not the body
    bool last = false;      // the connection ends after this answer
    /// What the activation came to (/init and /run; ops/metrics counts it as it is): set where
    /// the answer is made, by error_answer() for every error, by run_step from the action's
    /// line; a plain answer is a success.
    activation_outcome outcome = activation_outcome::success;
};

/// Gets the answer to one request, on the event loop's thread.
using reply_fn = std::function<void(answer)>;

/// What the server calls for every request.
class handler {
public:
    virtual ~handler() = default;
    /// Whether request.headers must be filled (single-entrypoint mode forwards them).
    virtual bool needs_headers() const { return false; }
    /// On the event loop: answers `req` through `reply`, now or later, exactly once.
    virtual void handle(request req, reply_fn reply) = 0;
    /// The answer to a request whose body is over the server's bound, found before the body
    /// is read (`target` as sent, `limit` the bound); nullopt: the server's own 413
    /// (too_large_answer). A handler with its own error shape renders it here.
    virtual std::optional<answer> too_large(std::string_view /*target*/, size_t /*limit*/) {
        return std::nullopt;
    }
};

}  // namespace actionloop
