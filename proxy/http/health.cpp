#include "health.hpp"

#include "http_error.hpp"

namespace actionloop {

http_answer health_answer(bool draining) {
    if (draining) return shutting_down_answer();
    return {OK, "{\"ok\":true}\n"};
}

http_answer shutting_down_answer() { return {SERVICE_UNAVAILABLE, error_body(SHUTTING_DOWN)}; }

}  // namespace actionloop
