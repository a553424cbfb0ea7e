// Server configuration and routing: /init and /run on the exact path, any method; any
// other path is 200 with an empty body, as upstream.
#include "server.hpp"

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

void dispatch(action_proxy& proxy, const httplib::Request& req, httplib::Response& res) {
    const bool is_init = req.path == "/init";
    if (!is_init && req.path != "/run") {
        res.status = OK;  // upstream answers anything else with 200 and nothing
        return;
    }
    try {
        http_answer answer = is_init ? proxy.init(req.body) : proxy.run(req.body);
        res.status = answer.status;
        res.body = std::move(answer.body);
        res.set_header("Content-Type", JSON);
    } catch (const http_error& e) {
        answer_error(res, e.status(), e.what());
    } catch (const std::exception& e) {
        spdlog::error("{} failed: {}", req.path, e.what());
        answer_error(res, BAD_GATEWAY, e.what());
    }
}

std::string too_large_message(size_t limit) {
    return "The request body exceeds the limit of " + std::to_string(limit) + " bytes.";
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

    // Refuse an announced oversized body before the client sends it.
    server.set_expect_100_continue_handler(
        [limit](const httplib::Request& req, httplib::Response& res) {
            const std::string length = req.get_header_value("Content-Length");
            if (!length.empty() && std::strtoull(length.c_str(), nullptr, 10) > limit) {
                answer_error(res, PAYLOAD_TOO_LARGE, too_large_message(limit));
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

    auto handler = [&proxy](const httplib::Request& req, httplib::Response& res) {
        dispatch(proxy, req, res);
    };
    server.Get(".*", handler);
    server.Post(".*", handler);
    server.Put(".*", handler);
    server.Patch(".*", handler);
    server.Delete(".*", handler);
    server.Options(".*", handler);
}

}  // namespace actionloop
