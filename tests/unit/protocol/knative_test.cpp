// Single-entrypoint mode, the pure parts: the platform switch, __OW_HTTP_METHODS, the
// dedicated action from __OW_ACTION_*, the envelope → /init and /run bodies, and the
// result → HTTP response rules (proxy/protocol/knative/).
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "protocol/error_answer.hpp"
#include "protocol/knative/envelope.hpp"
#include "protocol/knative/platform.hpp"
#include "protocol/knative/web_answer.hpp"

using namespace actionloop;
using namespace actionloop::knative;

namespace {

web_request post_json(const std::string& body, const std::string& target = "/") {
    return {"POST", target, {{"Host", "x"}, {"Content-Type", "application/json"}}, body};
}

std::string header_of(const answer& r, const std::string& name) {
    for (const auto& [key, value] : r.headers) {
        if (key == name) return value;
    }
    return "<absent>";
}

int status_thrown(const std::function<void()>& f, std::string& message) {
    try {
        f();
    } catch (const refusal& e) {
        message = e.what();
        return e.status();
    }
    return 0;
}

}  // namespace

TEST_CASE("knative: __OW_RUNTIME_PLATFORM") {
    CHECK(platform_of(nullptr) == platform::openwhisk);
    CHECK(platform_of("openwhisk") == platform::openwhisk);
    CHECK(platform_of("knative") == platform::knative);
    CHECK(platform_of("") == platform::unsupported);
    CHECK(platform_of("Knative") == platform::unsupported);
    CHECK(platform_of("bogus") == platform::unsupported);
    CHECK(unsupported_platform_message("bogus") ==
          "__OW_RUNTIME_PLATFORM (bogus) is not supported by the runtime. Accepted values: "
          "openwhisk (the default, also when unset) and knative, in lower case.");
}

TEST_CASE("knative: __OW_HTTP_METHODS") {
    std::vector<std::string> warnings;
    const method_set none = parse_http_methods(nullptr, warnings);
    CHECK(none.allows("POST"));
    CHECK_FALSE(none.allows("GET"));
    CHECK_FALSE(parse_http_methods("GET", warnings).allows("GET"));  // no brackets: POST only
    CHECK(parse_http_methods("GET", warnings).allows("POST"));
    CHECK(parse_http_methods("", warnings).allows("POST"));
    const method_set both = parse_http_methods("[get, POST]", warnings);
    CHECK(both.allows("GET"));
    CHECK(both.allows("HEAD"));
    CHECK(both.allows("POST"));
    CHECK_FALSE(both.allows("PUT"));
    CHECK(warnings.empty());
    const method_set odd = parse_http_methods("[PUT,PATCH,delete,Options]", warnings);
    CHECK_FALSE(odd.allows("POST"));
    CHECK(odd.allows("PUT"));
    CHECK(odd.allows("DELETE"));
    CHECK(odd.allows("OPTIONS"));
    CHECK_FALSE(odd.allows("PATCH"));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("'PATCH'") != std::string::npos);
}

