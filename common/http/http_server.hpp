// A small HTTP/1.1 server on the caller's io_context, for the side doors of the programs (the
// proxy's and alertgw's /metrics, alertgw's console): one handler answers every request, on the
// io thread. Bounds first: the request's head and body are limited before they are read (431
// and 413, then the connection closes), a malformed request is a 400, an idle connection is
// closed after `idle`. No logging library: what it has to say goes to the caller's callback.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "http/query_string.hpp"

namespace actionloop {

struct http_request {
    std::string method;  // "GET", "POST", ...
    std::string path;    // the target before '?', as sent (not decoded)
    std::string query;   // after '?', as sent
    std::string body;
    std::string authorization;  // the Authorization header
    std::string content_type;
};

struct http_response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;  // more headers (Allow, Location)
};

/// Answers one request (called on the io thread; an exception becomes a 500 naming it).
using http_handler = std::function<http_response(const http_request&)>;

/// Told of a failed accept (out of descriptors, say), one line without a newline; the
/// listener retries 10 ms later. Empty: the line goes to stderr.
using http_warning = std::function<void(const std::string&)>;

struct http_limits {
    std::size_t max_head = 16 * 1024;   // request line and headers
    std::size_t max_body = 256 * 1024;  // the body
    std::chrono::seconds idle{30};      // a connection with no complete request in this time
};

/// Binds `host`:`port` (0: a port the system picks) and serves on `io` for as long as it runs;
/// returns the port bound. Throws std::runtime_error naming the address when it cannot bind.
/// `name` starts the warning lines ("metrics: cannot accept a connection: ...").
int start_http_server(boost::asio::io_context& io, const std::string& host, int port,
                      http_handler handler, const std::string& name, http_warning warn = {},
                      http_limits limits = {});

}  // namespace actionloop
