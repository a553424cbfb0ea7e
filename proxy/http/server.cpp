// Server configuration and routing: /init and /run on the exact path, any method; any
// other path is 200 with an empty body, as upstream.
#include "server.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "http_error.hpp"

namespace actionloop {
namespace {

constexpr const char* JSON = "application/json";

void answer_error(httplib::Response& res, int status, const std::string& message) {
    res.status = status;
    res.set_content(error_body(message), JSON);
}

std::string too_large_message(size_t limit) {
    return "The request body exceeds the limit of " + std::to_string(limit) + " bytes.";
}

void dispatch(action_proxy& proxy, const std::string& path, const std::string& body,
              httplib::Response& res) {
    const bool is_init = path == "/init";
    if (!is_init && path != "/run") {
        res.status = OK;  // upstream answers anything else with 200 and nothing
        return;
    }
    try {
        http_answer answer = is_init ? proxy.init(body) : proxy.run(body);
        res.status = answer.status;
        res.body = std::move(answer.body);
        res.set_header("Content-Type", JSON);
    } catch (const http_error& e) {
        answer_error(res, e.status(), e.what());
    } catch (const std::exception& e) {
        spdlog::error("{} failed: {}", path, e.what());
        answer_error(res, BAD_GATEWAY, e.what());
    }
}

// Reads the body itself so that a chunked body is not buffered past the limit (cpp-httplib
// only enforces its limit on Content-Length, which it skips by itself). An oversized body is
// read and dropped, up to a bound, so the connection stays in step and the client gets
// its 413 instead of a reset.
void read_and_dispatch(action_proxy& proxy, size_t limit, const httplib::Request& req,
                       httplib::Response& res, const httplib::ContentReader& reader) {
    const size_t discard_max = std::max<size_t>(limit, 1u << 30);
    const std::string length = req.get_header_value("Content-Length");
    const size_t announced = length.empty() ? 0 : std::strtoull(length.c_str(), nullptr, 10);
    std::string body;
    body.reserve(std::min(announced, limit));
    bool too_large = announced > limit;
    size_t seen = 0;
    const bool complete = reader([&](const char* data, size_t n) {
        seen += n;
        if (!too_large && body.size() + n > limit) {
            too_large = true;
            std::string().swap(body);
        }
        if (!too_large) body.append(data, n);
        return seen <= discard_max;
    });
    // cpp-httplib skips an announced oversized body itself; otherwise an unfinished read
    // leaves the connection out of step, so it is closed after the answer.
    if (!complete && announced <= limit) res.set_header("Connection", "close");
    if (too_large) {
        answer_error(res, PAYLOAD_TOO_LARGE, too_large_message(limit));
    } else if (!complete) {
        answer_error(res, BAD_REQUEST, "Error reading request body: incomplete body");
    } else {
        dispatch(proxy, req.path, body, res);
    }
}

}  // namespace

void configure_server(httplib::Server& server, action_proxy& proxy) {
    const settings& config = proxy.config();
    const size_t threads = config.threads;
    const size_t limit = config.max_body_bytes;

    server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server.set_tcp_nodelay(true);  // a small answer must not wait for Nagle
    server.set_keep_alive_max_count(1u << 30);
    server.set_keep_alive_timeout(60);
    server.set_read_timeout(300, 0);  // a slow client sending a large action
    server.set_write_timeout(300, 0);
    server.set_idle_interval(0, 0);
    server.set_payload_max_length(limit);
    // cpp-httplib reads a body only for POST/PUT/PATCH/DELETE; upstream reads it for any
    // method, so a GET (or OPTIONS) that carries one is routed as a POST.
    server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response&) {
        const std::string length = req.get_header_value("Content-Length");
        const bool has_body = std::strtoull(length.c_str(), nullptr, 10) > 0 ||
                              req.has_header("Transfer-Encoding");
        if (has_body && (req.method == "GET" || req.method == "OPTIONS")) {
            const_cast<httplib::Request&>(req).method = "POST";  // httplib owns a mutable one
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });

    // Refuse an announced oversized body before the client sends it.
    server.set_expect_100_continue_handler(
        [limit](const httplib::Request& req, httplib::Response& res) {
            const std::string length = req.get_header_value("Content-Length");
            if (!length.empty() && std::strtoull(length.c_str(), nullptr, 10) > limit) {
                answer_error(res, PAYLOAD_TOO_LARGE, too_large_message(limit));
                // cpp-httplib writes this answer directly, without adding the length.
                res.set_header("Content-Length", std::to_string(res.body.size()));
                return static_cast<int>(PAYLOAD_TOO_LARGE);
            }
            return 100;
        });
    // Statuses cpp-httplib sets by itself (413, 400 on a malformed request) get a JSON body.
    server.set_error_handler(httplib::Server::HandlerWithResponse(
        [limit](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        if (res.status == PAYLOAD_TOO_LARGE) {
            answer_error(res, PAYLOAD_TOO_LARGE, too_large_message(limit));
        } else {
            answer_error(res, res.status, "HTTP error " + std::to_string(res.status));
        }
        return httplib::Server::HandlerResponse::Handled;
    }));
    server.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
            answer_error(res, INTERNAL_ERROR, "internal error");
        });

    // Methods are not checked, as upstream: every method routes on the path alone.
    auto handler = [&proxy](const httplib::Request& req, httplib::Response& res) {
        dispatch(proxy, req.path, req.body, res);
    };
    auto reading = [&proxy, limit](const httplib::Request& req, httplib::Response& res,
                                   const httplib::ContentReader& reader) {
        read_and_dispatch(proxy, limit, req, res, reader);
    };
    server.Get(".*", handler);
    server.Post(".*", reading);
    server.Put(".*", reading);
    server.Patch(".*", reading);
    server.Delete(".*", handler);
    server.Options(".*", handler);
}

bool listen_on(httplib::Server& server, const std::string& host, int port) {
    // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, which would let a
    // second proxy share the port instead of failing to start.
    int listener = -1;
    server.set_socket_options([&listener](int sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        if (listener < 0) listener = sock;
    });
    if (!server.bind_to_port(host, port)) return false;
    // Debian's cpp-httplib 0.11.4 listens with a backlog of 5: 64 clients connecting at once
    // overflow it (long tails, timeouts). Listening again only raises the backlog.
    if (listener >= 0) ::listen(listener, SOMAXCONN);
    return server.listen_after_bind();
}

}  // namespace actionloop
