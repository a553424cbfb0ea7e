// Lambda's logs through the real proxy in Lambda mode, against the local Runtime API
// (lambda-api): AWS_LAMBDA_LOG_FORMAT, AWS_LAMBDA_LOG_LEVEL (README's settings table,
// docs/protocol.md "Logs in Lambda mode"): Lambda's JSON records with each invocation's
// requestId and level, the level filter on the action's records and the proxy's own, plain
// lines with Text, and never a sentinel. Each record's requestId needs the proxy to mark
// every invocation's end in Lambda mode (host/action_host.cpp end_activation calls
// write_sentinels(), which writes no text there: logging.hpp).
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "http_client.hpp"
#include "lambda_api_process.hpp"
#include "process_tools.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::seconds;

namespace {

// Per invocation: an INFO line and a DEBUG object on stdout, an ERROR line, a WARN object and
// an open line on stderr, the sentinels an OpenWhisk action writes itself (they must not
// show), then the answer; "segv" crashes first; "last" prints an ERROR object on each stream
// (the lines before it have been forwarded once it shows: one pipe keeps the order). It acks
// at start, as Lambda mode asks of an action.
const char* const SCRIPT = "#!/bin/bash\n"
                           "echo '{\"ok\":true}' >&3\n"
                           "while read line; do\n"
                           "  case \"$line\" in\n"
                           "    *segv*) kill -SEGV $$;;\n"
                           "    *last*) echo '{\"level\":\"error\",\"msg\":\"last\"}'\n"
                           "            echo '{\"level\":\"error\",\"msg\":\"last\"}' >&2\n"
                           "            echo '{}' >&3; continue;;\n"
                           "  esac\n"
                           "  echo 'out line'\n"
                           "  echo '{\"level\":\"debug\",\"msg\":\"d\"}'\n"
                           "  echo 'err line' >&2\n"
                           "  echo '{\"msg\":\"w\",\"level\":\"warning\"}' >&2\n"
                           "  echo 'XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX'\n"
                           "  echo 'XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX' >&2\n"
                           "  printf 'open' >&2\n"
                           "  echo '{}' >&3\n"
                           "done\n";

// The proxy in Lambda mode against a local Runtime API (lambda-api), serving `script` as its
// task root's exec; its output in files.
class lambda_runtime {
public:
    lambda_runtime(const std::string& script, const env_map& extra) {
        fs::create_directories(dir_.path() / "task");
        write_file(dir_.path() / "task" / "exec", script, fs::perms(0755));
        spawn_spec spec;
        spec.argv = {ACTIONLOOP_PROXY_BIN};
        spec.env = path_only_env();
        spec.env["AWS_LAMBDA_RUNTIME_API"] = api_.address();
        spec.env["LAMBDA_TASK_ROOT"] = (dir_.path() / "task").string();
        for (const auto& [name, value] : extra) spec.env[name] = value;
        spec.cwd = dir_.path();
        spec.stdout_file = dir_.path() / "proxy.stdout";
        spec.stderr_file = dir_.path() / "proxy.stderr";
        proxy_ = spawn_process(spec);
    }
    ~lambda_runtime() { terminate_and_reap(proxy_, seconds(5)); }
    lambda_runtime(const lambda_runtime&) = delete;
    lambda_runtime& operator=(const lambda_runtime&) = delete;

    // One invocation (the first waits for the runtime's first /next); its request id is
    // named r1, r2, … in out() and err().
    void invoke(const json& event) {
        const http_reply reply = api_.invoke(event.dump());
        CHECK_MESSAGE(reply.status == 200, reply.body);
        const std::string id = reply.header("X-Amzn-RequestId");
        REQUIRE(!id.empty());
        names_[id] = "r" + std::to_string(names_.size() + 1);
    }
    // The proxy's stdout and stderr, each request id written as its name.
    std::string out() const { return named(read_file(dir_.path() / "proxy.stdout")); }
    std::string err() const { return named(read_file(dir_.path() / "proxy.stderr")); }

private:
    std::string named(std::string text) const {
        for (const auto& [id, name] : names_) text = replace_all(text, id, name);
        return text;
    }

