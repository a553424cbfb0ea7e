// The launcher in Lambda mode (docs/SDK.md, "On AWS Lambda"), in real actions built by the
// real `compile` and run as the proxy runs them: request lines on stdin, answers on fd 3, with
// the ack and pipelining on (the case where OpenWhisk mode writes its sentinels), and
// AWS_LAMBDA_RUNTIME_API in the environment. Events of every JSON type are the arguments, any
// JSON answer is the answer, an exception is the one {"__lambda_error": …} line with its
// dynamic type, no sentinel is written, the context has Lambda's fields and _X_AMZN_TRACE_ID
// is the activation's. The same binaries without the variable behave as before.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "process_tools.hpp"
#include "test_util.hpp"

#include <nlohmann/json.hpp>

using namespace support;
using nlohmann::json;

namespace {

const std::string SENTINEL = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX\n";
const std::string ACK = R"({"ok":true,"pipeline":true})";
const std::string XRAY =
    "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
const std::string ARN = "arn:aws:lambda:us-east-1:012345678912:function:f";

// `source` (a single file) built once by the real `compile`, entry point main: its exec.
fs::path compiled_source(const std::string& source) {
    static std::map<std::string, std::unique_ptr<temp_dir>> builds;
    auto& build = builds[source];
    if (!build) {
        build = std::make_unique<temp_dir>("actionloop-lambda-action");
        fs::create_directories(build->path() / "src");
        fs::create_directories(build->path() / "bin");
        write_file(build->path() / "src" / "exec", source);
        const command_result built =
            run_command({compiler_script().string(), "main", (build->path() / "src").string(),
                         (build->path() / "bin").string()},
                        "", path_only_env(), build->path());
        REQUIRE_MESSAGE(built.exit_code == 0, built.out << built.err);
    }
    return build->path() / "bin" / "exec";
}

// tests/fixtures/cpp/<fixture>, built once.
fs::path compiled(const std::string& fixture) {
    return compiled_source(fixture_text("cpp/" + fixture));
}

// The fenced block of docs/SDK.md that starts with `start`, without its fences.
std::string sdk_block(const std::string& start) {
    std::istringstream doc(read_file(fs::path(ACTIONLOOP_SOURCE_DIR) / "docs/SDK.md"));
    std::string block;
    bool inside = false;
    for (std::string line; std::getline(doc, line);) {
        if (line.rfind("```", 0) == 0) {
            if (inside && block.rfind(start, 0) == 0) return block;
            inside = !inside;
            block.clear();
        } else if (inside) {
            block += line + "\n";
        }
    }
    FAIL("no block starting with " << start << " in docs/SDK.md");
    return {};
}

struct served {
    std::vector<std::string> answers;  // the lines on fd 3, the ack first
    std::string out;
    std::string err;
    int exit_code = -1;
};

// Runs `exec` on `lines` (then end of input) as the proxy runs an action (ack and pipelining
// on), with `extra` in its environment.
served serve(const fs::path& exec, const std::vector<std::string>& lines, const env_map& extra) {
    temp_dir io("actionloop-lambda-io");
    env_map env = path_only_env();
    env["__OW_WAIT_FOR_ACK"] = "1";
    env["ACTIONLOOP_PIPELINE"] = "1";
    for (const auto& [name, value] : extra) env[name] = value;
    std::string input;
    for (const std::string& line : lines) input += line + "\n";
    const fs::path answers = io.path() / "fd3";
    const command_result result =
        run_command({"/bin/sh", "-c", "exec \"$0\" 3>\"$1\"", exec.string(), answers.string()},
                    input, env, exec.parent_path(), std::chrono::seconds(60));
    served s;
    s.out = result.out;
    s.err = result.err;
    s.exit_code = result.exit_code;
    const std::string text = read_file(answers);
    for (size_t at = 0; at < text.size();) {
        const size_t end = text.find('\n', at);
        REQUIRE_MESSAGE(end != std::string::npos, "an answer without its newline: " << text);
        s.answers.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return s;
}

const env_map LAMBDA = {{"AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001"}};

std::string request(const std::string& value, const json& fields = json::object()) {
    json line = fields;
    line["activation_id"] = line.value("activation_id", "8476a536-e9f4-11e8-9739-2dfe598c3fcd");
    line["action_name"] = ARN;
    std::string text = line.dump();
    text.pop_back();
    return text + ",\"value\":" + value + "}";
}

std::string error_line(const std::string& message, const std::string& type) {
    return R"({"__lambda_error":{"errorMessage":)" + json(message).dump() + R"(,"errorType":)" +
           json(type).dump() + R"(,"stackTrace":[]}})";
}

}  // namespace

TEST_CASE("launcher lambda: events of every JSON type are args, any JSON answer, no sentinels") {
    const fs::path exec = compiled("lambda_event.cpp");
    const std::vector<std::string> lines = {
        request(R"("hello")"),
        request("42"),
        request("null"),
        request("[1,\"a\"]"),
        request(R"({"k":"v"})"),
        request(R"({"answer":42})"),
        request(R"({"answer":"text"})"),
        request(R"({"answer":null})"),
        request(R"({"answer":{"error":"mine"}})"),
    };
    const served s = serve(exec, lines, LAMBDA);
    CHECK(s.exit_code == 0);
    REQUIRE(s.answers.size() == lines.size() + 1);
    CHECK(s.answers[0] == ACK);
    const std::vector<std::pair<json, std::string>> events = {{"hello", "string"},
                                                              {42, "number"},
                                                              {nullptr, "null"},
                                                              {{1, "a"}, "array"},
                                                              {{{"k", "v"}}, "object"}};
    for (size_t i = 0; i < events.size(); ++i) {
        const json answer = json::parse(s.answers[i + 1]);
        CHECK(answer["args"] == events[i].first);
        CHECK(answer["type"] == events[i].second);
    }
    CHECK(s.answers[6] == "42");
    CHECK(s.answers[7] == R"("text")");
    CHECK(s.answers[8] == "null");
    CHECK(s.answers[9] == R"({"error":"mine"})");  // a response like any other
    // The logs, and nothing else: no sentinel on either stream.
    std::string out_logs;
    std::string err_logs;
    for (size_t i = 0; i < lines.size(); ++i) {
        out_logs += "log: out\n";
        err_logs += "log: err\n";
    }
    CHECK(s.out == out_logs);
    CHECK(s.err == err_logs);

    // The control: the same binary and lines in OpenWhisk mode (no variable, or an empty one)
    // refuses the string, ends each activation with the sentinels.
    for (const env_map& openwhisk : {env_map{}, env_map{{"AWS_LAMBDA_RUNTIME_API", ""}}}) {
        const served ow = serve(exec, lines, openwhisk);
        REQUIRE(ow.answers.size() == lines.size() + 1);
        CHECK(
            ow.answers[1] ==
            R"({"error":"invalid request: the argument must be a dictionary but has type 'string'"})");
        CHECK(count_occurrences(ow.out, SENTINEL) == lines.size());
        CHECK(count_occurrences(ow.err, SENTINEL) == lines.size());
    }
}

TEST_CASE("launcher lambda: an exception is the exact __lambda_error line, and serving goes on") {
    const fs::path exec = compiled("lambda_event.cpp");
    const served s =
        serve(exec,
              {request(R"({"throw":"runtime_error","message":"say \"hi\"\nthen \\ bye"})"),
               request(R"({"throw":"bad_utf8"})"), request(R"({"throw":"out_of_range"})"),
               request(R"({"throw":"type_error"})"), request(R"({"throw":"int"})"),
               request(R"({"answer":"still here"})")},
              LAMBDA);
    CHECK(s.exit_code == 0);
    REQUIRE(s.answers.size() == 7);
    CHECK(s.answers[1] == R"({"__lambda_error":{"errorMessage":"say \"hi\"\nthen \\ bye",)"
                          R"("errorType":"std::runtime_error","stackTrace":[]}})");
    CHECK(s.answers[2] == "{\"__lambda_error\":{\"errorMessage\":\"bad \xef\xbf\xbd\xef\xbf\xbd "
                          "bytes\",\"errorType\":\"std::runtime_error\",\"stackTrace\":[]}}");
    CHECK(s.answers[3] ==
          error_line("vector::_M_range_check: __n (which is 5) >= this->size() (which is 2)",
                     "std::out_of_range"));
    CHECK(s.answers[4] ==
          error_line("[json.exception.type_error.302] type must be number, but is string",
                     "nlohmann::json_abi_v3_11_2::detail::type_error"));
    CHECK(s.answers[5] == error_line("unknown exception", "Unknown"));
    CHECK(s.answers[6] == R"("still here")");
    // On stderr as in OpenWhisk mode, and no sentinel.
    CHECK(contains(s.err, "action error: say \"hi\"\nthen \\ bye\n"));
    CHECK(contains(s.err, "action error: [json.exception.type_error.302] type must be number, "
                          "but is string\n"));
    CHECK(contains(s.err, "action error: unknown exception\n"));
    CHECK_FALSE(contains(s.out + s.err, SENTINEL));
}

