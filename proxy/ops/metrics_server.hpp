// GET /metrics on a port of its own (-metrics-port / OW_METRICS_PORT; off when unset), on
// the server's io_context: a scrape renders the counters there and never touches the
// action. Any other path is 404, any other method 405.
#pragma once

#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>

namespace actionloop {

/// Renders the current metrics text (called on the io thread, once per scrape).
using metrics_renderer = std::function<std::string()>;

/// Binds `host`:`port` and serves scrapes on `io` for as long as it runs. Throws
/// std::runtime_error naming the address when the port cannot be bound.
void start_metrics_server(boost::asio::io_context& io, const std::string& host, int port,
                          metrics_renderer render);

}  // namespace actionloop
