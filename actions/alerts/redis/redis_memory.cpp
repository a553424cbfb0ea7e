// redis_memory.cpp — INFO memory read and judged (pure: no connection; the query is in
// redis_memory_query.cpp).
#include "redis/redis_memory.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace alerts {

namespace {

// The value of `name:` on a line of its own, or null.
std::optional<std::uint64_t> field(std::string_view info, std::string_view name) {
    std::size_t at = 0;
    while (at < info.size()) {
        std::size_t end = info.find('\n', at);
        if (end == std::string_view::npos) end = info.size();
        std::string_view line = info.substr(at, end - at);
        at = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.size() <= name.size() || line.substr(0, name.size()) != name ||
            line[name.size()] != ':') {
            continue;
        }
        const std::string_view digits = line.substr(name.size() + 1);
        std::uint64_t v = 0;
        const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
        return v;
    }
    return std::nullopt;
}

std::string megabytes(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return text;
}

}  // namespace

std::optional<redis_memory> parse_info_memory(std::string_view info) {
    const auto used = field(info, "used_memory");
    const auto max = field(info, "maxmemory");
    if (!used || !max) return std::nullopt;
    return redis_memory{*used, *max};
}

double memory_share(const redis_memory& m) {
    return m.maxmemory == 0 ? 0 : static_cast<double>(m.used) / static_cast<double>(m.maxmemory);
}

std::string memory_warning(const redis_memory& m, std::string_view label, double share) {
    if (m.maxmemory == 0 || memory_share(m) < share) return {};
    // Whole percents; far above 100 % only after a maxmemory lowered below the use (capped:
    // the share of two 64-bit figures fits no int).
    const auto percent = static_cast<std::uint64_t>(std::min(memory_share(m) * 100, 1e15));
    return "redis " + std::string(label) + ": used_memory " + megabytes(m.used) + " is " +
           std::to_string(percent) + " % of maxmemory " + megabytes(m.maxmemory) +
           ": at maxmemory Redis refuses every commit (noeviction) and alerting stops; raise "
           "maxmemory, or lower ALERT_OUTBOX_MAXLEN, or check that alertgw keeps up";
}

}  // namespace alerts