TEST_CASE("launcher lambda: the context's Lambda fields and _X_AMZN_TRACE_ID, per request") {
    const fs::path exec = compiled("lambda_event.cpp");
    env_map env = LAMBDA;
    env["_X_AMZN_TRACE_ID"] = "stale, from the start";
    const json full = {{"deadline", std::to_string(epoch_millis() + 60000)},
                       {"lambda_trace_id", XRAY},
                       {"lambda_client_context", R"({"custom":{"k":"v"}})"},
                       {"lambda_cognito_identity", R"({"cognitoIdentityId":"c","pool":"p"})"}};
    const json unsampled = {{"activation_id", "second-request"},
                            {"lambda_trace_id", "Root=1-00000000-00000000000000000000000a"}};
    const served s = serve(exec,
                           {request("{}", full), request("{}"), request("{}", full),
                            request("{}", unsampled), request(R"("last")")},
                           env);
    REQUIRE(s.answers.size() == 6);
    const json first = json::parse(s.answers[1]);
    CHECK(first["activation_id"] == "8476a536-e9f4-11e8-9739-2dfe598c3fcd");
    CHECK(first["action_name"] == ARN);
    CHECK(first["lambda_trace_id"] == XRAY);
    CHECK(first["client_context"] == R"({"custom":{"k":"v"}})");
    CHECK(first["cognito_identity"] == R"({"cognitoIdentityId":"c","pool":"p"})");
    CHECK(first["has_deadline"] == true);
    CHECK(first["trace_env"] == XRAY);
    CHECK(first["ow_env"] == nullptr);  // no __OW_ variables in Lambda mode
    const std::string traceparent = first["traceparent"];
    CHECK_MESSAGE(
        std::regex_match(traceparent,
                         std::regex("00-5759e988bd862e3fe1be46a994272793-[0-9a-f]{16}-01")),
        traceparent);
    // A request without them: empty fields, the variable unset (also the one set at start).
    const json second = json::parse(s.answers[2]);
    CHECK(second["lambda_trace_id"] == "");
    CHECK(second["client_context"] == "");
    CHECK(second["cognito_identity"] == "");
    CHECK(second["traceparent"] == "");
    CHECK(second["trace_env"] == nullptr);
    CHECK(json::parse(s.answers[3]) == first);  // the same request, the same context
    const json fourth = json::parse(s.answers[4]);
    CHECK(fourth["trace_env"] == "Root=1-00000000-00000000000000000000000a");
    const std::string unsampled_parent = fourth["traceparent"];
    CHECK(unsampled_parent.substr(0, 36) == "00-0000000000000000000000000000000a-");
    CHECK(unsampled_parent.substr(52) == "-00");
    CHECK(unsampled_parent.substr(36, 16) != traceparent.substr(36, 16));  // another request
    CHECK(json::parse(s.answers[5])["trace_env"] == nullptr);

    // In OpenWhisk mode the same members are none of the context's, and the variable is left.
    const served ow = serve(exec, {request("{}", full)}, {{"_X_AMZN_TRACE_ID", "left alone"}});
    REQUIRE(ow.answers.size() == 2);
    const json ow_answer = json::parse(ow.answers[1]);
    CHECK(ow_answer["lambda_trace_id"] == "");
    CHECK(ow_answer["client_context"] == "");
    CHECK(ow_answer["traceparent"] == "");
    CHECK(ow_answer["trace_env"] == "left alone");
    CHECK(ow_answer["ow_env"] == "8476a536-e9f4-11e8-9739-2dfe598c3fcd");
}

