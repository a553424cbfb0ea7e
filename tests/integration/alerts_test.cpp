// The alert actions end to end: the built zips (motion, state, monitor) initialized into the
// real proxy and fed batches; state that survives killing the action process between
// activations (ALERT_STATE_DIR); monitor's sources built by `compile` like any user action;
// and the launcher's raw entry point as a user writes it.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

namespace {

constexpr double T0 = 1764460800;

proxy_options alerts_runtime() {
    proxy_options options;
    options.env["OW_COMPILER"] = compiler_script().string();
    options.env["OW_WAIT_FOR_ACK"] = "1";
    return options;
}

std::string action_zip(const std::string& name) {
    return built_zip_code("actions/" + name + ".zip");
}

std::string config_file() { return fixture_path("alerts/config.json").string(); }

json status(const std::string& id, const std::string& device, const std::string& state, double ts,
            const std::string& account = "acct1") {
    return {{"id", id},         {"account", account}, {"device", device},
            {"type", "status"}, {"ts", ts},           {"state", state}};
}

json heartbeat(const std::string& id, const std::string& device, double ts) {
    return {{"id", id}, {"account", "acct1"}, {"device", device}, {"type", "heartbeat"},
            {"ts", ts}, {"state", "online"}};
}

json motion(const std::string& id, double ts, double magnitude = 0.8) {
    return {{"id", id}, {"account", "acct1"}, {"device", "cam1"},      {"type", "motion"},
            {"ts", ts}, {"region", "door"},   {"magnitude", magnitude}};
}

// One activation; the answer (the run must succeed).
json run_batch(const proxy_process& proxy, const json& etags, double now) {
    const http_reply reply = proxy.run(json{{"etags", etags}, {"now", now}});
    REQUIRE_MESSAGE(reply.status == 200, shorten(reply.body));
    const json answer = json_of(reply);
    REQUIRE_MESSAGE(answer.contains("stats"), shorten(reply.body));
    return answer;
}

json tick(const proxy_process& proxy, double now) { return run_batch(proxy, json::array(), now); }

std::vector<std::string> types_of(const json& answer) {
    std::vector<std::string> types;
    for (const json& n : answer.at("notifications")) types.push_back(n.at("notifType"));
    return types;
}

using strings = std::vector<std::string>;

void kill_action(proxy_process& proxy) {
    const std::vector<pid_t> actions = proxy.children();
    REQUIRE(actions.size() == 1);
    REQUIRE(::kill(actions[0], SIGKILL) == 0);
    REQUIRE(wait_until([&] { return !process_alive(actions[0]); }, std::chrono::seconds(10)));
}

}  // namespace

