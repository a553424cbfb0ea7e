// OW_LOG_FORMAT=json records (proxy/log_record.hpp): the tags read from a /run line, the
// record's members and escaping, JSON-object lines kept as objects, cuts at UTF-8 boundaries;
// and Lambda's records (AWS_LAMBDA_LOG_FORMAT=JSON): their shape, their levels (the stream's,
// a JSON line's own, Lambda's names), and the AWS_LAMBDA_LOG_LEVEL filter.
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

// --- Lambda's records ---

namespace {

// One Lambda record as its text (written: the record; filtered out: "").
std::string lambda_text(std::string_view message, log_level level = log_level::info,
                        log_level min = log_level::trace, const activation_tags* tags = nullptr,
                        size_t max = 100, size_t lost = 0) {
    std::string out = "before\n";
    const bool written =
        append_lambda_record(out, "2026-12-04T10:22:22.123Z", level, min, tags, message, max, lost);
    REQUIRE(out.rfind("before\n", 0) == 0);  // appended, never replaced
    out.erase(0, 7);
    CHECK(written == !out.empty());
    if (written) {
        CHECK(out.back() == '\n');
        CHECK(out.find('\n') == out.size() - 1);
    }
    return out;
}

json lambda_record(std::string_view message, log_level level = log_level::info,
                   const activation_tags* tags = nullptr, size_t max = 100, size_t lost = 0) {
    const std::string text = lambda_text(message, level, log_level::trace, tags, max, lost);
    REQUIRE(!text.empty());
    return json::parse(text);
}

}  // namespace

TEST_CASE("log_record: Lambda's record is timestamp, level, requestId, message, in that order") {
    const activation_tags tags{"8476a536-e9f4-11e8-9739-2dfe598c3fcd", "t1", "arn:aws:lambda:x"};
    CHECK(lambda_text("hello", log_level::info, log_level::trace, &tags) ==
          R"({"timestamp":"2026-12-04T10:22:22.123Z","level":"INFO",)"
          R"("requestId":"8476a536-e9f4-11e8-9739-2dfe598c3fcd","message":"hello"})"
          "\n");
    // No activation (or one without an id): no requestId, as Node.js's runtime outside a
    // request.
    CHECK(lambda_text("at start", log_level::warn) ==
          R"({"timestamp":"2026-12-04T10:22:22.123Z","level":"WARN","message":"at start"})"
          "\n");
    const activation_tags no_id{"", "t1", "/ns/a"};
    CHECK_FALSE(lambda_record("x", log_level::info, &no_id).contains("requestId"));
    // Escaping, the trailing CR, objects kept as objects, the cut: as OpenWhisk's records.
    CHECK(lambda_record("tab \t quote \" é\r")["message"] == "tab \t quote \" é");
    CHECK(lambda_record(R"( {"alertDelay": 1250} )")["message"] == json{{"alertDelay", 1250}});
    const json cut = lambda_record("abcdef", log_level::error, nullptr, 4);
    CHECK(cut["message"] == "abcd");
    CHECK(cut["truncated"] == 2);
    CHECK(cut.size() == 4);  // timestamp, level, message, truncated
}

TEST_CASE("log_record: a JSON line's own level is the record's, in Lambda's name") {
    const json debug = lambda_record(R"({"level":"debug","msg":"d"})", log_level::info);
    CHECK(debug["level"] == "DEBUG");
    CHECK(debug["message"] == json{{"level", "debug"}, {"msg", "d"}});  // the line as it is
    CHECK(lambda_record(R"({"msg":"w","level":"warning"})", log_level::error)["level"] == "WARN");
    CHECK(lambda_record(R"({"level":"Critical"})")["level"] == "FATAL");
    CHECK(lambda_record(R"({"level":"TRACE"})", log_level::error)["level"] == "TRACE");
    // Not a level: the stream's (stdout INFO, stderr ERROR), as Lambda gives INFO to a line
    // whose level it cannot read.
    CHECK(lambda_record(R"({"level":"verbose"})", log_level::error)["level"] == "ERROR");
    CHECK(lambda_record(R"({"level":30})", log_level::info)["level"] == "INFO");
    CHECK(lambda_record(R"({"inner":{"level":"debug"}})")["level"] == "INFO");  // top level only
    CHECK(lambda_record(R"({"level":"debug", )")["level"] == "INFO");           // not one object
    CHECK(lambda_record(R"(level debug)", log_level::error)["level"] == "ERROR");
    // A cut object is text, and so has no level of its own.
    CHECK(lambda_record(R"({"level":"debug"})", log_level::info, nullptr, 100, 5)["level"] ==
          "INFO");
}

