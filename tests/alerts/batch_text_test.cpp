// batch_text_test.cpp — the value parsed from its JSON text (the actions' one ETag parser):
// every field of every ETag type, each malformed ETag rejected on its own with its index and
// reason while the rest of the batch goes on, escapes decoded, `now` read, `config` located,
// and what is not JSON refused as a whole.
#include "core/batch_text.hpp"

#include <cmath>

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

// The ETags' strings are views into `value_text`: keep it alive while they are read.
parsed_batch parse(const std::string& value_text) {
    parsed_batch b;
    value_members members;
    parse_value_text(value_text, b, members);
    return b;
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

TEST_CASE("batch text: generator batches parse into the generator's own ETags") {
    generator_options o;
    o.devices = 3000;
    o.duplicate_rate = 0.02;
    o.reorder_window = 2;
    stream_generator gen(o);
    const auto& minute = gen.next_minute();
    std::vector<etag> expected;
    std::vector<char> ids;
    for (std::size_t i = 0; i + 1000 <= minute.size() && i < 10000; i += 1000) {
        const std::string text = gen.batch_json(minute.data() + i, 1000, gen.minute_start());
        const parsed_batch b = parse(text);
        gen.to_etags(minute.data() + i, 1000, expected, ids);
        CHECK(b.rejected.empty());
        REQUIRE(b.etags.size() == expected.size());
        for (std::size_t k = 0; k < expected.size(); ++k) {
            CAPTURE(k);
            const etag& got = b.etags[k];
            const etag& want = expected[k];
            CHECK(got.id == want.id);
            CHECK(got.account == want.account);
            CHECK(got.device == want.device);
            CHECK(got.region == want.region);
            CHECK(got.type == want.type);
            CHECK(got.state == want.state);
            // The generator writes ts and magnitude with 3 decimals.
            CHECK(std::abs(got.ts - want.ts) <= 0.0005 + 1e-6);
            CHECK(std::abs(got.magnitude - want.magnitude) <= 0.0005 + 1e-6);
        }
    }
}

TEST_CASE("batch text: well-formed ETags of every type are converted") {
    const std::string text = R"({"etags": [
      {"id": "e-1", "account": "00001234", "device": "100a1b2c", "type": "motion",
       "ts": 1764460800.125, "region": "door", "magnitude": 0.8},
      {"account": "00001234", "device": "100a1b2c", "type": "status", "ts": 1764460801,
       "state": "internet_offline", "extra": [1, 2]},
      {"account": "00001234", "device": "100a1b2c", "type": "heartbeat", "ts": 1764460830.0,
       "state": "offline"}]})";
    const parsed_batch b = parse(text);
    REQUIRE(b.etags.size() == 3);
    CHECK(b.rejected.empty());
    CHECK(b.etags[0].id == "e-1");
    CHECK(b.etags[0].account == "00001234");
    CHECK(b.etags[0].device == "100a1b2c");
    CHECK(b.etags[0].type == etag_type::motion);
    CHECK(b.etags[0].region == "door");
    CHECK(b.etags[0].magnitude == 0.8);
    CHECK(b.etags[0].ts == 1764460800.125);
    CHECK(b.etags[1].id.empty());
    CHECK(b.etags[1].type == etag_type::status);
    CHECK(b.etags[1].ts == 1764460801);
    CHECK(b.etags[1].state == device_state::internet_offline);
    CHECK(b.etags[2].type == etag_type::heartbeat);
    CHECK(b.etags[2].state == device_state::offline);
}

TEST_CASE("batch text: malformed ETags are rejected individually with index and reason") {
    const std::string name_255(255, 'n');
    const std::string name_256(256, 'n');
    const std::string text = R"({"etags": [
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
       "state": "online"},
      {"account": "a", "device": ")" +
                             name_256 + R"(", "type": "status", "ts": 1, "state": "online"},
      {"account": "a", "device": ")" +
                             name_255 + R"(", "type": "status", "ts": 1, "state": "online"},
      {"account": "a", "device": "d", "type": 5, "ts": 1, "state": "online"},
      {"account": "a", "device": "d", "type": "status", "ts": 1}]})";
    const parsed_batch b = parse(text);
    CHECK(errors_of(b) == std::vector<std::string>{
                              "etag 1: missing field 'ts'",
                              "etag 2: field 'ts' must be a number",
                              "etag 3: unknown type 'smoke'",
                              "etag 4: unknown state 'asleep'",
                              "etag 5: missing field 'region'",
                              "etag 6: missing field 'device'",
                              "etag 7: field 'account' must be a string",
                              "etag 8: field 'id' must be a string",
                              "etag 9: must be an object",
                              "etag 10: must be an object",
                              "etag 11: must be an object",
                              "etag 12: must be an object",
                              "etag 13: field 'magnitude' must be a number",
                              "etag 14: field 'account' must have 1 to 255 characters",
                              "etag 15: field 'account' must be a string",
                              "etag 17: missing field 'account'",
                              "etag 18: missing field 'device'",
                              "etag 20: field 'device' must have 1 to 255 characters",
                              "etag 22: field 'type' must be a string",
                              "etag 23: missing field 'state'",
                          });
    std::vector<std::size_t> indices;
    for (const auto& r : b.rejected) indices.push_back(r.index);
    CHECK(indices == std::vector<std::size_t>{1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                              11, 12, 13, 14, 15, 17, 18, 20, 22, 23});
    REQUIRE(b.etags.size() == 4);
    CHECK(b.etags[0].type == etag_type::heartbeat);
    CHECK(b.etags[1].ts == -1.5e-3);
    CHECK(b.etags[1].state == device_state::offline);
    CHECK(b.etags[2].account == "b");  // a repeated member: the last one counts
    CHECK(b.etags[3].device == name_255);
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