TEST_CASE("alerts: monitor.zip sends alerts and state notifications, with stats and log lines") {
    proxy_process proxy(alerts_runtime());
    const json env = {{"ALERT_CONFIG", config_file()}, {"EEN_AGENT_DATACENTER", "c001"}};
    CHECK_REPLY(proxy.init(action_zip("monitor"), "main", &env), 200, OK_BODY);

    const json first = run_batch(proxy,
                                 json::array({motion("m1", T0),
                                              status("s1", "cam1", "offline", T0 + 1),
                                              {{"id", "bad"},
                                               {"account", "acct1"},
                                               {"device", "cam1"},
                                               {"type", "status"},
                                               {"state", "offline"}},
                                              status("u1", "camX", "offline", T0, "nobody"),
                                              status("f1", "camZ", "offline", T0, "acct2"),
                                              heartbeat("h1", "cam9", T0 + 1)}),
                                 T0 + 2);
    REQUIRE(types_of(first) == strings{"Alert"});
    CHECK(first["notifications"][0] == json{{"notifType", "Alert"},
                                            {"account", "acct1"},
                                            {"device", "cam1"},
                                            {"name", "Front door"},
                                            {"region", "door"},
                                            {"level", "high"},
                                            {"recipients", {"guard@a1.example"}},
                                            {"eventTs", T0},
                                            {"publishTs", T0 + 2},
                                            {"alertDelay", 2.0},
                                            // docs/alerts.md, "Notification identity": the
                                            // same key in every build and store
                                            {"dedupKey", "Alert-1764460800000-"
                                                         "10d260e0134d447f647d5654c7cf60b3"}});
    CHECK(first["rejected"] ==
          json::parse(R"([{"index": 2, "error": "etag 2: missing field 'ts'"}])"));
    const json& stats = first["stats"];
    CHECK(stats["etags"] == 6);
    CHECK(stats["heartbeats"] == 1);
    CHECK(stats["unknown"] == 1);
    CHECK(stats["foreign"] == 1);
    CHECK(stats["rejected"] == 1);
    CHECK(stats["pending"] == 1);
    CHECK(stats["alertDelay"] == json{{"max", 2.0}, {"p50", 2.0}});

    const json offline = tick(proxy, T0 + 305);  // the hold ends at T0 + 301
    REQUIRE(types_of(offline) == strings{"Offline"});
    CHECK(offline["notifications"][0]["recipients"] == json{"cam1@a1.example"});
    CHECK(offline["notifications"][0]["eventTs"] == T0 + 1);
    CHECK(offline["notifications"][0]["alertDelay"] == 4.0);
    CHECK(offline["stats"]["pending"] == 0);

    CHECK(types_of(
              run_batch(proxy, json::array({status("s2", "cam1", "online", T0 + 400)}), T0 + 400))
              .empty());
    const json online = tick(proxy, T0 + 800);  // due at T0 + 495: later than the threshold
    REQUIRE(types_of(online) == strings{"Online"});
    CHECK(online["notifications"][0]["alertDelay"] == 305.0);
    CHECK(online["notifications"][0]["resolves"] == offline["notifications"][0]["dedupKey"]);
    CHECK(online["stats"]["late"] == 1);

    const stream_texts streams = proxy.check_streams(4);
    CHECK(contains(streams.out, "notifType=Alert alertDelay=2.000 account=acct1 device=cam1 "
                                "region=door level=high eventTs=1764460800.000 "
                                "publishTs=1764460802.000 recipients=guard@a1.example"));
    CHECK(contains(streams.out, "notifType=Offline alertDelay=4.000 account=acct1 device=cam1"));
    CHECK(contains(streams.out, "notifType=Online alertDelay=305.000 account=acct1"));
    CHECK(contains(streams.out, "level=warning systemAlert=alertDelayOverThreshold "
                                "notifType=Online alertDelay=305.000 threshold=300.000"));
    CHECK(count_occurrences(streams.out, "notifType=") == 4);
}

TEST_CASE(
    "alerts: with OW_LOG_FORMAT=json the notification lines are records whose fields are numbers") {
    proxy_options options = alerts_runtime();
    options.env["OW_LOG_FORMAT"] = "json";
    proxy_process proxy(options);
    const json env = {{"ALERT_CONFIG", config_file()}};
    CHECK_REPLY(proxy.init(action_zip("monitor"), "main", &env), 200, OK_BODY);
    const http_reply reply =
        proxy.run(json{{"etags", json::array({motion("m1", T0)})}, {"now", T0 + 2}},
                  json{{"activation_id", "batch-1"}});
    REQUIRE(reply.status == 200);
    CHECK(wait_until([&] { return contains(proxy.stdout_text(), "batch-1"); },
                     std::chrono::seconds(5)));
    json record;
    std::istringstream lines(proxy.stdout_text());
    for (std::string line; std::getline(lines, line);) {
        if (contains(line, "notifType")) record = json::parse(line);
    }
    REQUIRE(record.is_object());
    CHECK(record["activationId"] == "batch-1");
    CHECK(record["stream"] == "stdout");
    CHECK(record["message"]["notifType"] == "Alert");
    CHECK(record["message"]["alertDelay"] == 2.0);  // a number a log aggregator can query
    CHECK(record["message"]["eventTs"] == T0);
}

