// time_interval.hpp — named time intervals in a location (docs/alerts.md, "Time intervals"):
// Alertmanager's `time_intervals` — times of day, weekdays, days of the month, months and
// years — read in an IANA time zone from the system's tz database (Debian's tzdata) through
// Howard Hinnant's date/tz (libhowardhinnant-date-dev), the library std::chrono's time zones
// were standardised from. Pure: the time tested is the caller's (an event's), never a clock.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace date {
class time_zone;
}

namespace alerts {

/// Thrown for an interval that does not have the documented shape; what() says why.
class time_interval_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// An inclusive range of ints [first, second].
using int_range = std::pair<int, int>;

/// One entry of a named interval: every field that is given must match (an empty one matches
/// every time).
struct time_range_spec {
    std::vector<std::pair<int, int>> times;  // minutes of the local day, [start, end)
    std::vector<int_range> weekdays;         // 0 = Sunday … 6 = Saturday
    std::vector<int_range> days_of_month;    // 1…31, or -31…-1 counted from the month's end
    std::vector<int_range> months;           // 1…12
    std::vector<int_range> years;
    const date::time_zone* zone = nullptr;  // its `location`; nullptr: UTC
};

/// A named interval: a time is inside when any of its entries matches.
struct time_interval {
    std::string name;
    std::vector<time_range_spec> specs;

    bool contains(double epoch_seconds) const;
};

/// The most entries a config may give one interval, and ranges one field may list.
constexpr std::size_t MAX_INTERVAL_SPECS = 64;
constexpr std::size_t MAX_INTERVAL_RANGES = 64;

/// Parses one named interval: an array of entries as Alertmanager writes them
/// (`times: [{start_time: "HH:MM", end_time: "HH:MM"}]`, `weekdays: ["monday:friday"]`,
/// `days_of_month: ["1:5", "-3:-1"]`, `months: ["may:august"]`, `years: ["2027"]`,
/// `location: "Europe/Berlin"`). Throws time_interval_error naming the entry and field.
time_interval parse_time_interval(const std::string& name, const nlohmann::json& j);

/// Whether one entry matches the time.
bool spec_contains(const time_range_spec& spec, double epoch_seconds);

}  // namespace alerts
