// console_site.cpp — see console_site.hpp.
#include "gateway/console/console_site.hpp"

#include "gateway/console/console_pages.hpp"

namespace alerts::gateway {

namespace {

using actionloop::http_request;
using actionloop::http_response;
using json = nlohmann::json;

http_response html(std::string page) {
    http_response r;
    r.content_type = "text/html; charset=utf-8";
    r.body = std::move(page);
    r.headers.emplace_back("Cache-Control", "no-store");
    // The pages' own script and style only; nothing from elsewhere, no framing.
    r.headers.emplace_back("Content-Security-Policy",
                           "default-src 'self'; script-src 'unsafe-inline'; "
                           "style-src 'unsafe-inline'; frame-ancestors 'none'");
    return r;
}

}  // namespace

console_site::console_site(console_api& api, const delay_timeline& delays,
                           std::function<double()> clock)
    : api_(api), delays_(delays), clock_(std::move(clock)) {}

http_response console_site::handle(const http_request& request) {
    if (request.path.rfind("/api/v1/", 0) == 0) return api_.handle(request);
    if (request.method != "GET" && request.method != "HEAD") {
        http_response r;
        r.status = 405;
        r.headers.emplace_back("Allow", "GET, HEAD");
        return r;
    }
    const double now = clock_();
    // A page is a view over the API's answer to the same question.
    auto ask = [&](const std::string& path, const std::string& query) -> std::pair<int, json> {
        http_request inner;
        inner.method = "GET";
        inner.path = path;
        inner.query = query;
        const http_response r = api_.handle(inner);
        return {r.status, json::parse(r.body, nullptr, false)};
    };
    auto failed = [](const std::pair<int, json>& answer) {
        http_response r;
        r.status = answer.first;
        r.body = "the console cannot answer now: " +
                 (answer.second.is_object() ? answer.second.value("error", "") : "") + "\n";
        return r;
    };
    if (request.path == "/") {
        http_response r;
        r.status = 302;
        r.headers.emplace_back("Location", "/offline");
        return r;
    }
    if (request.path == "/health") {
        http_response r;
        r.body = "ok\n";
        return r;
    }
    if (request.path == "/offline" || request.path == "/flapping") {
        const std::string account = actionloop::query_value(request.query, "account");
        const auto answer = ask("/api/v1/state", account.empty() ? "" : "account=" + account);
        if (answer.first != 200) return failed(answer);
        return html(request.path == "/offline" ? offline_page(answer.second, account, now)
                                               : flapping_page(answer.second, now));
    }
    if (request.path == "/silences") {
        const auto answer = ask("/api/v1/silences", "");
        if (answer.first != 200) return failed(answer);
        return html(silences_page(answer.second, now));
    }
    if (request.path == "/deadletters") {
        const auto answer = ask("/api/v1/deadletters", "count=200");
        if (answer.first != 200) return failed(answer);
        return html(dead_letters_page(answer.second));
    }
    if (request.path == "/notifications") {
        const auto answer = ask("/api/v1/notifications", "count=200");
        if (answer.first != 200) return failed(answer);
        return html(notifications_page(answer.second, now));
    }
    if (request.path == "/delay") return html(delay_page(delays_.points(), now));
    http_response r;
    r.status = 404;
    r.body = "not found\n";
    return r;
}

}  // namespace alerts::gateway
