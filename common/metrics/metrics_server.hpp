// GET /metrics on a port of its own, on the caller's io_context: a scrape calls the renderer
// there (the proxy: -metrics-port / OW_METRICS_PORT, on its server's loop; alertgw:
// --metrics-port, on a thread of its own). Any other path is 404, any other method 405.
// Needs no logging library: what it has to say goes to the caller's warning callback.
#pragma once

#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>

namespace actionloop {

/// Renders the current metrics text (called on the io thread, once per scrape).
using metrics_renderer = std::function<std::string()>;

/// Told of a failed accept (out of descriptors, say), one line without a newline; the
/// listener retries 10 ms later. Empty: the line goes to stderr.
using metrics_warning = std::function<void(const std::string&)>;

/// Binds `host`:`port` (0: a port the system picks) and serves scrapes on `io` for as long as
/// it runs; returns the port bound. Throws std::runtime_error naming the address when it
/// cannot be bound.
int start_metrics_server(boost::asio::io_context& io, const std::string& host, int port,
                         metrics_renderer render, metrics_warning warn = {});

}  // namespace actionloop
