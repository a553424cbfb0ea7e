// redis_url.hpp — where the Redis store connects, parsed once, at start-up:
//   ALERT_REDIS_URL
//     redis://HOST:PORT[/DB]   TCP (PORT defaults to 6379, DB to 0)
//     unix:///path/to/sock     a unix socket (DB 0; ?db=N selects another)
//   or ALERT_REDIS_SENTINELS=HOST:PORT,HOST:PORT,... with ALERT_REDIS_MASTER=NAME: the primary
//     is whatever the sentinels say it is (SENTINEL get-master-addr-by-name), asked again
//     after every failure.
// ALERT_REDIS_PASSWORD (AUTH to Redis) and ALERT_REDIS_SENTINEL_PASSWORD (AUTH to the
// sentinels) when set.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace alerts {

struct redis_address {
    std::string host;
    int port = 0;
};

struct redis_url {
    std::string host;  // empty for a unix socket
    int port = 6379;
    std::string socket;  // the unix socket's path
    int db = 0;

    /// Sentinel discovery: the sentinels to ask, in order, and the name of the primary they
    /// watch. Empty: connect to host/port/socket as given.
    std::vector<redis_address> sentinels;
    std::string master;
    std::string password;           // ALERT_REDIS_PASSWORD
    std::string sentinel_password;  // ALERT_REDIS_SENTINEL_PASSWORD

    /// For log lines and errors: the URL (redacted, see redact_url), or "sentinel master NAME".
    std::string text;
};

/// `url` with the password of its user info (`scheme://user:password@host…`) replaced by
/// `***` (`redis://user:***@host`), or the whole user info when it has no ':' (it may be a
/// password alone: `redis://***@host`). What every message that names a URL prints: no
/// password is ever echoed in an error answer, a log line or /init's answer.
std::string redact_url(std::string_view url);

/// Parses a URL as above; throws std::invalid_argument naming what is wrong (the URL redacted).
/// A URL with user info is refused: the password goes in ALERT_REDIS_PASSWORD.
redis_url parse_redis_url(std::string_view text);

/// Parses ALERT_REDIS_SENTINELS ("host:port,host:port", at least one) for the primary named
/// `master` (ALERT_REDIS_MASTER, required); throws std::invalid_argument naming what is wrong.
redis_url parse_redis_sentinels(std::string_view sentinels, std::string_view master);

/// "host:port,host:port" (for log lines).
std::string sentinel_list(const redis_url& url);

}  // namespace alerts
