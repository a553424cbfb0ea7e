// usage.cpp — `alertgw --help`.
#include "gateway/options.hpp"

namespace alerts::gateway {

namespace {

std::string usage_head() {
    return R"(usage: alertgw [flags]
Delivers the alert pipeline's notifications: reads the Redis outbox stream <prefix>outbox
(written by monitor's commit) through the consumer group "alertgw" and sends each
notification by e-mail (one message to its recipients) and to every webhook (POST of its JSON,
header Idempotency-Key: <dedupKey>). Any number of gateways share the work. Each target goes
at its own pace: one that is slow or down never delays another.

environment:
  ALERT_REDIS_URL      redis://HOST[:PORT][/DB] or unix:///path/to/socket (this or
                       ALERT_REDIS_SENTINELS is required)
  ALERT_REDIS_SENTINELS HOST:PORT,HOST:PORT,... Redis Sentinels that name the primary,
                       with ALERT_REDIS_MASTER=NAME; asked again after every Redis error
  ALERT_REDIS_USER, ALERT_REDIS_PASSWORD or ALERT_REDIS_PASSWORD_FILE
                       AUTH [user] password to Redis, when a password is set (an ACL user
                       needs one; the _FILE names a file holding it)
  ALERT_REDIS_SENTINEL_USER, ALERT_REDIS_SENTINEL_PASSWORD or
  ALERT_REDIS_SENTINEL_PASSWORD_FILE
                       the same to the sentinels
  ALERT_REDIS_PREFIX   prefix of the Redis keys (default "alerts:"), as for the actions
  ALERT_REDIS_MIN_REPLICAS, ALERT_REDIS_WAIT_MS
                       entries are delivered once that many replicas confirm them (WAIT
                       after each read, up to that many ms; defaults 1 with sentinels, else
                       0, and 1000): a primary cut off from its replicas hands out nothing
  ALERTGW_SMTP_USER, ALERTGW_SMTP_PASSWORD, ALERTGW_SMTP_PASSWORD_FILE
                       SMTP login (the password, or a file holding it)
  ALERTGW_SMTP_CA_FILE certificates to trust for the SMTP server's TLS (as --smtp-ca-file)
  ALERTGW_WEBHOOK_AUTHORIZATION, ALERTGW_WEBHOOK_AUTHORIZATION_FILE
                       an Authorization header for every webhook (e.g. "Bearer TOKEN"),
                       or a file holding it

)";
}

std::string usage_flags() {
    return R"(flags:
  --smtp URL             SMTP server, e.g. smtp://127.0.0.1:2525 (STARTTLS whenever the
                         server offers it; smtps:// for TLS from the start); no e-mail without it
  --smtp-require-tls     refuse to send over smtp:// without STARTTLS
  --smtp-ca-file PATH    trust the certificates in PATH (the server's is always verified)
  --smtp-user NAME       SMTP login name (or ALERTGW_SMTP_USER)
  --smtp-password-file PATH
                         the SMTP password, read from PATH (never on the command line)
  --from ADDR            the e-mails' sender (default alertgw@localhost)
  --webhook [NAME=]URL   POST each notification there (http:// or https://); repeatable.
                         NAME (default: the URL's scheme://host:port) is all that logs,
                         /metrics, dead letters and Redis show of it: the URL may hold a token
  --webhook-url-file NAME=PATH
                         a webhook named NAME whose URL (and its token) is read from PATH,
                         off the command line
  --webhook-auth-file NAME=PATH
                         the Authorization header's value for webhook NAME, read from PATH
  --consumer NAME        this gateway's name in the consumer group (default: host name + pid)
  --metrics-port N       serve Prometheus /metrics on port N (default: off)
  --metrics-address ADDR the address /metrics listens on (default 127.0.0.1)
  --console-port N       serve the operator's console (JSON API under /api/v1/ and pages)
                         on port N (default: off)
  --console-address ADDR the address the console listens on (default 127.0.0.1)
  --console-token-file PATH
                         the bearer token the console's writes need (silences, replays,
                         purges), read from PATH; without it the console only reads
  --timeout SECONDS      per delivery attempt (default 10)
  --max-attempts N       attempts per target before the dead-letter stream (default 6);
                         waits between attempts double from 0.5 s, capped at 30 s
  --claim-after SECONDS  how long an entry may stay pending with a gateway that stopped
                         before another claims it (default 30)
  --concurrency N        deliveries in flight per target (default 64)
  --window N             entries each target works on at once (default 4096); more are
                         parked for that target only, the others go on
  --max-held N           entries held in all, parked ones included (default 65536): reading
                         stops there
  --dead-letter-max N    <prefix>deadletter keeps the newest N (default 100000); older ones
                         are dropped and counted (alertgw_dead_letters_dropped_total)
  --alert-delay-threshold SECONDS
                         an alertDelay over this also logs a systemAlert line (default 300)
  -h, --help             this text
)";
}

std::string usage_tail() {
    return R"(

A target that answers 2xx (webhook) or 250 (SMTP) has the notification. A failure or time-out
is retried; a permanent refusal (HTTP 4xx other than 408/425/429, SMTP 5xx) and the last
failed attempt move it to <prefix>deadletter with the target and the error. E-mail goes to
every recipient the server accepts: a malformed address, or one the server refuses (550), is
dead-lettered on its own (field recipient); one refused for now (4xx) is retried alone. An
entry is acknowledged once every target has it or gave up. SIGTERM finishes the deliveries in
flight, acknowledges what was delivered and exits 0.
)";
}

}  // namespace

std::string usage() { return usage_head() + usage_flags() + usage_tail(); }

}  // namespace alerts::gateway
