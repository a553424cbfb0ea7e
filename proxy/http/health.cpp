#include "http/health.hpp"

#include "http/http_error.hpp"

namespace actionloop {

http_answer health_answer(bool draining, const std::optional<std::string>& overrun) {
    if (draining) return shutting_down_answer();
    if (overrun) return {SERVICE_UNAVAILABLE, error_body(*overrun)};
    return {OK, "{\"ok\":true}\n"};
}

http_answer shutting_down_answer() { return {SERVICE_UNAVAILABLE, error_body(SHUTTING_DOWN)}; }

}  // namespace actionloop
