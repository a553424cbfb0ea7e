// Resolving OW_WORKERS (worker_count.hpp).
#include "host/worker_count.hpp"

#include <algorithm>
#include <string_view>

namespace actionloop {
namespace {

std::string_view trimmed(std::string_view text) {
    const size_t first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    const size_t last = text.find_last_not_of(" \t");
    return text.substr(first, last - first + 1);
}

// A count of 1 or more, saturated (any count past the cap is capped anyway); 0 when `text`
// is not one: empty, zero, negative, or not all digits.
unsigned long long count_of(std::string_view text) {
    if (text.empty()) return 0;
    unsigned long long value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return 0;
        value = std::min<unsigned long long>(value * 10 + static_cast<unsigned>(c - '0'), 1u << 30);
    }
    return value;
}

}  // namespace

worker_count resolve_worker_count(const std::string& proxy_value,
                                  const std::optional<std::string>& init_value,
                                  unsigned max_workers, const std::function<unsigned()>& cpus) {
    const bool from_init = init_value && !trimmed(*init_value).empty();
    const std::string& given = from_init ? *init_value : proxy_value;
    const std::string_view value = trimmed(given);
    worker_count resolved;
    if (value.empty()) return resolved;  // unset: one worker, as before the pool
    unsigned long long asked = value == "auto" ? std::max(1u, cpus()) : count_of(value);
    if (asked == 0) {
        resolved.error = "OW_WORKERS=\"" + given + "\"" + (from_init ? " (in /init's env)" : "") +
                         " is not a worker count (a number from 1, or auto)";
        return resolved;
    }
    const unsigned cap = std::max(1u, max_workers);
    resolved.capped = asked > cap;
    resolved.count = static_cast<unsigned>(std::min<unsigned long long>(asked, cap));
    return resolved;
}

}  // namespace actionloop
