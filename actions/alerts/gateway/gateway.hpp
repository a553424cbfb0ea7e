// gateway.hpp — alertgw: the last mile of the alert pipeline. Reads the notifications that
// `monitor`'s Redis commit appended to the outbox stream (<prefix>outbox), through the
// consumer group `alertgw`, and delivers each to every target (one e-mail over SMTP, a POST
// to each webhook) with libcurl's multi interface. Per-target progress lives in Redis
// (<prefix>gw:<entry id>), so a retry or another gateway's claim never re-sends to a target
// that accepted; an entry is acknowledged only when every target accepted it or gave up on it
// (then it is in <prefix>deadletter). docs: actions/alerts/README.md, "Delivering
// notifications".
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "../runtime/redis_url.hpp"

namespace alerts::gateway {

struct options {
    redis_url redis;
    std::string prefix = "alerts:";
    std::string smtp;  // empty: no e-mail
    std::string from = "alertgw@localhost";
    std::vector<std::string> webhooks;
    std::string consumer;  // default: host name + pid
    int metrics_port = 0;  // 0: no /metrics
    std::chrono::milliseconds timeout{10000};
    int max_attempts = 6;
    std::chrono::milliseconds claim_after{30000};
    std::chrono::milliseconds backoff_first{500};
    std::chrono::milliseconds backoff_max{30000};
    int concurrency = 64;    // transfers in flight per target
    int batch = 256;         // entries read per XREADGROUP
    int max_entries = 4096;  // entries held at once
    double alert_delay_threshold = 300;
};

/// "alertgw --help".
std::string usage();

/// Parses argv (and ALERT_REDIS_URL, ALERT_REDIS_PREFIX from the environment); throws
/// std::invalid_argument naming the bad flag or value. Sets `help` for -h/--help.
options parse_options(int argc, char** argv, bool& help);

/// Runs until SIGTERM/SIGINT; returns the exit code (0 after a clean shutdown).
int run(const options& opt);

}  // namespace alerts::gateway
