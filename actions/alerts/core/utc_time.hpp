// utc_time.hpp — seconds since the epoch as UTC text in a strftime format: what the
// explanations, the console's pages and alertctl print.
#pragma once

#include <ctime>
#include <string>

namespace alerts {

inline std::string utc_time(double seconds, const char* format) {
    const std::time_t t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char text[64];
    const std::size_t n = std::strftime(text, sizeof text, format, &tm);
    return std::string(text, n);
}

}  // namespace alerts
