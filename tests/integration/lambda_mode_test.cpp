// Lambda mode (docs/LAMBDA.md): the real proxy as the client of the real local Runtime API
// (lambda-api), serving tests/fixtures/cpp/lambda.cpp. Each case invokes through the
// emulator's POST /2015-03-31/functions/function/invocations, as a Lambda user's curl does,
// and reads what the runtime posted back from the answer and from /_lambda-api/stats.
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "http_client.hpp"
#include "process_tools.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using namespace std::chrono;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* const INVOKE = "/2015-03-31/functions/function/invocations";

// tests/fixtures/cpp/lambda.cpp compiled once with the build's compile script: a task root
// holding `exec`, as a Lambda zip does.
const fs::path& task_root() {
    static temp_dir root("lambda-task");
    static const bool built = [] {
        temp_dir src;
        write_file(src.path() / "exec", fixture_text("cpp/lambda.cpp"));
        const command_result compiled = run_command(
            {compiler_script().string(), "main", src.path().string(), root.path().string()}, "",
            path_only_env(), src.path());
        REQUIRE_MESSAGE(compiled.exit_code == 0, (compiled.err + compiled.out));
        return true;
    }();
    (void)built;
    return root.path();
}

// A process of ours (lambda-api or the proxy) with its output in files.
class child {
public:
    child(std::vector<std::string> argv, env_map env) {
        spawn_spec spec;
        spec.argv = std::move(argv);
        spec.env = std::move(env);
        spec.cwd = dir_.path();
        spec.stdout_file = dir_.path() / "stdout";
        spec.stderr_file = dir_.path() / "stderr";
        pid_ = spawn_process(spec);
    }
    ~child() {
        if (!exited_) terminate_and_reap(pid_, seconds(5));
    }
    child(const child&) = delete;
    child& operator=(const child&) = delete;

    std::string out() const { return read_file(dir_.path() / "stdout"); }
    std::string err() const { return read_file(dir_.path() / "stderr"); }
    pid_t pid() const { return pid_; }
    /// The exit status once it ended within `timeout`; -1 otherwise (it is still running).
    int wait_exit(milliseconds timeout) {
        int status = 0;
        if (!wait_until([&] { return try_reap(pid_, status); }, timeout)) return -1;
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    /// SIGTERM and the exit status.
    int terminate() {
        exited_ = true;
        const int status = terminate_and_reap(pid_, seconds(10));
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

private:
    temp_dir dir_{"lambda-child"};
    pid_t pid_ = -1;
    bool exited_ = false;
};

class local_api {
public:
    explicit local_api(std::vector<std::string> flags = {})
        : port_(pick_free_port()), flags_(std::move(flags)) {
        start();
    }
    /// Stops it (SIGTERM) and starts it again on the same port.
    void restart() {
        process_.reset();
        start();
    }
    int port() const { return port_; }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    http_reply invoke(const std::string& event, const header_map& headers = {}) const {
        return http_post(port_, INVOKE, event, seconds(60), headers);
    }
    json stats() const { return json::parse(http_get(port_, "/_lambda-api/stats").body); }

private:
    void start() {
        std::vector<std::string> argv = {ACTIONLOOP_LAMBDA_API_BIN, "-port", std::to_string(port_)};
        argv.insert(argv.end(), flags_.begin(), flags_.end());
        process_ = std::make_unique<child>(argv, path_only_env());
        REQUIRE_MESSAGE(wait_until([&] { return port_accepts(port_); }, seconds(10)),
                        process_->err());
    }

    int port_;
    std::vector<std::string> flags_;
    std::unique_ptr<child> process_;
};

// The proxy in Lambda mode against `api`, the fixture as its task root.
std::unique_ptr<child> start_runtime(const local_api& api, env_map extra = {}) {
    env_map env = path_only_env();
    env["AWS_LAMBDA_RUNTIME_API"] = api.address();
    env["LAMBDA_TASK_ROOT"] = task_root().string();
    for (auto& [name, value] : extra) env[name] = value;
    return std::make_unique<child>(std::vector<std::string>{ACTIONLOOP_PROXY_BIN}, env);
}

// Invokes until the runtime is polling (the first invoke of a classic API waits for it).
json invoke_json(const local_api& api, const json& event) {
    const http_reply reply = api.invoke(event.dump());
    REQUIRE_MESSAGE(reply.status == 200, reply.body);
    return json::parse(reply.body);
}

}  // namespace

TEST_CASE("lambda: events of every JSON type reach main as they are, answers of any type return") {
    local_api api;
    auto runtime = start_runtime(api);
    for (const json& event : {json{{"name", "x"}}, json("text"), json(42), json(-1.5), json(true),
                              json(nullptr), json::array({1, json{{"a", 2}}})}) {
        INFO("event: " << event.dump());
        CHECK(invoke_json(api, event) == event);
    }
    const json stats = api.stats();
    CHECK(stats["responses"] == 7);
    CHECK(stats["errors"] == 0);
    // No OpenWhisk sentinels in this mode, on either stream.
    CHECK_FALSE(contains(runtime->out() + runtime->err(), SENTINEL));
}

TEST_CASE("lambda: the context comes from the headers of /next") {
    local_api api({"-function-name", "ctx-fn", "-timeout", "30"});
    auto runtime = start_runtime(api);
    const std::string client_context = R"({"client":{"app_title":"app"},"custom":{"k":"v"}})";
    const std::string identity = R"({"cognitoIdentityId":"id-1","cognitoIdentityPoolId":"pool"})";
    const std::string trace =
        "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    const http_reply reply = api.invoke(json{{"context", true}}.dump(),
                                        {{"X-Amz-Client-Context", base64_encode(client_context)},
                                         {"X-Amz-Cognito-Identity", identity},
                                         {"X-Amzn-Trace-Id", trace}});
    REQUIRE_MESSAGE(reply.status == 200, reply.body);
    const json ctx = json::parse(reply.body);
    CHECK(ctx["action_name"] == "arn:aws:lambda:us-east-1:012345678912:function:ctx-fn");
    CHECK(ctx["activation_id"].get<std::string>().size() == 36);  // a UUID
    CHECK(ctx["activation_id"] == reply.header("X-Amzn-RequestId"));
    CHECK(ctx["ms_left"].get<long>() > 25000);
    CHECK(ctx["ms_left"].get<long>() <= 30000);
    CHECK(ctx["client_context"] == client_context);
    CHECK(ctx["cognito_identity"] == identity);
    CHECK(ctx["lambda_trace_id"] == trace);
    CHECK(ctx["env_trace"] == trace);
    const std::string traceparent = ctx["traceparent"];
    CHECK(traceparent.rfind("00-5759e988bd862e3fe1be46a994272793-", 0) == 0);
    CHECK(traceparent.substr(traceparent.size() - 3) == "-01");
    // The next invocation without a trace header gets a fresh one from the API, never the
    // previous one's.
    const json next = invoke_json(api, json{{"context", true}});
    CHECK(next["env_trace"] != trace);
    CHECK(next["activation_id"] != ctx["activation_id"]);
}