TEST_CASE("log_record: AWS_LAMBDA_LOG_LEVEL drops the records below it, its own level passes") {
    CHECK(lambda_text("i", log_level::info, log_level::warn).empty());
    CHECK(lambda_text("w", log_level::warn, log_level::warn) != "");
    CHECK(lambda_text("e", log_level::error, log_level::warn) != "");
    CHECK(lambda_text(R"({"level":"debug"})", log_level::error, log_level::info).empty());
    CHECK(lambda_text(R"({"level":"fatal"})", log_level::info, log_level::error) != "");
    CHECK(lambda_text("t", log_level::trace, log_level::trace) != "");
    CHECK(lambda_text("f", log_level::fatal, log_level::fatal) != "");
    CHECK(lambda_text("e", log_level::error, log_level::fatal).empty());
}

TEST_CASE("log_record: Lambda's level names, any case, and the other loggers' spellings") {
    const std::pair<const char*, log_level> known[] = {
        {"TRACE", log_level::trace}, {"debug", log_level::debug},  {"Info", log_level::info},
        {"WARN", log_level::warn},   {"warning", log_level::warn}, {"ERROR", log_level::error},
        {"error", log_level::error}, {"FATAL", log_level::fatal},  {"critical", log_level::fatal}};
    for (const auto& entry : known) {
        const char* name = entry.first;
        CAPTURE(name);
        REQUIRE(level_named(name).has_value());
        CHECK(*level_named(name) == entry.second);
    }
    for (const char* name : {"", "verbose", "WARNINGS", "err", "off", "3", "INFO "}) {
        CAPTURE(name);
        CHECK_FALSE(level_named(name).has_value());
    }
    CHECK(level_name(log_level::trace) == "TRACE");
    CHECK(level_name(log_level::warn) == "WARN");
    CHECK(level_name(log_level::fatal) == "FATAL");
    CHECK(level_of_line(R"({"level":"error"})") == log_level::error);
    CHECK_FALSE(level_of_line("plain").has_value());
}

TEST_CASE("log_record: AWS_LAMBDA_LOG_FORMAT and AWS_LAMBDA_LOG_LEVEL as the runtimes read them") {
    const log_format json_warn = lambda_log_format("JSON", "warn");
    CHECK(json_warn.json);
    CHECK(json_warn.lambda);
    CHECK(bool(json_warn));
    CHECK(json_warn.min_level == log_level::warn);
    CHECK(json_warn.unknown_level.empty());
    CHECK(lambda_log_format("json", "").min_level == log_level::trace);  // unset: every level
    CHECK(lambda_log_format("Json", "FATAL").min_level == log_level::fatal);
    // Anything but JSON is Lambda's plain text (its default): no records, so no filter.
    for (const char* text : {"", "Text", "TEXT", "xml"}) {
        CAPTURE(text);
        const log_format plain = lambda_log_format(text, "ERROR");
        CHECK_FALSE(plain.json);
        CHECK(plain.lambda);  // still Lambda mode: no sentinels
        CHECK_FALSE(bool(plain));
        CHECK(plain.unknown_level.empty());
    }
    // A level that names none filters nothing, and is kept so the proxy can say so.
    const log_format unknown = lambda_log_format("JSON", "verbose");
    CHECK(unknown.min_level == log_level::trace);
    CHECK(unknown.unknown_level == "verbose");
    CHECK(lambda_log_format("TEXT", "verbose").unknown_level.empty());  // not read in Text
}