TEST_CASE("alerts: a value that is not JSON, or no config, is an error answer, the action lives") {
    proxy_process proxy(alerts_runtime());
    CHECK_REPLY(proxy.init(action_zip("monitor")), 200, OK_BODY);
    const std::vector<pid_t> before = proxy.children();
    const json no_config = json_of(proxy.run(json{{"etags", json::array()}}));
    CHECK(contains(no_config.value("error", ""), "ALERT_CONFIG"));
    const http_reply broken = proxy.run_raw(R"({"value": {"etags": [1,]}})");
    CHECK(broken.status == 200);
    CHECK(contains(json_of(broken).value("error", ""), "value: invalid JSON at offset"));
    const json config = json::parse(read_file(config_file()));
    const http_reply ok = proxy.run(
        json{{"etags", json::array({motion("m1", T0)})}, {"now", T0}, {"config", config}});
    CHECK(types_of(json_of(ok)) == strings{"Alert"});
    CHECK(proxy.children() == before);
}

TEST_CASE("alerts: motion.zip and state.zip each take their own ETags, config in the value") {
    const json config = json::parse(read_file(config_file()));
    const json batch = {
        {"etags", json::array({motion("m1", T0), status("s1", "cam1", "offline", T0)})},
        {"now", T0 + 301},
        {"config", config}};
    proxy_process motion_proxy(alerts_runtime());
    CHECK_REPLY(motion_proxy.init(action_zip("motion")), 200, OK_BODY);
    const json motion_answer = json_of(motion_proxy.run(batch));
    CHECK(types_of(motion_answer) == strings{"Alert"});
    CHECK(motion_answer["stats"]["ignored"] == 1);

    proxy_process state_proxy(alerts_runtime());
    CHECK_REPLY(state_proxy.init(action_zip("state")), 200, OK_BODY);
    const json state_answer = json_of(state_proxy.run(batch));
    CHECK(types_of(state_answer) == strings{"Offline"});
    CHECK(state_answer["stats"]["ignored"] == 1);
}

TEST_CASE("alerts: with ALERT_STATE_DIR, killing the action between activations loses nothing") {
    temp_dir state("alerts-state");
    proxy_process proxy(alerts_runtime());
    const json env = {{"ALERT_CONFIG", config_file()}, {"ALERT_STATE_DIR", state.path().string()}};
    CHECK_REPLY(proxy.init(action_zip("monitor"), "main", &env), 200, OK_BODY);
    const json batch = json::array({motion("m1", T0), status("s1", "cam1", "offline", T0)});

    const json first = run_batch(proxy, batch, T0);
    CHECK(types_of(first) == strings{"Alert"});
    CHECK(first["stats"]["pending"] == 1);

    kill_action(proxy);  // a re-delivered batch after a restart notifies once
    const json again = run_batch(proxy, batch, T0 + 1);
    CHECK(types_of(again).empty());
    CHECK(again["stats"]["duplicates"] == 2);
    CHECK(again["stats"]["pending"] == 1);  // the hold came back

    kill_action(proxy);  // the cooldown came back too
    const json cooled = run_batch(proxy, json::array({motion("m2", T0 + 30)}), T0 + 30);
    CHECK(types_of(cooled).empty());
    CHECK(cooled["stats"]["suppressed"] == 1);

    kill_action(proxy);  // the hold matures in the restarted process, exactly once
    CHECK(types_of(tick(proxy, T0 + 310)) == strings{"Offline"});
    CHECK(types_of(tick(proxy, T0 + 320)).empty());

    kill_action(proxy);  // the notified-offline mark: Online follows after a restart
    CHECK(types_of(
              run_batch(proxy, json::array({status("s2", "cam1", "online", T0 + 340)}), T0 + 340))
              .empty());
    kill_action(proxy);
    const json online = tick(proxy, T0 + 440);
    CHECK(types_of(online) == strings{"Online"});
    CHECK(online["notifications"][0]["alertDelay"] == 5.0);
    CHECK(types_of(tick(proxy, T0 + 500)).empty());
}