TEST_CASE("knative: a dedicated action from __OW_ACTION_*") {
    std::map<std::string, std::string> env;
    auto lookup = [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    CHECK_FALSE(dedicated_from_env(lookup));
    env["__OW_ACTION_CODE"] = "";
    CHECK_FALSE(dedicated_from_env(lookup));
    env = {{"__OW_ACTION_CODE", "UEsD"},
           {"__OW_ACTION_BINARY", "TRUE"},
           {"__OW_ACTION_RAW", "yes"},
           {"__OW_ACTION_NAME", "hello"}};
    auto action = dedicated_from_env(lookup);
    REQUIRE(action);
    CHECK(action->code == "UEsD");
    CHECK(action->binary);
    CHECK_FALSE(action->raw);
    CHECK(action->main.empty());
    CHECK(action->name == "hello");
    env = {{"OW_ACTION_CODE_FILE", "/nonexistent/code"}};
    CHECK_THROWS_AS(dedicated_from_env(lookup), std::runtime_error);
}

TEST_CASE("knative: the envelope") {
    CHECK(parse_envelope(post_json("")) == ordered_json::object());
    CHECK(parse_envelope(post_json("[1,2]")) == ordered_json::object());
    CHECK(parse_envelope(post_json("{\"value\":{\"a\":1}}"))["value"]["a"] == 1);
    web_request text = post_json("{\"value\":{\"a\":1}}");
    text.headers[1].second = "text/plain";
    CHECK(parse_envelope(text) == ordered_json::object());
    web_request charset = post_json("{\"value\":{}}");
    charset.headers[1].second = "Application/JSON; charset=utf-8";
    CHECK(parse_envelope(charset).contains("value"));
    for (const char* bad : {"{", "\"x\"", "3", "null", "true"}) {
        std::string message;
        CHECK(status_thrown([&] { parse_envelope(post_json(bad)); }, message) == 500);
        CHECK(message == "Bad request.");
    }
}

TEST_CASE("knative: init becomes the classic /init body") {
    const init_fields fields = translate_init(ordered_json::parse(
        R"({"code":"x","binary":false,"raw":true,"name":"web","env":{"A":"1"}})"));
    CHECK(fields.init_body ==
          R"({"value":{"code":"x","main":"main","binary":false,"env":{"A":"1"}}})");
    CHECK(fields.raw);
    CHECK(fields.name == "web");
    CHECK(translate_init(ordered_json::parse(R"({"code":"x","main":"go","binary":null,"raw":0})"))
              .init_body == R"({"value":{"code":"x","main":"go","binary":false}})");
    std::string message;
    CHECK(status_thrown([] { translate_init(ordered_json::parse(R"({"code":""})")); }, message) ==
          403);
    CHECK(message == "Missing main/no code to execute.");
    CHECK(status_thrown([] { translate_init(ordered_json("x")); }, message) == 403);
    CHECK(
        status_thrown([] { translate_init(ordered_json::parse(R"({"code":"x","binary":"yes"})")); },
                      message) == 500);
    CHECK(message == "internal error during request processing.");
    CHECK(status_thrown([] { translate_init(ordered_json::parse(R"({"code":"x","raw":1})")); },
                        message) == 500);
}

TEST_CASE("knative: run bodies") {
    const web_request req = post_json("");
    // No activation: the value alone, raw or not.
    CHECK(translate_run(ordered_json::parse(R"({"value":{"b":1,"a":2}})"), req, false, "", "") ==
          R"({"value":{"b":1,"a":2}})");
    CHECK(translate_run(ordered_json::object(), req, true, "", "") == R"({"value":{}})");
    // Activation: the HTTP context over the value; its strings and the body's at top level.
    const auto envelope = ordered_json::parse(
        R"({"activation":{"namespace":"ns","deadline":1000,"transaction_id":"t1"},)"
        R"("value":{"name":"Joe","__ow_path":"/x"},"namespace":"top"})");
    const auto line = ordered_json::parse(translate_run(envelope, req, false, "hello", "me"));
    CHECK(line["value"]["name"] == "Joe");
    CHECK(line["value"]["__ow_method"] == "POST");
    CHECK(line["value"]["__ow_path"] == "");
    CHECK(line["value"]["__ow_user"] == "me");
    CHECK(line["value"]["__ow_headers"] ==
          ordered_json::parse(R"({"host":"x","content-type":"application/json"})"));
    CHECK(line["namespace"] == "top");
    CHECK(line["transaction_id"] == "t1");
    CHECK_FALSE(line.contains("deadline"));  // not a string
    CHECK(line["action_name"] == "hello");
    CHECK(ordered_json::parse(
              translate_run(ordered_json::parse(R"({"activation":{"action_name":"/ns/given"}})"),
                            req, false, "hello", ""))["action_name"] == "/ns/given");
    // An array value goes as it is.
    CHECK(translate_run(ordered_json::parse(R"({"activation":{},"value":[1]})"), req, false, "",
                        "") == R"({"value":[1]})");
    // Raw: only the __ow_* keys.
    const auto raw = ordered_json::parse(
        translate_run(ordered_json::parse(R"({"activation":{},"value":{"name":"Joe"}})"),
                      post_json("", "/?a=1&b=x+y%21&a=2&c"), true, "", ""));
    CHECK(raw["value"]["__ow_body"] == "eyJuYW1lIjoiSm9lIn0=");
    CHECK(raw["value"]["__ow_query"] ==
          ordered_json::parse(R"({"a":["1","2"],"b":"x y!","c":""})"));
    CHECK_FALSE(raw["value"].contains("name"));
    CHECK(raw["value"].size() == 6);
    // A scalar value.
    std::string message;
    CHECK(status_thrown(
              [&] { translate_run(ordered_json::parse(R"({"value":"s"})"), req, false, "", ""); },
              message) == 403);
    CHECK(message ==
          "Internal system error: the argument must be a dictionary but has type 'string'.");
    status_thrown(
        [&] { translate_run(ordered_json::parse(R"({"value":1.5})"), req, true, "", ""); },
        message);
    CHECK(message.find("'number'") != std::string::npos);
    status_thrown(
        [&] { translate_run(ordered_json::parse(R"({"value":false})"), req, false, "", ""); },
        message);
    CHECK(message.find("'boolean'") != std::string::npos);
}

TEST_CASE("knative: repeated headers are joined") {
    web_request req = post_json("");
    req.headers.emplace_back("X-A", "1");
    req.headers.emplace_back("x-a", "2");
    CHECK(headers_object(req)["x-a"] == "1, 2");
}

TEST_CASE("knative: a result becomes the HTTP response") {
    answer r = web_response(R"({"payload":"Hello World!"})", "");
    CHECK(r.status == 200);
    CHECK(r.body == R"({"payload":"Hello World!"})");
    CHECK(header_of(r, "Content-Type") == "application/json; charset=utf-8");
    CHECK(header_of(r, "Access-Control-Allow-Origin") == "*");
    CHECK(header_of(r, "Access-Control-Allow-Methods") ==
          "OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH");
    CHECK(header_of(r, "Access-Control-Allow-Headers") ==
          "Authorization, Origin, X-Requested-With, Content-Type, Accept, User-Agent");
    CHECK(header_of(web_response("{}", "X-Mine"), "Access-Control-Allow-Headers") == "X-Mine");

    r = web_response(R"({"body":"<h3>hi</h3>"})", "");
    CHECK(r.body == "<h3>hi</h3>");
    CHECK(header_of(r, "Content-Type") == "text/html; charset=utf-8");

    r = web_response(R"({"statusCode":404,"headers":{"X-Reason":"missing","content-type":)"
                     R"("Text/Plain; Charset=latin1; a=b","x-n":5,"Set-Cookie":["a=1","b=2"],)"
                     R"("access-control-allow-origin":"example.com"},"body":"not found"})",
                     "");
    CHECK(r.status == 404);
    CHECK(r.body == "not found");
    CHECK(header_of(r, "Content-Type") == "text/plain; a=b; charset=utf-8");
    CHECK(header_of(r, "X-Reason") == "missing");
    CHECK(header_of(r, "x-n") == "5");
    CHECK(header_of(r, "access-control-allow-origin") == "example.com");
    CHECK(header_of(r, "Access-Control-Allow-Origin") == "<absent>");
    CHECK(std::count_if(r.headers.begin(), r.headers.end(),
                        [](const auto& h) { return h.first == "Set-Cookie"; }) == 2);

    r = web_response(R"({"statusCode":201})", "");
    CHECK(r.status == 201);
    CHECK(r.body == "{}");
    r = web_response("[1,2]", "");
    CHECK(r.body == "[1,2]");
    // The one parse of the answer also refuses what is not an object or array (run_step
    // leaves the check to single-entrypoint mode), with /run's status and text.
    for (const char* not_container : {"42\n", "\"text\"\n", "{\"a\":\n", "nonsense\n"}) {
        CAPTURE(not_container);
        r = web_response(not_container, "");
        CHECK(r.status == 502);
        CHECK(r.body == R"({"error":"The action did not return a dictionary or array."})");
    }
    r = web_response(R"({"body":""})", "");
    CHECK(r.status == 204);
    CHECK(r.bodyless);
    CHECK(r.body.empty());
    CHECK(header_of(r, "Content-Type") == "<absent>");
    CHECK(web_response(R"({"body":null})", "").status == 204);
    r = web_response(R"({"body":42})", "");
    CHECK(r.body == "42");
    CHECK(header_of(r, "Content-Type") == "application/json; charset=utf-8");
    r = web_response(R"({"statusCode":304,"body":"x"})", "");
    CHECK(r.bodyless);

    r = web_response(R"({"headers":{"Content-Type":"image/png"},"body":"iVBORw0KGgo="})", "");
    CHECK(r.body == "\x89PNG\r\n\x1a\n");
    CHECK(header_of(r, "Content-Type") == "image/png");
    CHECK(header_of(r, "Content-Transfer-Encoding") == "binary");
}

TEST_CASE("knative: error bodies") {
    const answer r = error_response(403, "System not initialized.");
    CHECK(r.status == 403);
    CHECK(r.body == R"({"error":"System not initialized."})");
    CHECK(r.json);  // Content-Type: application/json
    CHECK(r.outcome == activation_outcome::rejected);
    answer crash = error_answer(400, "command exited");
    crash.outcome = activation_outcome::crash;
    const answer classic = classic_response(crash);
    CHECK(classic.body == "{\"error\":\"command exited\"}");
    CHECK(classic.status == 400);
    CHECK(classic.outcome == activation_outcome::crash);  // the run's own, not guessed again
    CHECK(error_response(502, "x").outcome == activation_outcome::action_error);
    // A web answer made from the action's line is a success; an unusable line is not.
    CHECK(web_response(R"({"statusCode":404,"body":"none"})", "").outcome ==
          activation_outcome::success);
    CHECK(web_response("not json", "").outcome == activation_outcome::action_error);
}

TEST_CASE("knative: headers that cannot be sent are dropped") {
    const answer r = web_response(
        R"({"headers":{"X-Bad":"a\r\nX-Forged: 1","Bad Name":"x","X-Ok":"fine"},"body":"b"})", "");
    CHECK(header_of(r, "X-Bad") == "<absent>");
    CHECK(header_of(r, "Bad Name") == "<absent>");
    CHECK(header_of(r, "X-Ok") == "fine");
}

// The JSON bounds and the linear-time reader (protocol/knative/ordered_parse.hpp).
namespace {

std::string wide_text(size_t members, const std::string& repeated = "") {
    std::string text = "{";
    for (size_t i = 0; i < members; ++i) {
        text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
    }
    return text + repeated + "\"last\":true}";
}

}  // namespace

TEST_CASE("knative: parse_ordered reads what ordered_json::parse reads, in linear time") {
    const std::vector<std::string> texts = {
        "{}",
        "[]",
        "1",
        "\"s\"",
        "null",
        R"({"b":1,"a":[true,null,{"c":"d"}],"e":-1.5e3})",
        R"({"a":1,"b":2,"a":3})",                       // a repeated key: first place, last value
        wide_text(40, "\"k3\":\"again\",\"k39\":{},"),  // the same past the index threshold
        R"({"a":{"x":1,"x":{"y":[1,2]}},"b":[{"z":0,"z":1}]})",
        "18446744073709551615",
        "-0",
        "{\"u\":\"\\u00e9\\ud83d\\ude00\"}"};
    for (const std::string& text : texts) {
        const ordered_json expected = ordered_json::parse(text);
        const ordered_json got = parse_ordered(text);
        CHECK_MESSAGE(got == expected, text);
        CHECK(got.dump() == expected.dump());  // the same order of members
    }
    for (const std::string bad :
         {"", "{", "[1,]", "{\"a\"}", "1 2", "1e999", "\"\\ud800\"", "\"\xff\"", "{\"a\":1}x"}) {
        CHECK_MESSAGE(parse_ordered(bad).is_discarded(), bad);
    }
    // 200,000 keys: ordered_json::parse takes minutes; here a fraction of a second.
    const std::string wide = wide_text(200000);
    const ordered_json parsed = parse_ordered(wide);
    CHECK(parsed.size() == 200001);
    CHECK(parsed.begin().key() == "k0");
    CHECK(parsed["k199999"] == 199999);
}

TEST_CASE("knative: an envelope over the JSON bounds is refused with 413 before it is parsed") {
    std::string message;
    const std::string deep = std::string(300000, '[') + std::string(300000, ']');
    CHECK(status_thrown([&] { parse_envelope(post_json("{\"value\":" + deep + "}")); }, message) ==
          413);
    CHECK(message == "The request's JSON nests deeper than 512 levels (OW_MAX_JSON_DEPTH).");
    CHECK(status_thrown(
              [&] {
                  parse_envelope(post_json(wide_text(10)), {512, 10});
              },
              message) == 413);
    CHECK(message == "The request's JSON has more than 10 members (OW_MAX_JSON_MEMBERS).");
    CHECK(parse_envelope(post_json(wide_text(10)), {1, 11}).size() == 11);
    // Not JSON by its Content-Type: not parsed, so not bounded.
    web_request text = post_json("{\"value\":" + deep + "}");
    text.headers[1].second = "text/plain";
    CHECK(parse_envelope(text) == ordered_json::object());
}

TEST_CASE("knative: the /run line's strings, many and repeated, in their first place") {
    std::string activation = "{";
    for (int i = 0; i < 50000; ++i) activation += "\"s" + std::to_string(i) + "\":\"a\",";
    activation += "\"n\":1}";
    const ordered_json envelope = parse_ordered(R"({"s7":"top","activation":)" + activation +
                                                R"(,"value":{"x":1},"s0":"body"})");
    const ordered_json line =
        parse_ordered(translate_run(envelope, post_json(""), false, "act", ""));
    CHECK(line.size() == 1 + 50000 + 1);  // value, the strings, action_name
    CHECK(line.begin().key() == "value");
    CHECK(std::next(line.begin()).key() == "s0");
    CHECK(line["s0"] == "body");  // the body's replaces the activation's, in its place
    CHECK(line["s7"] == "top");
    CHECK(line["s49999"] == "a");
    CHECK(line["action_name"] == "act");
}

TEST_CASE("knative: an answer over the JSON bounds is a 502, before it is parsed") {
    const std::string deep = std::string(200000, '[') + std::string(200000, ']');
    const answer refused = web_response(deep, "");
    CHECK(refused.status == 502);
    CHECK(refused.body ==
          R"({"error":"The action's answer nests deeper than 512 levels (OW_MAX_JSON_DEPTH)."})");
    const answer wide = web_response(wide_text(5), "", {512, 5});
    CHECK(wide.status == 502);
    CHECK(wide.body ==
          R"({"error":"The action's answer has more than 5 members (OW_MAX_JSON_MEMBERS)."})");
    const answer page = web_response(R"({"body":"hi","statusCode":201})", "", {1, 2});
    CHECK(page.status == 201);
    CHECK(page.body == "hi");
}