TEST_CASE("lambda: Lambda-Runtime-Invocation-Id is echoed on every post") {
    local_api api({"-invocation-id"});
    auto runtime = start_runtime(api);
    CHECK(invoke_json(api, json{{"a", 1}}) == json{{"a", 1}});
    CHECK(api.invoke(json{{"throw", "x"}}.dump()).status == 200);
    const json stats = api.stats();
    CHECK(stats["echo_ok"] == 2);
    CHECK(stats["echo_missing"] == 0);
    CHECK(stats["echo_wrong"] == 0);
}

TEST_CASE("lambda: an exception is posted to /error in Lambda's shape, and the next is served") {
    local_api api;
    auto runtime = start_runtime(api);
    const http_reply thrown = api.invoke(json{{"throw", "no \"such\" row"}}.dump());
    CHECK(thrown.status == 200);
    CHECK(thrown.header("X-Amz-Function-Error") == "Unhandled");
    const json error = json::parse(thrown.body);
    CHECK(error["errorMessage"] == "no \"such\" row");
    CHECK(error["errorType"] == "std::runtime_error");
    CHECK(error["stackTrace"].is_array());
    const json at = json::parse(api.invoke(json{{"at", true}}.dump()).body);
    CHECK(at["errorType"].get<std::string>().find("out_of_range") != std::string::npos);
    const json on_string = json::parse(api.invoke(json("text").dump()).body);
    CHECK(on_string == "text");
    CHECK(invoke_json(api, json{{"after", 1}}) == json{{"after", 1}});
    CHECK(api.stats()["errors"] == 2);
}