    lambda_api_process api_;
    temp_dir dir_{"lambda-logs"};
    pid_t proxy_ = -1;
    std::map<std::string, std::string> names_;
};

// Two invocations that log, one that crashes, then the last one.
void invoke_all(lambda_runtime& runtime) {
    runtime.invoke(json::object());
    runtime.invoke(json::object());
    runtime.invoke(json{{"segv", true}});
    runtime.invoke(json{{"last", true}});
}

// The records of one stream; every line must be one.
std::vector<json> records_of(const std::string& text) {
    std::vector<json> records;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        start = end + 1;
        json record = json::parse(line, nullptr, false);
        CHECK_MESSAGE(record.is_object(), "not a JSON record: " << line);
        if (record.is_object()) records.push_back(std::move(record));
    }
    return records;
}

// Waits until both streams end with the last invocation's record, then returns them.
std::pair<std::vector<json>, std::vector<json>> all_records(const lambda_runtime& runtime) {
    const auto ended = [](const std::string& text) {
        return contains(text, R"("message":{"level":"error","msg":"last"}})");
    };
    CHECK(wait_until([&] { return ended(runtime.out()) && ended(runtime.err()); }, seconds(5)));
    const std::string out = runtime.out();
    const std::string err = runtime.err();
    CHECK_FALSE(contains(out, "XXX_THE_END"));
    CHECK_FALSE(contains(err, "XXX_THE_END"));
    return {records_of(out), records_of(err)};
}

// "LEVEL requestId message" of each record (requestId "-" when none; the message as JSON text
// when an object; a restart's peak RSS left out), after checking its members are Lambda's:
// timestamp (ISO 8601, milliseconds, Z), level, requestId (about an invocation), message.
std::string summary(const std::vector<json>& records) {
    static const std::regex TIMESTAMP(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
    static const std::regex PEAK_RSS(R"( \(its peak RSS: [^)]*\))");
    std::string lines;
    for (const json& r : records) {
        CAPTURE(r.dump());
        std::set<std::string> keys;
        for (const auto& [key, value] : r.items()) keys.insert(key);
        keys.insert("requestId");
        CHECK(keys == std::set<std::string>{"timestamp", "level", "requestId", "message"});
        CHECK(std::regex_match(r.value("timestamp", ""), TIMESTAMP));
        const json& message = r["message"];
        const std::string text = message.is_string() ? message.get<std::string>() : message.dump();
        lines += r.value("level", "?") + " " + r.value("requestId", "-") + " " +
                 std::regex_replace(text, PEAK_RSS, "") + "\n";
    }
    return lines;
}

// The lines of a summary.
std::string lines(std::initializer_list<std::string> each) {
    std::string text;
    for (const std::string& line : each) text += line + "\n";
    return text;
}

}  // namespace

TEST_CASE("lambda logs: AWS_LAMBDA_LOG_FORMAT=JSON: Lambda's records, each invocation's "
          "requestId, each line's level, no sentinel") {
    lambda_runtime runtime(SCRIPT, {{"AWS_LAMBDA_LOG_FORMAT", "JSON"}});
    invoke_all(runtime);
    const auto [out, err] = all_records(runtime);
    const std::string debug = R"(DEBUG r1 {"level":"debug","msg":"d"})";
    const std::string warn = R"({"level":"warning","msg":"w"})";
    CHECK(summary(out) == lines({"INFO r1 out line", debug, "INFO r2 out line",
                                 R"(DEBUG r2 {"level":"debug","msg":"d"})",
                                 R"(ERROR r4 {"level":"error","msg":"last"})"}));
    const std::string expected_err = lines(
        {"ERROR r1 err line", "WARN r1 " + warn, "ERROR r1 open",  // ended by r1's end mark
         "ERROR r2 err line", "WARN r2 " + warn, "ERROR r2 open",
         // The proxy's own records at their level: about r3, then about no invocation.
         "WARN r3 the action exited during the activation (killed by signal 11 (SIGSEGV))",
         "WARN - the action process is gone (killed by signal 11 (SIGSEGV)); starting it again",
         R"(ERROR r4 {"level":"error","msg":"last"})"});
    CHECK(summary(err) == expected_err);
}