TEST_CASE("alerts: monitor's sources build through compile like any user action") {
    const fs::path dir = fs::path(ACTIONLOOP_SOURCE_DIR) / "actions" / "alerts";
    std::vector<archive_entry> entries;
    for (archive_entry& e : entries_from_dir(dir.string())) {
        if (e.name == "monitor.cpp" || e.name.rfind("core/", 0) == 0 ||
            e.name.rfind("runtime/", 0) == 0) {
            entries.push_back(std::move(e));
        }
    }
    proxy_options options = alerts_runtime();
    options.env["OW_COMPILE_TIMEOUT_MS"] = "1800000";  // a loaded CI machine: no timed failure
    proxy_process proxy(options);
    // Default flags (the precompiled header is only valid with them: -O0 would lose it), and
    // the time zones' library (core/time_interval.cpp), a link flag that keeps it.
    const json env = {{"ALERT_CONFIG", config_file()}, {"ACTIONLOOP_CXXFLAGS", "-ldate-tz"}};
    const json payload = init_payload(base64_encode(make_zip(entries)), "main", &env);
    CHECK_REPLY(proxy.post("/init", payload.dump(), std::chrono::seconds(1800)), 200, OK_BODY);
    const json answer =
        run_batch(proxy, json::array({motion("m1", T0), motion("m2", T0 + 1)}), T0 + 1);
    CHECK(types_of(answer) == strings{"Alert"});
    CHECK(answer["stats"]["suppressed"] == 1);
}

TEST_CASE("alerts: the raw entry point gets the value's text, the context and error answers") {
    proxy_process proxy(alerts_runtime());
    CHECK_REPLY(proxy.init(fixture_text("alerts/raw_echo.cpp")), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"a", {1, "two"}}}, json{{"activation_id", "abc"}}), 200,
                R"({"value":{"a":[1,"two"]},"activation_id":"abc"})"
                "\n");
    CHECK_REPLY(proxy.run_raw(R"({"activation_id": "\u0041b", "value": [true, null]})"), 200,
                R"({"value":[true, null],"activation_id":"Ab"})"
                "\n");
    // A scalar value is refused, as single-entrypoint mode refuses it (issue 41, item 8).
    CHECK_REPLY(
        proxy.run_raw(R"({"activation_id": "n", "value": 7})"), 200,
        R"({"error":"invalid request: the argument must be a dictionary but has type 'number'"})"
        "\n");
    CHECK_REPLY(proxy.run_raw(R"({"activation_id": "n", "value": null})"), 200,
                R"({"value":{},"activation_id":"n"})"
                "\n");
    const http_reply failed = proxy.run(json{{"fail", 1}});
    CHECK(failed.status == 200);
    CHECK(json_of(failed) == json{{"error", "raw boom"}});
    const http_reply lines = proxy.run(json{{"lines", 1}});
    CHECK(lines.status == 200);
    CHECK(json_of(lines) == json{{"lines", true}});
    const stream_texts streams = proxy.check_streams(6);
    CHECK(contains(streams.err, "raw boom"));
}

// Issue 33: hostile and unlucky input at the action's boundary (docs/alerts.md, "Batch",
// "Timestamps", "Config", "Environment").

namespace {

std::unique_ptr<proxy_process> monitor_with(const json& env) {
    auto proxy = std::make_unique<proxy_process>(alerts_runtime());
    CHECK_REPLY(proxy->init(action_zip("monitor"), "main", &env), 200, OK_BODY);
    return proxy;
}

// The /run body of `n` status ETags of `n` devices.
std::string many_statuses(std::size_t n, double ts) {
    std::string text = R"({"value":{"now":)" + std::to_string(ts) + R"(,"etags":[)";
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) text += ',';
        text += R"({"id":"s)" + std::to_string(i) + R"(","account":"acct1","device":"d)" +
                std::to_string(i) + R"(","type":"status","ts":)" + std::to_string(ts) +
                R"(,"state":"offline"})";
    }
    return text + "]}}";
}

}  // namespace