TEST_CASE("lambda: a crash is Runtime.ExitError with the backtrace, then a fresh process serves") {
    local_api api;
    auto runtime = start_runtime(api);
    const long before = invoke_json(api, json{{"pid", true}})["pid"];
    const http_reply crashed = api.invoke(json{{"crash", true}}.dump());
    CHECK(crashed.header("X-Amz-Function-Error") == "Unhandled");
    const json error = json::parse(crashed.body);
    CHECK(error["errorType"] == "Runtime.ExitError");
    CHECK(contains(error["errorMessage"].get<std::string>(), "SIGSEGV"));
    CHECK(contains(error["stackTrace"].dump(), "main"));  // the launcher's backtrace
    const long after = invoke_json(api, json{{"pid", true}})["pid"];
    CHECK(after != before);
    CHECK(runtime->wait_exit(milliseconds(0)) == -1);  // the proxy goes on
}

TEST_CASE(
    "lambda: a missed deadline is Sandbox.Timedout, the process is replaced, polling goes on") {
    local_api api({"-timeout", "1"});
    auto runtime = start_runtime(api);
    const long before = invoke_json(api, json{{"pid", true}})["pid"];
    const http_reply late = api.invoke(json{{"sleep_ms", 5000}}.dump());
    CHECK(late.header("X-Amz-Function-Error") == "Unhandled");
    CHECK(json::parse(late.body)["errorType"] == "Sandbox.Timedout");
    const json next = invoke_json(api, json{{"pid", true}});
    CHECK(next["pid"] != before);
    // The proxy's own timeout post comes at (or just after) the deadline: taken, or 410.
    CHECK(wait_until([&] { return api.stats()["timeouts"] == 1; }, seconds(5)));
}

TEST_CASE("lambda: a 410 for an answer past the deadline is logged and the loop goes on") {
    // OW_DEADLINE_GRACE_MS lets the action answer 1.5 s into a 1 s timeout: the API has
    // answered the caller with its own timeout by then and refuses the late post with 410.
    local_api api({"-timeout", "1"});
    auto runtime = start_runtime(api, {{"OW_DEADLINE_GRACE_MS", "3000"}});
    const http_reply late = api.invoke(json{{"sleep_ms", 1500}}.dump());
    CHECK(json::parse(late.body)["errorType"] == "Sandbox.Timedout");
    CHECK(wait_until([&] { return contains(runtime->err(), "answered 410"); }, seconds(5)));
    CHECK(invoke_json(api, json{{"b", 2}}) == json{{"b", 2}});
    CHECK(api.stats()["late_posts"] == 1);
}

TEST_CASE("lambda: a failing on_init posts /runtime/init/error and the proxy exits 1") {
    local_api api;
    auto runtime = start_runtime(api, {{"LAMBDA_FIXTURE_INIT_FAIL", "1"}});
    CHECK(runtime->wait_exit(seconds(20)) == 1);
    const json stats = api.stats();
    CHECK(stats["init_errors"] == 1);
    const http_reply reply = api.invoke(json{{"a", 1}}.dump());
    CHECK(reply.header("X-Amz-Function-Error") == "Unhandled");
    const json error = json::parse(reply.body);
    CHECK(error["errorType"] == "Runtime.InitError");
    CHECK(contains(error["errorMessage"].get<std::string>(),
                   "on_init: cannot reach the database at db:5432"));
}

TEST_CASE("lambda: no exec in the task root is an init error, exit 1") {
    local_api api;
    temp_dir empty;
    env_map env = path_only_env();
    env["AWS_LAMBDA_RUNTIME_API"] = api.address();
    env["LAMBDA_TASK_ROOT"] = empty.path().string();
    child runtime({ACTIONLOOP_PROXY_BIN}, env);
    CHECK(runtime.wait_exit(seconds(10)) == 1);
    CHECK(api.stats()["init_errors"] == 1);
    CHECK(contains(runtime.err(), "is not a file"));
}

TEST_CASE(
    "lambda: AWS_LAMBDA_RUNTIME_API that is not host:port, a concurrency out of range: exit 2") {
    env_map env = path_only_env();
    env["LAMBDA_TASK_ROOT"] = task_root().string();
    env["AWS_LAMBDA_RUNTIME_API"] = "nohostport";
    child bad_api({ACTIONLOOP_PROXY_BIN}, env);
    CHECK(bad_api.wait_exit(seconds(10)) == 2);
    CHECK(contains(bad_api.err(), "AWS_LAMBDA_RUNTIME_API must be host:port, got 'nohostport'"));
    env["AWS_LAMBDA_RUNTIME_API"] = "127.0.0.1:9";
    env["AWS_LAMBDA_MAX_CONCURRENCY"] = "65";
    child too_many({ACTIONLOOP_PROXY_BIN}, env);
    CHECK(too_many.wait_exit(seconds(10)) == 2);
    CHECK(contains(too_many.err(), "AWS_LAMBDA_MAX_CONCURRENCY must be 1 to 64"));
}

