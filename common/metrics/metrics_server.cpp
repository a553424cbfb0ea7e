#include "metrics/metrics_server.hpp"

#include <utility>

#include "http/http_server.hpp"

namespace actionloop {

namespace {
constexpr const char* TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";
}  // namespace

int start_metrics_server(boost::asio::io_context& io, const std::string& host, int port,
                         metrics_renderer render, metrics_warning warn) {
    auto handler = [render = std::move(render)](const http_request& request) {
        http_response response;
        if (request.path != "/metrics") {
            response.status = 404;
        } else if (request.method != "GET" && request.method != "HEAD") {
            response.status = 405;
            response.headers.emplace_back("Allow", "GET, HEAD");
        } else {
            response.content_type = TEXT_FORMAT;
            response.body = render();
        }
        return response;
    };
    return start_http_server(io, host, port, std::move(handler), "metrics", std::move(warn));
}

}  // namespace actionloop