TEST_CASE("lambda logs: AWS_LAMBDA_LOG_LEVEL drops the records below it, the action's and the "
          "proxy's own") {
    lambda_runtime runtime(SCRIPT,
                           {{"AWS_LAMBDA_LOG_FORMAT", "json"}, {"AWS_LAMBDA_LOG_LEVEL", "error"}});
    invoke_all(runtime);
    const auto [out, err] = all_records(runtime);
    CHECK(summary(out) == lines({R"(ERROR r4 {"level":"error","msg":"last"})"}));
    // No WARN object, and no WARN record of the proxy's about r3's crash.
    CHECK(summary(err) == lines({"ERROR r1 err line", "ERROR r1 open", "ERROR r2 err line",
                                 "ERROR r2 open", R"(ERROR r4 {"level":"error","msg":"last"})"}));
}

TEST_CASE("lambda logs: an AWS_LAMBDA_LOG_LEVEL that names no level filters nothing, and the "
          "proxy says so") {
    lambda_runtime runtime(
        SCRIPT, {{"AWS_LAMBDA_LOG_FORMAT", "JSON"}, {"AWS_LAMBDA_LOG_LEVEL", "verbose"}});
    invoke_all(runtime);
    const auto [out, err] = all_records(runtime);
    CHECK(out.size() == 5);  // DEBUG records too
    REQUIRE(!err.empty());
    CHECK(summary({err[0]}) ==
          lines({"WARN - AWS_LAMBDA_LOG_LEVEL 'verbose' names no level (TRACE, DEBUG, INFO, WARN, "
                 "ERROR or FATAL): every record is written"}));
}

TEST_CASE("lambda logs: AWS_LAMBDA_LOG_FORMAT=Text (the default) keeps the lines as they are, "
          "with no sentinels of the proxy's") {
    // A level filters nothing in Text (Lambda's log-level filtering needs the JSON format).
    lambda_runtime runtime("#!/bin/bash\necho '{\"ok\":true}' >&3\nwhile read line; do\n"
                           "  case \"$line\" in *segv*) kill -SEGV $$;; esac\n"
                           "  echo 'out line'\n"
                           "  printf 'open' >&2\n"
                           "  echo '{}' >&3\n"
                           "done\n",
                           {{"AWS_LAMBDA_LOG_FORMAT", "Text"}, {"AWS_LAMBDA_LOG_LEVEL", "FATAL"}});
    runtime.invoke(json::object());
    runtime.invoke(json{{"segv", true}});
    runtime.invoke(json::object());
    CHECK(wait_until(
        [&] {
            return runtime.out() == "out line\nout line\n" &&
                   count_occurrences(runtime.err(), "open\n") == 2;
        },
        seconds(5)));
    const std::string err = runtime.err();
    CHECK(err.rfind("open\n", 0) == 0);  // r1's open line ended by its end mark
    CHECK(contains(err, "[warning] the action exited during the activation (killed by signal 11"));
    CHECK_FALSE(contains(err, "XXX_THE_END"));
    CHECK_FALSE(contains(err, "timestamp"));
}

TEST_CASE("lambda logs: outside Lambda mode AWS_LAMBDA_LOG_FORMAT changes nothing") {
    proxy_process proxy(with_env({{"AWS_LAMBDA_LOG_FORMAT", "JSON"}}));
    const std::string script =
        "#!/bin/bash\nwhile read line; do echo 'out line'; echo '{}' >&3; done\n";
    REQUIRE(proxy.init(script).status == 200);
    CHECK(proxy.run(json::object(), json{{"activation_id", "a1"}}).status == 200);
    const stream_texts logs = proxy.check_streams(1);  // OpenWhisk's sentinels, plain lines
    CHECK(logs.out == "out line");
    CHECK(logs.err.empty());
}
