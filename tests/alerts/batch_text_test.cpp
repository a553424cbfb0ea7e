// batch_text_test.cpp — the value parsed from its JSON text (the actions' raw entry point)
// agrees with the DOM path on every ETag and every rejection, decodes escapes, reads `now`
// and locates `config`, and refuses what is not JSON.
#include "core/batch_text.hpp"

#include "alert_test_util.hpp"
#include "generator/stream_generator.hpp"

using namespace alerts;
using json = nlohmann::json;

namespace {

std::vector<std::string> errors_of(const parsed_batch& b) {
    std::vector<std::string> errors;
    for (const auto& r : b.rejected) errors.push_back(r.error);
    return errors;
}

void check_same_etags(const parsed_batch& a, const parsed_batch& b) {
    REQUIRE(a.etags.size() == b.etags.size());
    for (std::size_t i = 0; i < a.etags.size(); ++i) {
        CAPTURE(i);
        CHECK(a.etags[i].id == b.etags[i].id);
        CHECK(a.etags[i].account == b.etags[i].account);
        CHECK(a.etags[i].device == b.etags[i].device);
        CHECK(a.etags[i].region == b.etags[i].region);
        CHECK(a.etags[i].ts == b.etags[i].ts);
        CHECK(a.etags[i].magnitude == b.etags[i].magnitude);
        CHECK(a.etags[i].type == b.etags[i].type);
        CHECK(a.etags[i].state == b.etags[i].state);
    }
    CHECK(errors_of(a) == errors_of(b));
}

// Both parsers over the same value text.
void check_agrees(const std::string& value_text) {
    CAPTURE(value_text);
    const json value = json::parse(value_text);
    parsed_batch dom;
    parse_etags(value.at("etags"), dom);
    parsed_batch text;
    value_members members;
    parse_value_text(value_text, text, members);
    check_same_etags(dom, text);
}

std::string parse_error(const std::string& value_text) {
    parsed_batch b;
    value_members members;
    try {
        parse_value_text(value_text, b, members);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("batch text: generator batches parse exactly as through the DOM") {
    generator_options o;
    o.devices = 3000;
    o.duplicate_rate = 0.02;
    o.reorder_window = 2;
    stream_generator gen(o);
    const auto& minute = gen.next_minute();
    for (std::size_t i = 0; i + 1000 <= minute.size() && i < 10000; i += 1000) {
        check_agrees(gen.batch_json(minute.data() + i, 1000, gen.minute_start()));
    }
}

TEST_CASE("batch text: malformed ETags are rejected with the DOM's indices and reasons") {
    check_agrees(R"({"etags": [
      {"account": "a", "device": "d", "type": "heartbeat", "ts": 1, "state": "online"},
      {"account": "a", "device": "d", "type": "heartbeat", "state": "online"},
      {"account": "a", "device": "d", "type": "heartbeat", "ts": "1", "state": "online"},
      {"account": "a", "device": "d", "type": "smoke", "ts": 1},
      {"account": "a", "device": "d", "type": "status", "ts": 1, "state": "asleep"},
      {"account": "a", "device": "d", "type": "motion", "ts": 1, "magnitude": 1},
      {"account": "a", "type": "status", "ts": 1, "state": "online"},
      {"account": 7, "device": "d", "type": "status", "ts": 1, "state": "online"},
      {"id": 3, "account": "a", "device": "d", "type": "status", "ts": 1, "state": "online"},
      "not an object", 12, null, [1, {"a": []}],
      {"account": "a", "device": "d", "type": "motion", "ts": 1, "region": "r", "magnitude": null},
      {"account": "", "device": "d", "type": "status", "ts": 1, "state": "online"},
      {"account": true, "device": {"x": [1, "]"]}, "type": "status", "ts": [], "state": 1},
      {"account": "a", "device": "d", "type": "status", "ts": -1.5e-3, "state": "offline"},
      {}, {"extra": {"nested": [true, false, null, "}"]}, "account": "a"},
      {"account": "a", "account": "b", "device": "d", "type": "status", "ts": 2,
       "state": "online"}]})");
}

TEST_CASE("batch text: a number out of range rejects its ETag, not the batch") {
    parsed_batch b;
    value_members m;
    parse_value_text(R"({"etags": [{"account": "a", "device": "d", "type": "status",)"
                     R"( "ts": 1e400, "state": "online"}, {"account": "a", "device": "d",)"
                     R"( "type": "status", "ts": 1e-400, "state": "online"}]})",
                     b, m);
    CHECK(errors_of(b) == std::vector<std::string>{"etag 0: field 'ts' must be a number"});
    REQUIRE(b.etags.size() == 1);
    CHECK(b.etags[0].ts == 0);
}

TEST_CASE("batch text: escapes are decoded, plain strings are views into the text") {
    const std::string text =
        R"({"etags": [{"id": "e\"1\\\/\u00e9\ud83d\ude00", "account": "a\tb",)"
        R"( "device": "plain", "type": "heartbeat", "ts": 5, "state": "online"}]})";
    check_agrees(text);
    parsed_batch b;
    value_members members;
    parse_value_text(text, b, members);
    REQUIRE(b.etags.size() == 1);
    CHECK(b.etags[0].id == "e\"1\\/\xc3\xa9\xf0\x9f\x98\x80");
    CHECK(b.etags[0].account == "a\tb");
    CHECK(b.etags[0].device.data() >= text.data());
    CHECK(b.etags[0].device.data() < text.data() + text.size());
    CHECK_FALSE(members.has_now);
    CHECK(members.config.empty());
}