TEST_CASE("alerts: a batch over ALERT_MAX_BATCH_ETAGS is refused whole, before anything is "
          "stored") {
    temp_dir state("alerts-bound");
    const auto proxy =
        monitor_with({{"ALERT_CONFIG", config_file()}, {"ALERT_STATE_DIR", state.path().string()}});
    // 60,000 ETags against the default bound of 50,000: refused in the one pass over the body,
    // which stops at the 50,001st (batch_text_test: the text after it is not even read).
    const auto started = std::chrono::steady_clock::now();
    const http_reply reply = proxy->run_raw(many_statuses(60000, T0));
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK(reply.status == 200);
    CHECK(json_of(reply) ==
          json{{"error", "the batch has more than 50000 ETags (ALERT_MAX_BATCH_ETAGS): nothing "
                         "was applied; send them as batches of at most 50000 ETags, in order"}});
    CHECK(took < std::chrono::seconds(5));
    // Nothing was decided or stored: no device is known, no hold runs.
    const json after = tick(*proxy, T0 + 400);
    CHECK(after["notifications"].empty());
    CHECK(after["stats"]["devices"] == 0);
    CHECK(after["stats"]["pending"] == 0);
    // The same ETags split at the bound go through.
    const json first = json_of(proxy->run_raw(many_statuses(50000, T0 + 500)));
    CHECK(first["stats"]["etags"] == 50000);
    CHECK(first["stats"]["pending"] == 50000);
}

TEST_CASE("alerts: ALERT_MAX_BATCH_ETAGS sets the bound, and a bad value fails /init") {
    const auto proxy =
        monitor_with({{"ALERT_CONFIG", config_file()}, {"ALERT_MAX_BATCH_ETAGS", "2"}});
    const json etags =
        json::array({status("a", "cam1", "offline", T0), status("b", "cam2", "offline", T0),
                     status("c", "cam3", "offline", T0)});
    CHECK(json_of(proxy->run(json{{"etags", etags}, {"now", T0}})) ==
          json{{"error", "the batch has more than 2 ETags (ALERT_MAX_BATCH_ETAGS): nothing was "
                         "applied; send them as batches of at most 2 ETags, in order"}});
    CHECK(run_batch(*proxy, json::array({etags[0], etags[1]}), T0)["stats"]["pending"] == 2);

    proxy_process bad(alerts_runtime());
    const json env = {{"ALERT_CONFIG", config_file()}, {"ALERT_MAX_BATCH_ETAGS", "0"}};
    CHECK(bad.init(action_zip("monitor"), "main", &env).status == 502);
    CHECK(wait_until([&] { return contains(bad.stderr_text(), "ALERT_MAX_BATCH_ETAGS='0'"); },
                     std::chrono::seconds(5)));
}

TEST_CASE("alerts: an ETag whose ts is in milliseconds is rejected and counted, never applied") {
    const auto proxy = monitor_with({{"ALERT_CONFIG", config_file()}});
    const double now = T0 + 2;
    const json first =
        run_batch(*proxy,
                  json::array({status("ms", "cam1", "offline", T0 * 1000 + 125),
                               status("past", "cam2", "offline", 0), motion("m1", T0 + 1)}),
                  now);
    CHECK(types_of(first) == strings{"Alert"});
    CHECK(first["rejected"] ==
          json::array({{{"index", 0},
                        {"error", "etag 0: ts 1764460800125 is more than 300 s after now "
                                  "(1764460802): is it in milliseconds? "
                                  "(ALERT_MAX_FUTURE_SECONDS)"}},
                       {{"index", 1},
                        {"error", "etag 1: ts 0 is more than 604800 s before now "
                                  "(1764460802) (ALERT_MAX_PAST_SECONDS)"}}}));
    CHECK(first["stats"]["etags"] == 3);
    CHECK(first["stats"]["rejected"] == 2);
    CHECK(first["stats"]["future"] == 1);
    CHECK(first["stats"]["past"] == 1);
    CHECK(first["stats"]["pending"] == 0);
    // The camera's next ETag, in seconds, is applied: its hold runs and its Offline follows.
    const json next =
        run_batch(*proxy, json::array({status("s1", "cam1", "offline", T0 + 3)}), T0 + 3);
    CHECK(next["stats"]["stale"] == 0);
    CHECK(next["stats"]["pending"] == 1);
    CHECK(types_of(tick(*proxy, T0 + 310)) == strings{"Offline"});
}

