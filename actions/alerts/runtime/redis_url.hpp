// redis_url.hpp — where the Redis store connects, parsed once, at start-up:
//   ALERT_REDIS_URL
//     redis://HOST:PORT[/DB]   TCP (PORT defaults to 6379, DB to 0)
//     unix:///path/to/sock     a unix socket (DB 0; ?db=N selects another)
//   or ALERT_REDIS_SENTINELS=HOST:PORT,HOST:PORT,... with ALERT_REDIS_MASTER=NAME: the primary
//     is whatever the sentinels say it is (SENTINEL get-master-addr-by-name), asked again
//     after every failure.
// Credentials (read_redis_credentials), never in the URL nor on a command line:
//   ALERT_REDIS_USER, and ALERT_REDIS_PASSWORD or ALERT_REDIS_PASSWORD_FILE (a file holding
//   it): `AUTH [user] password` to Redis, when a password is set (a user without a password
//   is refused: AUTH needs one);
//   ALERT_REDIS_SENTINEL_USER, and ALERT_REDIS_SENTINEL_PASSWORD or
//   ALERT_REDIS_SENTINEL_PASSWORD_FILE: the same to the sentinels.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/secret_file.hpp"  // MAX_SECRET_FILE, read_secret_file

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
    std::string user;               // ALERT_REDIS_USER (empty: AUTH with the password only)
    std::string password;           // ALERT_REDIS_PASSWORD[_FILE]
    std::string sentinel_user;      // ALERT_REDIS_SENTINEL_USER
    std::string sentinel_password;  // ALERT_REDIS_SENTINEL_PASSWORD[_FILE]

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

/// Looks a variable up (null when unset): std::getenv, or a map in the tests.
using env_lookup = std::function<const char*(const char*)>;

/// Sets url's user, password, sentinel_user and sentinel_password from the variables above.
/// Throws std::invalid_argument naming the variable (never the secret) when both a password and
/// its _FILE are set, the file cannot be read, is empty or larger than MAX_SECRET_FILE, or a
/// user is given without a password. One trailing newline of a file is dropped.
void read_redis_credentials(redis_url& url, const env_lookup& env);
/// The same from the process's environment.
void read_redis_credentials(redis_url& url);

/// "host:port,host:port" (for log lines).
std::string sentinel_list(const redis_url& url);

}  // namespace alerts
