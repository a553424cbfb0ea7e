// time_interval.cpp — parsing named time intervals and testing a time against them.
#include "core/time_interval.hpp"

// The configuration Debian's libdate-tz.so was built with (its CMake package says the same),
// here too for a build without that package's flags: the action's sources through `compile`.
#ifndef USE_OS_TZDB
#define USE_OS_TZDB 1
#endif
#ifndef ONLY_C_LOCALE
#define ONLY_C_LOCALE 1
#endif
#ifndef HAS_STRING_VIEW
#define HAS_STRING_VIEW 1
#endif
#include <date/date.h>
#include <date/tz.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <string_view>

namespace alerts {

namespace {

using json = nlohmann::json;

constexpr std::array<std::string_view, 7> WEEKDAYS = {"sunday",   "monday", "tuesday", "wednesday",
                                                      "thursday", "friday", "saturday"};
constexpr std::array<std::string_view, 12> MONTHS = {
    "january", "february", "march",     "april",   "may",      "june",
    "july",    "august",   "september", "october", "november", "december"};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
    throw time_interval_error(where + " " + what);
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool parse_int(std::string_view s, int& out) {
    if (!s.empty() && s.front() == '+') return false;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

// One value of a field: a name from `names` (1-based unless `zero_based`) or a number.
template <std::size_t N>
bool parse_value(std::string_view s, const std::array<std::string_view, N>* names, bool zero_based,
                 int& out) {
    if (names) {
        const std::string l = lower(s);
        for (std::size_t i = 0; i < N; ++i) {
            if ((*names)[i] == l) {
                out = static_cast<int>(i) + (zero_based ? 0 : 1);
                return true;
            }
        }
    }
    return parse_int(s, out);
}

struct field_rule {
    const char* key;
    int min;
    int max;
    bool negative_from_end;  // days_of_month: -1 is the month's last day
    const char* says;        // what a value is, for the error
};

template <std::size_t N>
std::vector<int_range> parse_ranges(const json& j, const std::string& where, const field_rule& rule,
                                    const std::array<std::string_view, N>* names, bool zero_based) {
    if (!j.is_array() || j.size() > MAX_INTERVAL_RANGES) {
        fail(where, "must be an array of at most " + std::to_string(MAX_INTERVAL_RANGES) +
                        " strings like \"a\" or \"a:b\"");
    }
    std::vector<int_range> out;
    for (const json& item : j) {
        if (!item.is_string()) fail(where, "must be an array of strings like \"a\" or \"a:b\"");
        const std::string text = item.get<std::string>();
        const std::string_view s(text);
        const std::size_t colon = s.find(':');
        const std::string_view a = s.substr(0, colon);
        const std::string_view b = colon == std::string_view::npos ? a : s.substr(colon + 1);
        int first = 0;
        int last = 0;
        const auto valid = [&](int v) {
            return v >= rule.min && v <= rule.max && (!rule.negative_from_end || v != 0);
        };
        if (!parse_value(a, names, zero_based, first) || !parse_value(b, names, zero_based, last) ||
            !valid(first) || !valid(last)) {
            fail(where, "has '" + text + "', which is not " + rule.says);
        }
        // A range runs forwards; days counted from both ends ("1:-1") are compared per month.
        if ((first < 0) == (last < 0) && first > last) {
            fail(where, "has '" + text + "', which runs backwards");
        }
        out.emplace_back(first, last);
    }
    return out;
}

// "HH:MM" as minutes of the day; "24:00" only as an end.
int parse_clock(const json& j, const std::string& where, bool end) {
    if (!j.is_string()) fail(where, "must be a string \"HH:MM\"");
    const std::string s = j.get<std::string>();
    int h = 0;
    int m = 0;
    if (s.size() != 5 || s[2] != ':' || !parse_int(std::string_view(s).substr(0, 2), h) ||
        !parse_int(std::string_view(s).substr(3, 2), m) || h < 0 || m < 0 || m > 59 || h > 24 ||
        (h == 24 && (m != 0 || !end))) {
        fail(where, "has '" + s + "', which is not a time \"HH:MM\" from 00:00 to 24:00");
    }
    return h * 60 + m;
}

std::vector<std::pair<int, int>> parse_times(const json& j, const std::string& where) {
    if (!j.is_array() || j.size() > MAX_INTERVAL_RANGES) {
        fail(where, "must be an array of at most " + std::to_string(MAX_INTERVAL_RANGES) +
                        " {\"start_time\": \"HH:MM\", \"end_time\": \"HH:MM\"}");
    }
    std::vector<std::pair<int, int>> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const std::string at = where + "[" + std::to_string(i) + "]";
        const json& t = j[i];
        if (!t.is_object() || t.size() != 2 || !t.contains("start_time") ||
            !t.contains("end_time")) {
            fail(at, "must be {\"start_time\": \"HH:MM\", \"end_time\": \"HH:MM\"}");
        }
        const int start = parse_clock(t["start_time"], at + ".start_time", false);
        const int end = parse_clock(t["end_time"], at + ".end_time", true);
        if (end <= start) {
            fail(at, "ends before it starts (a range over midnight is two ranges: to 24:00, "
                     "and from 00:00)");
        }
        out.emplace_back(start, end);
    }
    return out;
}

time_range_spec parse_spec(const json& j, const std::string& where) {
    if (!j.is_object()) fail(where, "must be an object");
    static constexpr field_rule WEEKDAY{"weekdays", 0, 6, false, "a weekday (monday, …)"};
    static constexpr field_rule DAY{"days_of_month", -31, 31, true,
                                    "a day of the month (1 to 31, or -31 to -1 from its end)"};
    static constexpr field_rule MONTH{"months", 1, 12, false, "a month (january, … or 1 to 12)"};
    static constexpr field_rule YEAR{"years", 1, 9999, false, "a year"};
    time_range_spec spec;
    for (const auto& [key, value] : j.items()) {
        std::string at = where;
        at.append(".").append(key);
        if (key == "times") {
            spec.times = parse_times(value, at);
        } else if (key == WEEKDAY.key) {
            spec.weekdays = parse_ranges(value, at, WEEKDAY, &WEEKDAYS, true);
        } else if (key == DAY.key) {
            spec.days_of_month = parse_ranges<1>(value, at, DAY, nullptr, false);
        } else if (key == MONTH.key) {
            spec.months = parse_ranges(value, at, MONTH, &MONTHS, false);
        } else if (key == YEAR.key) {
            spec.years = parse_ranges<1>(value, at, YEAR, nullptr, false);
        } else if (key == "location") {
            if (!value.is_string()) fail(at, "must be an IANA time zone name");
            const std::string location = value.get<std::string>();
            if (location == "Local") {
                fail(at, "is 'Local', which depends on the machine: name the zone "
                         "(e.g. Europe/Berlin)");
            }
            if (location != "UTC") {
                try {
                    spec.zone = date::locate_zone(location);
                } catch (const std::exception&) {
                    fail(at, "names '" + location +
                                 "', which is not a time zone of the system's tz database "
                                 "(/usr/share/zoneinfo)");
                }
            }
        } else {
            fail(where, "has an unknown key '" + key +
                            "' (known keys: times, weekdays, days_of_month, months, years, "
                            "location)");
        }
    }
    return spec;
}

bool in_any(const std::vector<int_range>& ranges, int v) {
    if (ranges.empty()) return true;
    return std::any_of(ranges.begin(), ranges.end(),
                       [v](const int_range& r) { return r.first <= v && v <= r.second; });
}

}  // namespace

time_interval parse_time_interval(const std::string& name, const json& j) {
    if (!j.is_array() || j.empty() || j.size() > MAX_INTERVAL_SPECS) {
        fail("time_intervals." + name,
             "must be an array of 1 to " + std::to_string(MAX_INTERVAL_SPECS) + " entries");
    }
    time_interval out;
    out.name = name;
    for (std::size_t i = 0; i < j.size(); ++i) {
        out.specs.push_back(
            parse_spec(j[i], "time_intervals." + name + "[" + std::to_string(i) + "]"));
    }
    return out;
}

bool spec_contains(const time_range_spec& spec, double epoch_seconds) {
    // Beyond ±2^40 s (±34,800 years) there is no calendar to speak of; the core's times are
    // bounded far inside it (docs/alerts.md, "Timestamps").
    if (!(std::fabs(epoch_seconds) < 1099511627776.0)) return false;
    using namespace std::chrono;
    const date::sys_seconds s{seconds{static_cast<std::int64_t>(std::floor(epoch_seconds))}};
    const seconds offset = spec.zone ? spec.zone->get_info(s).offset : seconds{0};
    const date::sys_seconds local = s + offset;  // the wall clock's reading, as if in UTC
    const date::sys_days day = date::floor<date::days>(local);
    if (!spec.times.empty()) {
        const int minute = static_cast<int>(duration_cast<minutes>(local - day).count());
        if (!std::any_of(spec.times.begin(), spec.times.end(), [minute](const auto& r) {
                return r.first <= minute && minute < r.second;
            })) {
            return false;
        }
    }
    if (!in_any(spec.weekdays, static_cast<int>(date::weekday(day).c_encoding()))) return false;
    const date::year_month_day ymd(day);
    if (!in_any(spec.months, static_cast<int>(static_cast<unsigned>(ymd.month())))) return false;
    if (!in_any(spec.years, static_cast<int>(ymd.year()))) return false;
    if (!spec.days_of_month.empty()) {
        const int length = static_cast<int>(static_cast<unsigned>(
            date::year_month_day_last(ymd.year(), date::month_day_last(ymd.month())).day()));
        const int d = static_cast<int>(static_cast<unsigned>(ymd.day()));
        const bool hit = std::any_of(
            spec.days_of_month.begin(), spec.days_of_month.end(), [&](const int_range& r) {
                const int first = std::max(1, r.first < 0 ? length + r.first + 1 : r.first);
                const int last = std::min(length, r.second < 0 ? length + r.second + 1 : r.second);
                return first <= d && d <= last;
            });
        if (!hit) return false;
    }
    return true;
}

bool time_interval::contains(double epoch_seconds) const {
    return std::any_of(specs.begin(), specs.end(), [epoch_seconds](const time_range_spec& s) {
        return spec_contains(s, epoch_seconds);
    });
}

}  // namespace alerts
