// options.hpp — alertgw's settings: flags, environment and the files secrets are read from.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "runtime/redis_url.hpp"

namespace alerts::gateway {

struct webhook_target {
    std::string name;           // --webhook NAME=URL, or the URL's scheme://host:port
    std::string url;            // never logged nor shown: it may carry a token
    std::string authorization;  // an Authorization header's value, from a file or the env
};

struct smtp_target {
    std::string url;  // empty: no e-mail
    std::string user;
    std::string password;      // from ALERTGW_SMTP_PASSWORD(_FILE) or --smtp-password-file
    bool require_tls = false;  // --smtp-require-tls: STARTTLS or no delivery
    std::string ca_file;       // --smtp-ca-file / ALERTGW_SMTP_CA_FILE: certificates trusted
};

struct options {
    redis_url redis;
    // Entries are delivered once this many replicas confirm them (WAIT after each read), for up
    // to wait_for_replicas: ALERT_REDIS_MIN_REPLICAS (default 1 with sentinels, else 0: no
    // WAIT) and ALERT_REDIS_WAIT_MS (1000), the actions' variables.
    int min_replicas = 0;
    std::chrono::milliseconds wait_for_replicas{1000};
    std::string prefix = "alerts:";
    smtp_target smtp;
    std::string from = "alertgw@localhost";
    std::vector<webhook_target> webhooks;
    std::string consumer;  // default: host name + pid
    std::string metrics_address = "127.0.0.1";
    int metrics_port = 0;  // 0: no /metrics
    std::string console_address = "127.0.0.1";
    int console_port = 0;       // 0: no console (the operator's API and pages)
    std::string console_token;  // --console-token-file: the bearer token writes need ("": none)
    std::chrono::milliseconds timeout{10000};
    int max_attempts = 6;
    std::chrono::milliseconds claim_after{30000};
    std::chrono::milliseconds backoff_first{500};
    std::chrono::milliseconds backoff_max{30000};
    int concurrency = 64;                  // transfers in flight per target
    int batch = 256;                       // entries read per XREADGROUP
    std::size_t window = 4096;             // entries each target works on at once
    std::size_t max_held = 65536;          // entries held in all (parked ones included)
    std::size_t dead_letter_max = 100000;  // <prefix>deadletter's length cap
    double alert_delay_threshold = 300;
};

/// "alertgw --help".
std::string usage();

/// Parses argv (and the environment: ALERT_REDIS_*, ALERTGW_*); throws std::invalid_argument
/// naming the bad flag, value or file. Sets `help` for -h/--help.
options parse_options(int argc, char** argv, bool& help);

/// The name a webhook URL is shown by: scheme://host:port, without user, path or query.
std::string webhook_name(const std::string& url);

}  // namespace alerts::gateway
