// redis_url.hpp — where the Redis store connects: ALERT_REDIS_URL parsed once, at start-up.
//   redis://HOST:PORT[/DB]   TCP (PORT defaults to 6379, DB to 0)
//   unix:///path/to/sock     a unix socket (DB 0; ?db=N selects another)
#pragma once

#include <string>
#include <string_view>

namespace alerts {

struct redis_url {
    std::string host;  // empty for a unix socket
    int port = 6379;
    std::string socket;  // the unix socket's path
    int db = 0;

    /// As given (for log lines).
    std::string text;
};

/// Parses a URL as above; throws std::invalid_argument naming what is wrong.
redis_url parse_redis_url(std::string_view text);

}  // namespace alerts