TEST_CASE("alerts: with ALERT_CONFIG deployed, value.config is refused unless the deployment "
          "allows it") {
    json other = json::parse(read_file(config_file()));
    other["accounts"]["acct1"]["devices"]["cam1"]["regions"]["door"]["recipients"] = {
        "attacker@example.com"};
    const json batch = {{"etags", json::array({motion("m1", T0)})}, {"now", T0}, {"config", other}};
    const auto locked = monitor_with({{"ALERT_CONFIG", config_file()}});
    CHECK(json_of(locked->run(batch)) ==
          json{{"error", "config: value.config is refused: this action's config is deployed "
                         "(ALERT_CONFIG) and ALERT_ALLOW_VALUE_CONFIG is not 1"}});
    // Without value.config the deployed config decides.
    const json deployed = run_batch(*locked, json::array({motion("m1", T0)}), T0);
    REQUIRE(types_of(deployed) == strings{"Alert"});
    CHECK(deployed["notifications"][0]["recipients"] == json{"guard@a1.example"});

    const auto open =
        monitor_with({{"ALERT_CONFIG", config_file()}, {"ALERT_ALLOW_VALUE_CONFIG", "1"}});
    const json answer = json_of(open->run(batch));
    REQUIRE(answer.contains("notifications"));
    CHECK(answer["notifications"][0]["recipients"] == json{"attacker@example.com"});
}

TEST_CASE("alerts: a device id with CR/LF stays on its log line") {
    const auto proxy = monitor_with({{"ALERT_CONFIG", config_file()}});
    const std::string evil = "cam7\nnotifType=Alert account=acct1 device=forged\r\x1b[2J";
    run_batch(*proxy, json::array({status("s1", evil, "offline", T0)}), T0);
    const json offline = tick(*proxy, T0 + 301);
    REQUIRE(types_of(offline) == strings{"Offline"});
    CHECK(offline["notifications"][0]["device"] == evil);  // the answer is JSON: unchanged
    const stream_texts streams = proxy->check_streams(2);
    CHECK(count_occurrences(streams.out, "\n") == 0);  // one line
    CHECK(contains(streams.out,
                   R"(device="cam7\nnotifType=Alert account=acct1 device=forged\r\x1b[2J")"));
}

TEST_CASE("alerts: a password in ALERT_REDIS_URL is never echoed, /init's answer included") {
    proxy_process proxy(cpp_runtime({{"OW_LOG_INIT_ERROR", "1"}}));
    const json env = {{"ALERT_REDIS_URL", "redis://alice:s3cret-pw@127.0.0.1:1/0"}};
    const http_reply reply = proxy.init(action_zip("monitor"), "main", &env);
    CHECK(reply.status == 502);
    CHECK(contains(reply.body, "redis://alice:***@127.0.0.1:1/0"));
    CHECK_FALSE(contains(reply.body, "s3cret"));
    CHECK(wait_until([&] { return contains(proxy.stderr_text(), "alice:***@"); },
                     std::chrono::seconds(5)));
    CHECK_FALSE(contains(proxy.stderr_text(), "s3cret"));
}
