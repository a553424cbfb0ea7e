// etag_json_test.cpp — ETags from JSON: every field, and each malformed ETag rejected on its
// own with its index and reason while the rest of the batch goes on.
#include "core/etag_json.hpp"

#include "alert_test_util.hpp"

using namespace alerts;
using json = nlohmann::json;

TEST_CASE("well-formed ETags of every type are converted") {
    const json etags = json::parse(R"([
      {"id": "e-1", "account": "00001234", "device": "100a1b2c", "type": "motion",
       "ts": 1764460800.125, "region": "door", "magnitude": 0.8},
      {"account": "00001234", "device": "100a1b2c", "type": "status", "ts": 1764460801,
       "state": "internet_offline", "extra": [1, 2]},
      {"account": "00001234", "device": "100a1b2c", "type": "heartbeat", "ts": 1764460830.0,
       "state": "offline"}])");
    parsed_batch b;
    parse_etags(etags, b);
    REQUIRE(b.etags.size() == 3);
    CHECK(b.rejected.empty());
    CHECK(b.etags[0].id == "e-1");
    CHECK(b.etags[0].type == etag_type::motion);
    CHECK(b.etags[0].region == "door");
    CHECK(b.etags[0].magnitude == 0.8);
    CHECK(b.etags[0].ts == 1764460800.125);
    CHECK(b.etags[1].id.empty());
    CHECK(b.etags[1].state == device_state::internet_offline);
    CHECK(b.etags[2].type == etag_type::heartbeat);
    CHECK(b.etags[2].state == device_state::offline);
}

TEST_CASE("malformed ETags are rejected individually with index and reason") {
    const json etags = json::parse(R"([
      {"account": "a", "device": "d", "type": "heartbeat", "ts": 1, "state": "online"},
      {"account": "a", "device": "d", "type": "heartbeat", "state": "online"},
      {"account": "a", "device": "d", "type": "heartbeat", "ts": "1", "state": "online"},
      {"account": "a", "device": "d", "type": "smoke", "ts": 1},
      {"account": "a", "device": "d", "type": "status", "ts": 1, "state": "asleep"},
      {"account": "a", "device": "d", "type": "motion", "ts": 1, "magnitude": 1},
      {"account": "a", "type": "status", "ts": 1, "state": "online"},
      {"account": 7, "device": "d", "type": "status", "ts": 1, "state": "online"},
      {"id": 3, "account": "a", "device": "d", "type": "status", "ts": 1, "state": "online"},
      "not an object",
      {"account": "a", "device": "d", "type": "motion", "ts": 1, "region": "r", "magnitude": null},
      {"account": "", "device": "d", "type": "status", "ts": 1, "state": "online"}])");
    parsed_batch b;
    parse_etags(etags, b);
    CHECK(b.etags.size() == 1);
    std::vector<std::string> errors;
    for (const auto& r : b.rejected) errors.push_back(r.error);
    CHECK(errors == std::vector<std::string>{
                        "etag 1: missing field 'ts'", "etag 2: field 'ts' must be a number",
                        "etag 3: unknown type 'smoke'", "etag 4: unknown state 'asleep'",
                        "etag 5: missing field 'region'", "etag 6: missing field 'device'",
                        "etag 7: field 'account' must be a string",
                        "etag 8: field 'id' must be a string", "etag 9: must be an object",
                        "etag 10: field 'magnitude' must be a number",
                        "etag 11: field 'account' must have 1 to 255 characters"});
    CHECK(b.rejected[0].index == 1);
    CHECK(b.rejected.back().index == 11);
}

TEST_CASE("etags that are not an array fail the activation") {
    parsed_batch b;
    CHECK_THROWS_AS(parse_etags(json::object(), b), std::invalid_argument);
}
