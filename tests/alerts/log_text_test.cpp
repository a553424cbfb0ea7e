// log_text_test.cpp — the one key=value writer and free-text escaper of the alert pipeline's
// logs (core/log_text), and the redaction of passwords in URLs (runtime/redis_url): nothing an
// invoker or a config sends can start a log line, and no password is echoed.
#include <stdexcept>
#include <string>

#include "alert_test_util.hpp"
#include "core/log_text.hpp"
#include "runtime/redis_url.hpp"

using namespace alerts;

namespace {

std::string field(std::string_view value) {
    std::string line;
    append_log_field(line, "device", value);
    return line;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("log fields: plain values as they are, others quoted with control characters escaped") {
    CHECK(field("cam1") == "device=cam1");
    CHECK(field("") == R"(device="")");
    CHECK(field("a b") == R"(device="a b")");
    CHECK(field(R"(say "hi"=\)") == R"(device="say \"hi\"=\\")");
    CHECK(field("cam\nnotifType=Alert\r") == R"(device="cam\nnotifType=Alert\r")");
    CHECK(field(std::string("t\tx\x1b[2J\x7f\0", 9)) == R"(device="t\tx\x1b[2J\x7f\x00")");
    CHECK(field("caméra") == "device=caméra");  // UTF-8 stays
    std::string line = "notifType=Offline";
    append_log_field(line, "account", "acct1");
    CHECK(line == "notifType=Offline account=acct1");
    CHECK(log_safe("bad key 'a\nb'\r\n") == R"(bad key 'a\nb'\r\n)");
}

TEST_CASE("URLs: the password of the user info is redacted, the rest kept") {
    CHECK(redact_url("redis://alice:s3cret@host:6379/0") == "redis://alice:***@host:6379/0");
    CHECK(redact_url("redis://:s3cret@host") == "redis://:***@host");
    CHECK(redact_url("redis://s3cret@host") == "redis://***@host");
    CHECK(redact_url("https://u:p/w@d@hooks.example/x") == "https://u:***@hooks.example/x");
    CHECK(redact_url("user:pw@10.0.0.1:26379") == "user:***@10.0.0.1:26379");
    CHECK(redact_url("redis://host:6379/0") == "redis://host:6379/0");
    CHECK(redact_url("unix:///run/redis.sock?db=2") == "unix:///run/redis.sock?db=2");
}

TEST_CASE("ALERT_REDIS_URL and ALERT_REDIS_SENTINELS refuse user info without echoing it") {
    CHECK(error_of([] { parse_redis_url("redis://alice:s3cret@host:6379/0"); }) ==
          "ALERT_REDIS_URL 'redis://alice:***@host:6379/0': no user or password in the URL (set "
          "ALERT_REDIS_PASSWORD)");
    CHECK(error_of([] { parse_redis_url("redis://alice:s3/cret@host/0"); }) ==
          "ALERT_REDIS_URL 'redis://alice:***@host/0': no user or password in the URL (set "
          "ALERT_REDIS_PASSWORD)");
    CHECK(error_of([] { parse_redis_url("redis://alice:s3cret@host:x"); }).find("s3cret") ==
          std::string::npos);
    const std::string sentinels =
        error_of([] { parse_redis_sentinels("h1:26379,bob:pw9@h2:26379", "alerts"); });
    CHECK(sentinels == "ALERT_REDIS_SENTINELS 'h1:26379,bob:***@h2:26379': 'bob:***@h2:26379': "
                       "no user or password here (set ALERT_REDIS_SENTINEL_PASSWORD) "
                       "(HOST:PORT,HOST:PORT,...)");
    CHECK(parse_redis_url("redis://host:7000/3").text == "redis://host:7000/3");
}
