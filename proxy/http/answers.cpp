#include "http/answers.hpp"

#include <spdlog/spdlog.h>

#include "http/http_error.hpp"

namespace actionloop {

route route_of(std::string_view target) {
    const std::string_view path = target.substr(0, target.find('?'));
    if (path == "/init") return route::init;
    if (path == "/run") return route::run;
    if (path == "/health") return route::health;
    return route::other;
}

http_answer failure_answer(const char* step, const std::exception& error) {
    if (const auto* refused = dynamic_cast<const http_error*>(&error)) {
        return {refused->status(), error_body(refused->what())};
    }
    spdlog::error("{} failed: {}", step, error.what());
    return {BAD_GATEWAY, error_body(error.what())};
}

http_answer answer_for(action_proxy& proxy, route which, const std::string& body) {
    const char* name = which == route::init ? "/init" : "/run";
    try {
        return which == route::init ? proxy.init(body) : proxy.run_blocking(body);
    } catch (const std::exception& e) {
        return failure_answer(name, e);
    } catch (...) {
        spdlog::error("{} failed", name);
        return {INTERNAL_ERROR, error_body("internal error")};
    }
}

std::string too_large_message(size_t limit) {
    return "The request body exceeds the limit of " + std::to_string(limit) +
           " bytes (OW_MAX_BODY_BYTES).";
}

}  // namespace actionloop