TEST_CASE("batch text: now, config and other members") {
    parsed_batch b;
    value_members m;
    parse_value_text(R"( { "x": [1, {"y": "z"}], "now" : 1764460831.5,
        "config": {"accounts": {"a": {}}}, "etags": [] } )",
                     b, m);
    CHECK(m.has_now);
    CHECK(m.now == 1764460831.5);
    CHECK(m.config == R"({"accounts": {"a": {}}})");
    CHECK(b.etags.empty());
    parse_value_text(R"({"config": null, "now": -0})", b, m);
    CHECK(m.config.empty());
    CHECK(m.now == 0);
    parse_value_text("{}", b, m);
    CHECK_FALSE(m.has_now);
}

TEST_CASE("batch text: what is not JSON, or has the wrong shape, is refused as a whole") {
    CHECK(parse_error(R"({"etags": {}})") == "'etags' must be an array");
    CHECK(parse_error(R"({"etags": null})") == "'etags' must be an array");
    CHECK(parse_error(R"({"now": "soon"})") == "'now' must be a number");
    CHECK(parse_error(R"([1, 2])") == "the activation value must be an object");
    const std::vector<std::string> broken = {"",
                                             "{",
                                             R"({"etags": [})",
                                             R"({"etags": [1,]})",
                                             R"({"a" 1})",
                                             R"({"a": 01})",
                                             R"({"a": 1.})",
                                             R"({"a": .5})",
                                             R"({"a": -})",
                                             R"({"a": tru})",
                                             R"({"a": "\x"})",
                                             R"({"a": "\u12"})",
                                             "{\"a\": \"tab\there\"}",
                                             R"({"a": "\udc00"})",
                                             R"({"a": 1} x)",
                                             R"({"a": 1,})",
                                             R"({,})",
                                             R"({"a": [1 2]})",
                                             R"({"a": "open)",
                                             R"({"etags": [{"account": "a" "device": "d"}]})"};
    for (const std::string& text : broken) {
        CAPTURE(text);
        CHECK_FALSE(json::accept(text));
        CHECK(parse_error(text).rfind("value: invalid JSON at offset", 0) == 0);
    }
    CHECK(parse_error(std::string(600, '[') + std::string(600, ']')).find("too deep") !=
          std::string::npos);
}
