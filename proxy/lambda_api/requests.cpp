#include "lambda_api/requests.hpp"

#include <stdexcept>
#include <utility>

#include <boost/algorithm/string/predicate.hpp>

#include "protocol/base64.hpp"
#include "protocol/error_answer.hpp"

namespace actionloop::lambda_api {
namespace {

constexpr std::string_view INVOCATION = "/2018-06-01/runtime/invocation/";
constexpr std::string_view INIT_ERROR = "/2018-06-01/runtime/init/error";
constexpr std::string_view FUNCTIONS = "/2015-03-31/functions/";
constexpr std::string_view INVOCATIONS = "/invocations";
constexpr std::string_view STATS = "/_lambda-api/stats";

route to(endpoint e, std::string_view id = {}) { return route{e, id, {}}; }

route with_method(std::string_view method, std::string_view wanted, route r) {
    if (method == wanted) return r;
    return route{endpoint::wrong_method, {}, wanted};
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// /2018-06-01/runtime/invocation/<rest>: next, {id}/response or {id}/error.
route invocation_route(std::string_view method, std::string_view rest) {
    if (rest == "next") return with_method(method, "GET", to(endpoint::next));
    const size_t slash = rest.find('/');
    if (slash == 0 || slash == std::string_view::npos) return to(endpoint::not_found);
    const std::string_view id = rest.substr(0, slash);
    const std::string_view what = rest.substr(slash + 1);
    if (what == "response") return with_method(method, "POST", to(endpoint::response, id));
    if (what == "error") return with_method(method, "POST", to(endpoint::error, id));
    return to(endpoint::not_found);
}

// The decoded client context goes out again as a header's value: no control characters.
void check_header_safe(const std::string& text) {
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            throw std::invalid_argument("it decodes to a control character at byte " +
                                        std::to_string(i));
        }
    }
}

}  // namespace

route route_of(std::string_view method, std::string_view target) {
    const std::string_view path = target.substr(0, target.find('?'));
    if (starts_with(path, INVOCATION)) {
        return invocation_route(method, path.substr(INVOCATION.size()));
    }
    if (path == INIT_ERROR) return with_method(method, "POST", to(endpoint::init_error));
    if (starts_with(path, FUNCTIONS) && ends_with(path, INVOCATIONS)) {
        const std::string_view name =
            path.substr(FUNCTIONS.size(), path.size() - FUNCTIONS.size() - INVOCATIONS.size());
        if (!name.empty() && name.find('/') == std::string_view::npos) {
            return with_method(method, "POST", to(endpoint::invoke));
        }
    }
    if (path == STATS) return with_method(method, "GET", to(endpoint::stats));
    return to(endpoint::not_found);
}

std::optional<std::string_view> header_of(const header_list& headers, std::string_view name) {
    for (const auto& [field, value] : headers) {
        if (boost::algorithm::iequals(field, name)) return std::string_view(value);
    }
    return std::nullopt;
}

invoke_request read_invoke(const header_list& headers, std::string body) {
    invoke_request invoke;
    invoke.event = std::move(body);
    invoke.trace_id = header_of(headers, "X-Amzn-Trace-Id").value_or("");
    invoke.cognito_identity = header_of(headers, "X-Amz-Cognito-Identity").value_or("");
    invoke.tenant_id = header_of(headers, "X-Amz-Tenant-Id").value_or("");
    const std::string_view context = header_of(headers, "X-Amz-Client-Context").value_or("");
    try {
        invoke.client_context = decode_base64(context);
    } catch (const refusal& e) {
        // "cannot decode the request: illegal base64 data at input byte N": the reason only.
        const std::string why = e.what();
        throw std::invalid_argument(
            why.substr(why.find(": ") == std::string::npos ? 0 : why.find(": ") + 2));
    }
    check_header_safe(invoke.client_context);
    return invoke;
}

runtime_post read_post(std::string_view request_id, const header_list& headers, std::string body) {
    runtime_post post;
    post.request_id = std::string(request_id);
    post.body = std::move(body);
    if (const auto echo = header_of(headers, "Lambda-Runtime-Invocation-Id")) {
        post.invocation_id = std::string(*echo);
    }
    post.error_type = header_of(headers, "Lambda-Runtime-Function-Error-Type").value_or("");
    return post;
}

}  // namespace actionloop::lambda_api