TEST_CASE("lambda: an event that is not JSON never reaches the action") {
    // The emulator checks nothing of the event, so this goes through to the runtime.
    local_api api;
    auto runtime = start_runtime(api);
    const http_reply bad = api.invoke("{\"a\":");
    CHECK(json::parse(bad.body)["errorType"] == "Runtime.InvalidEvent");
    CHECK(invoke_json(api, json{{"ok", 1}}) == json{{"ok", 1}});
}

TEST_CASE("lambda: the Runtime API going away and coming back is survived") {
    local_api api;
    auto runtime = start_runtime(api);
    CHECK(invoke_json(api, json{{"before", 1}}) == json{{"before", 1}});
    api.restart();  // the parked /next fails; the poller tries again until it is back
    CHECK(invoke_json(api, json{{"after", 1}}) == json{{"after", 1}});
    CHECK(contains(runtime->err(), "GET /2018-06-01/runtime/invocation/next failed"));
    CHECK(runtime->wait_exit(milliseconds(0)) == -1);
}

TEST_CASE("lambda: AWS_LAMBDA_MAX_CONCURRENCY=4 parks 4 /next, never 5, and runs 4 at once") {
    local_api api({"-max-concurrency", "4", "-timeout", "30"});
    auto runtime = start_runtime(api, {{"AWS_LAMBDA_MAX_CONCURRENCY", "4"}});
    REQUIRE(wait_until([&] { return api.stats()["parked"] == 4; }, seconds(20)));
    const auto start = steady_clock::now();
    std::vector<std::future<http_reply>> calls;
    for (int i = 0; i < 4; ++i) {
        calls.push_back(std::async(std::launch::async, [&] {
            return api.invoke(json{{"sleep_ms", 1000}}.dump());
        }));
    }
    std::vector<long> pids;
    for (auto& call : calls) {
        const http_reply reply = call.get();
        REQUIRE_MESSAGE(reply.status == 200, reply.body);
        pids.push_back(json::parse(reply.body)["pid"]);
    }
    // Four 1 s invocations at once take about 1 s, not 4: four processes served them.
    CHECK(steady_clock::now() - start < milliseconds(3000));
    std::sort(pids.begin(), pids.end());
    CHECK(std::unique(pids.begin(), pids.end()) == pids.end());
    CHECK(wait_until([&] { return api.stats()["parked"] == 4; }, seconds(5)));
    const json stats = api.stats();
    CHECK(stats["parked_peak"] == 4);
    CHECK(stats["refused_next"] == 0);
    CHECK(stats["refused_invokes"] == 0);
}

TEST_CASE("lambda: SIGTERM finishes the invocation in flight, then the proxy exits 0") {
    local_api api({"-timeout", "30"});
    auto runtime = start_runtime(api);
    CHECK(invoke_json(api, json{{"warm", 1}}) == json{{"warm", 1}});
    auto call = std::async(std::launch::async, [&] {
        return api.invoke(json{{"sleep_ms", 800}}.dump());
    });
    REQUIRE(wait_until([&] { return api.stats()["in_flight"] == 1; }, seconds(5)));
    ::kill(runtime->pid(), SIGTERM);
    const http_reply reply = call.get();
    CHECK(json::parse(reply.body)["slept"] == 800);
    CHECK(runtime->wait_exit(seconds(10)) == 0);
}

TEST_CASE("lambda: the same exec serves single-entrypoint mode too") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}, {"__OW_RUNTIME_PLATFORM", "knative"}}));
    const std::string exec = read_file(task_root() / "exec");
    const json request = {{"init", {{"code", base64_encode(exec)}, {"binary", true}}},
                          {"activation", json::object()},
                          {"value", {{"name", "x"}}}};  // init and run in one request
    const http_reply reply = proxy.post("/", request.dump());
    CHECK(reply.status == 200);
    const json echoed = json::parse(reply.body);  // the value, with the web fields added
    CHECK(echoed["name"] == "x");
    CHECK(echoed["__ow_method"] == "POST");
}

TEST_CASE("lambda: the same exec passes the OpenWhisk protocol too") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}}));
    const std::string exec = read_file(task_root() / "exec");
    REQUIRE(proxy.init(base64_encode(exec)).status == 200);
    CHECK_REPLY(proxy.run(json{{"name", "x"}}), 200, "{\"name\":\"x\"}\n");
    const http_reply thrown = proxy.run(json{{"throw", "boom"}});
    CHECK(thrown.status == 200);
    CHECK(thrown.body == "{\"error\":\"boom\"}\n");
}
