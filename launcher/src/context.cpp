// actionloop::context: the activation's __OW_* variables, read once per construction.
#include <actionloop/action.hpp>

#include <cstdlib>

namespace actionloop {
namespace {

std::string env_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
}

std::chrono::system_clock::time_point parse_deadline(const std::string& text) {
    char* end = nullptr;
    long long ms = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || end == nullptr || *end != '\0' || ms <= 0) {
        return std::chrono::system_clock::time_point::max();
    }
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
}

}  // namespace

context::context()
    : activation_id_(env_or_empty("__OW_ACTIVATION_ID")),
      action_name_(env_or_empty("__OW_ACTION_NAME")),
      namespace_(env_or_empty("__OW_NAMESPACE")),
      api_host_(env_or_empty("__OW_API_HOST")),
      deadline_(parse_deadline(env_or_empty("__OW_DEADLINE"))) {}

std::chrono::milliseconds context::time_left() const {
    using namespace std::chrono;
    if (deadline_ == system_clock::time_point::max()) return hours(24 * 365);
    auto left = duration_cast<milliseconds>(deadline_ - system_clock::now());
    return left.count() > 0 ? left : milliseconds(0);
}

}  // namespace actionloop