TEST_CASE("launcher lambda: a raw entry point gets the event's text as it is") {
    const fs::path exec = compiled("lambda_raw.cpp");
    const served s =
        serve(exec,
              {request(R"("hello")", {{"lambda_trace_id", XRAY}}), request("42"), request("null"),
               request(R"({"a": [1, 2]})"), request(R"("answer")"), request(R"("throw")")},
              LAMBDA);
    CHECK(s.exit_code == 0);
    REQUIRE(s.answers.size() == 7);
    CHECK(
        s.answers[1] ==
        json{{"value_text", R"("hello")"}, {"lambda_trace_id", XRAY}, {"trace_env", XRAY}}.dump());
    CHECK(json::parse(s.answers[2])["value_text"] == "42");
    CHECK(json::parse(s.answers[2])["trace_env"] == "<unset>");
    CHECK(json::parse(s.answers[3])["value_text"] == "null");
    CHECK(json::parse(s.answers[4])["value_text"] == R"({"a": [1, 2]})");
    CHECK(s.answers[5] == "12.5");
    CHECK(s.answers[6] == error_line(R"(raw: "throw")", "std::out_of_range"));
    CHECK_FALSE(contains(s.out + s.err, SENTINEL));
}

TEST_CASE("launcher lambda: docs/SDK.md's example responds and fails as the docs show") {
    const fs::path exec = compiled_source(sdk_block("// greet_event.cpp"));
    const std::string error = sdk_block(R"({"errorMessage":"the event must be a name",)");
    const served s = serve(exec, {request(R"("Ada")"), request("{}")}, LAMBDA);
    REQUIRE(s.answers.size() == 3);
    CHECK(s.answers[1] == R"x("Hello, Ada (request 8476a536-e9f4-11e8-9739-2dfe598c3fcd)")x");
    CHECK(s.answers[2] == R"({"__lambda_error":)" + error.substr(0, error.size() - 1) + "}");
}
