// options.cpp — alertgw's flags and environment (see gateway.hpp).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "gateway.hpp"

namespace alerts::gateway {

namespace {

double number(const std::string& flag, const std::string& v, double min, double max) {
    std::size_t used = 0;
    double d = 0;
    try {
        d = std::stod(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || v.empty() || !std::isfinite(d) || d < min || d > max) {
        throw std::invalid_argument(flag + ": '" + v + "' is not a number from " +
                                    std::to_string(min) + " to " + std::to_string(max));
    }
    return d;
}

int integer(const std::string& flag, const std::string& v, int min, int max) {
    const double d = number(flag, v, min, max);
    if (d != std::floor(d))
        throw std::invalid_argument(flag + ": '" + v + "' is not a whole number");
    return static_cast<int>(d);
}

std::chrono::milliseconds seconds(const std::string& flag, const std::string& v, double min,
                                  double max) {
    return std::chrono::milliseconds(std::llround(number(flag, v, min, max) * 1000));
}

void check_url(const std::string& flag, const std::string& v,
               std::initializer_list<const char*> schemes) {
    for (const char* s : schemes) {
        if (v.rfind(s, 0) == 0 && v.size() > std::string(s).size()) return;
    }
    std::string list;
    for (const char* s : schemes) list += (list.empty() ? "" : ", ") + std::string(s);
    throw std::invalid_argument(flag + ": '" + v + "' is not a URL starting with " + list);
}

}  // namespace

std::string usage() {
    return R"(usage: alertgw [flags]
Delivers the alert pipeline's notifications: reads the Redis outbox stream <prefix>outbox
(written by monitor's commit) through the consumer group "alertgw" and sends each
notification by e-mail (one message to its recipients) and to every webhook (POST of its JSON,
header Idempotency-Key: <dedupKey>). Any number of gateways share the work.

environment:
  ALERT_REDIS_URL      redis://HOST[:PORT][/DB] or unix:///path/to/socket (this or
                       ALERT_REDIS_SENTINELS is required)
  ALERT_REDIS_SENTINELS HOST:PORT,HOST:PORT,... Redis Sentinels that name the primary,
                       with ALERT_REDIS_MASTER=NAME; asked again after every Redis error
  ALERT_REDIS_PASSWORD, ALERT_REDIS_SENTINEL_PASSWORD
                       AUTH to Redis and to the sentinels, when set
  ALERT_REDIS_PREFIX   prefix of the Redis keys (default "alerts:"), as for the actions

flags:
  --smtp URL             SMTP server, e.g. smtp://127.0.0.1:2525 (smtps:// for TLS); no e-mail without it
  --from ADDR            the e-mails' sender (default alertgw@localhost)
  --webhook URL          POST each notification there (http:// or https://); repeatable
  --consumer NAME        this gateway's name in the consumer group (default: host name + pid)
  --metrics-port N       serve Prometheus /metrics on 0.0.0.0:N (default: off)
  --timeout SECONDS      per delivery attempt (default 10)
  --max-attempts N       attempts per target before the dead-letter stream (default 6);
                         waits between attempts double from 0.5 s, capped at 30 s
  --claim-after SECONDS  how long an entry may stay pending with a gateway that stopped
                         before another claims it (default 30)
  --concurrency N        deliveries in flight per target (default 64)
  --alert-delay-threshold SECONDS
                         an alertDelay over this also logs a systemAlert line (default 300)
  -h, --help             this text

A target that answers 2xx (webhook) or 250 (SMTP) has the notification. A failure or time-out
is retried; a permanent refusal (HTTP 4xx other than 408/425/429, SMTP 5xx) and the last
failed attempt move it to <prefix>deadletter with the target and the error. An entry is
acknowledged once every target has it or gave up. SIGTERM finishes the deliveries in flight,
acknowledges what was delivered and exits 0.
)";
}

options parse_options(int argc, char** argv, bool& help) {
    options o;
    help = false;
    const char* url = std::getenv("ALERT_REDIS_URL");
    const char* prefix = std::getenv("ALERT_REDIS_PREFIX");
    if (prefix && *prefix) o.prefix = prefix;
    for (int i = 1; i < argc; ++i) {
        std::string flag = argv[i];
        std::string value;
        bool has_value = false;
        if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
            has_value = true;
        }
        if (flag == "-h" || flag == "--help") {
            help = true;
            return o;
        }
        auto next = [&]() -> std::string {
            if (has_value) return value;
            if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
            return argv[++i];
        };
        if (flag == "--smtp") {
            o.smtp = next();
            check_url(flag, o.smtp, {"smtp://", "smtps://"});
        } else if (flag == "--from") {
            o.from = next();
            if (o.from.find('@') == std::string::npos ||
                o.from.find_first_of("\r\n<> ") != std::string::npos) {
                throw std::invalid_argument("--from: '" + o.from + "' is not an e-mail address");
            }
        } else if (flag == "--webhook") {
            o.webhooks.push_back(next());
            check_url(flag, o.webhooks.back(), {"http://", "https://"});
        } else if (flag == "--consumer") {
            o.consumer = next();
            if (o.consumer.empty()) throw std::invalid_argument("--consumer: empty name");
        } else if (flag == "--metrics-port") {
            o.metrics_port = integer(flag, next(), 1, 65535);
        } else if (flag == "--timeout") {
            o.timeout = seconds(flag, next(), 0.01, 3600);
        } else if (flag == "--max-attempts") {
            o.max_attempts = integer(flag, next(), 1, 1000);
        } else if (flag == "--claim-after") {
            o.claim_after = seconds(flag, next(), 0.1, 86400);
        } else if (flag == "--concurrency") {
            o.concurrency = integer(flag, next(), 1, 4096);
        } else if (flag == "--alert-delay-threshold") {
            o.alert_delay_threshold = number(flag, next(), 0, 1e9);
        } else {
            throw std::invalid_argument("unknown flag '" + flag + "'");
        }
    }
    const char* sentinels = std::getenv("ALERT_REDIS_SENTINELS");
    const char* master = std::getenv("ALERT_REDIS_MASTER");
    const bool has_url = url && *url;
    const bool has_sentinels = sentinels && *sentinels;
    if (has_url && has_sentinels) {
        throw std::invalid_argument("set ALERT_REDIS_URL or ALERT_REDIS_SENTINELS, not both");
    }
    if (!has_url && !has_sentinels) {
        throw std::invalid_argument("ALERT_REDIS_URL is not set (nor ALERT_REDIS_SENTINELS)");
    }
    o.redis =
        has_url ? parse_redis_url(url) : parse_redis_sentinels(sentinels, master ? master : "");
    if (const char* p = std::getenv("ALERT_REDIS_PASSWORD")) o.redis.password = p;
    if (const char* p = std::getenv("ALERT_REDIS_SENTINEL_PASSWORD")) o.redis.sentinel_password = p;
    if (o.smtp.empty() && o.webhooks.empty()) {
        throw std::invalid_argument("nothing to deliver to: give --smtp and/or --webhook");
    }
    for (std::size_t i = 0; i < o.webhooks.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (o.webhooks[i] == o.webhooks[j]) {
                throw std::invalid_argument("--webhook " + o.webhooks[i] + " given twice");
            }
        }
    }
    if (o.consumer.empty()) {
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) != 0 || !*host)
            std::snprintf(host, sizeof host, "host");
        o.consumer = std::string(host) + "-" + std::to_string(::getpid());
    }
    return o;
}

}  // namespace alerts::gateway
