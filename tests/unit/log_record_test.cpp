// OW_LOG_FORMAT=json records (proxy/log_record.hpp): the tags read from a /run line, the
// record's members and escaping, JSON-object lines kept as objects, cuts at UTF-8 boundaries.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "log_record.hpp"

using namespace actionloop;
using nlohmann::json;

namespace {

json record(std::string_view message, const activation_tags* tags = nullptr, size_t max = 100,
            size_t lost = 0) {
    std::string out;
    append_log_record(out, "T", "stdout", tags, message, max, lost);
    REQUIRE(!out.empty());
    CHECK(out.back() == '\n');
    CHECK(out.find('\n') == out.size() - 1);  // one line, whatever the message holds
    return json::parse(out);
}

}  // namespace

TEST_CASE("log_record: the tags come from the /run line's top-level fields") {
    const activation_tags tags = tags_of_request(
        R"({"value":{"activation_id":"inner"},"activation_id":"a1","transaction_id":"t1",)"
        R"("action_name":"/ns/act","deadline":"1"})");
    CHECK(tags.activation_id == "a1");
    CHECK(tags.transaction_id == "t1");
    CHECK(tags.action == "/ns/act");
    const activation_tags none = tags_of_request(R"({"value":{}})");
    CHECK(none.activation_id.empty());
    CHECK(record("x", &none) == json{{"time", "T"}, {"stream", "stdout"}, {"message", "x"}});
}

TEST_CASE("log_record: members, escaping, and a JSON object line kept as an object") {
    const activation_tags tags{"a1", "t1", "/ns/act"};
    CHECK(record("plain text", &tags) == json{{"time", "T"},
                                              {"stream", "stdout"},
                                              {"activationId", "a1"},
                                              {"transactionId", "t1"},
                                              {"action", "/ns/act"},
                                              {"message", "plain text"}});
    CHECK(record("quote \" backslash \\ tab \t bell \x07 é\r")["message"] ==
          "quote \" backslash \\ tab \t bell \x07 é");  // a trailing CR is dropped
    CHECK(record(R"( {"alertDelay": 1250, "ok": true} )")["message"] ==
          json{{"alertDelay", 1250}, {"ok", true}});
    CHECK(record(R"({"broken": )")["message"] == R"({"broken": )");
    CHECK(record("[1,2]")["message"] == "[1,2]");  // only objects are embedded
}

TEST_CASE("log_record: a long message is cut at a UTF-8 boundary and says how much was cut") {
    const json cut = record("abcdef", nullptr, 4);
    CHECK(cut["message"] == "abcd");
    CHECK(cut["truncated"] == 2);
    const json utf8 = record("ab\xc3\xa9"
                             "cd",
                             nullptr, 3);  // é is 2 bytes: not split
    CHECK(utf8["message"] == "ab");
    CHECK(utf8["truncated"] == 4);
    const json lost = record(R"({"a":1})", nullptr, 100, 10);  // bytes dropped before
    CHECK(lost["message"] == R"({"a":1})");                    // a cut object is text
    CHECK(lost["truncated"] == 10);
    CHECK_FALSE(record("short").contains("truncated"));
}

TEST_CASE("log_record: the time is UTC with milliseconds") {
    using namespace std::chrono;
    const system_clock::time_point t{milliseconds(1764671042123)};
    CHECK(log_time(t) == "2025-12-02T10:24:02.123Z");
}
