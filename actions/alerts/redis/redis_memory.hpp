// redis_memory.hpp — how close Redis is to refusing writes. With `maxmemory` and the
// recommended `noeviction`, a Redis at its limit refuses every commit (an `OOM` error) and
// alerting stops; this says so well before: used_memory against maxmemory from INFO memory.
// The parser and the warning are pure (tests/alerts/redis_memory_test.cpp); query_redis_memory
// asks a server; memory_watch spaces the questions out (one INFO per `every`, the monitor's
// redis_store asks after a batch). alertgw may export query_redis_memory's two figures on
// /metrics.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace alerts {

class redis_client;

struct redis_memory {
    std::uint64_t used = 0;       // INFO memory's used_memory, bytes
    std::uint64_t maxmemory = 0;  // its maxmemory; 0: no limit (Redis never refuses for memory)
};

/// The share of used memory above which memory_warning warns (80 %).
constexpr double MEMORY_WARNING_SHARE = 0.8;

/// used_memory and maxmemory from INFO memory's text (`name:value` lines, \r\n or \n); null
/// when either is missing or not a number.
std::optional<redis_memory> parse_info_memory(std::string_view info);

/// used / maxmemory (0 without a limit).
double memory_share(const redis_memory& m);

/// A warning line (no newline) when used_memory is at or above `share` of maxmemory, naming
/// the server (`label`), both figures and what to do; empty otherwise (and without a limit).
std::string memory_warning(const redis_memory& m, std::string_view label,
                           double share = MEMORY_WARNING_SHARE);

/// INFO memory on `client` (one round trip, within its time-out, not counted in its
/// round_trips()); throws redis_error (the figures missing too).
redis_memory query_redis_memory(redis_client& client);

/// When to ask again: due() is true at the first call and then once per `every`.
class memory_watch {
public:
    explicit memory_watch(std::chrono::steady_clock::duration every) : every_(every) {}
    bool due(std::chrono::steady_clock::time_point now) {
        if (asked_ && now - *asked_ < every_) return false;
        asked_ = now;
        return true;
    }

private:
    std::chrono::steady_clock::duration every_;
    std::optional<std::chrono::steady_clock::time_point> asked_;
};

}  // namespace alerts
