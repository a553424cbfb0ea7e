// service_test.cpp — one activation from `value` to answer through the runtime the actions
// share: the answer's shape, the key=value log lines, the late warning, config from
// value.config (parsed once) or ALERT_CONFIG, and a restart with ALERT_STATE_DIR; the input
// bounds and the config override read from the environment, and a device damaged by a future
// ts repaired.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "alert_test_util.hpp"
#include "redis/redis_store.hpp"
#include "redis_server.hpp"
#include "runtime/alert_service.hpp"
#include "runtime/file_store.hpp"
#include "runtime/sha256.hpp"

using namespace alerts;
using namespace alerts::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The damaged devices' next ETag: cam1 offline, 10 s after T0 (in seconds, as it should be).
json cam1_offline_after_damage() {
    return json::array({{{"id", "s1"},
                         {"account", "acct1"},
                         {"device", "cam1"},
                         {"type", "status"},
                         {"ts", T0 + 10},
                         {"state", "offline"}}});
}

json value_with(json etags, double now) {
    return json{{"etags", std::move(etags)}, {"now", now}, {"config", sample_config()}};
}

std::size_t lines_in(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

fs::path scratch(const char* name) {
    return fs::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()));
}

}  // namespace

TEST_CASE("an activation answers notifications, rejections and stats, and logs each one") {
    alert_service svc(action_kind::monitor, {});
    std::ostringstream log;
    const json etags = json::parse(R"([
      {"id": "e-1", "account": "acct1", "device": "cam1", "type": "motion", "ts": 1764460800.125,
       "region": "door", "magnitude": 0.8},
      {"id": "e-2", "account": "acct1", "device": "cam1", "type": "status", "ts": 1764460801.0,
       "state": "offline"},
      {"account": "acct1", "device": "cam1", "type": "heartbeat", "state": "offline"}])");
    const json out = run_activation(svc, value_with(etags, 1764460800.129), 0, log);
    REQUIRE(out["notifications"].size() == 1);
    const json& n = out["notifications"][0];
    CHECK(n["notifType"] == "Alert");
    CHECK(n["account"] == "acct1");
    CHECK(n["device"] == "cam1");
    CHECK(n["name"] == "Front door");
    CHECK(n["region"] == "door");
    CHECK(n["level"] == "high");
    CHECK(n["recipients"] == json{"guard@a1"});
    CHECK(n["eventTs"] == 1764460800.125);
    CHECK(n["publishTs"] == 1764460800.129);
    CHECK(n["alertDelay"].get<double>() == doctest::Approx(0.004));
    CHECK(out["rejected"] ==
          json::parse(R"([{"index": 2, "error": "etag 2: missing field 'ts'"}])"));
    const json& st = out["stats"];
    CHECK(st["etags"] == 3);
    CHECK(st["rejected"] == 1);
    CHECK(st["pending"] == 1);
    CHECK(st["devices"] == 1);
    CHECK(st["alertDelay"]["max"].get<double>() == doctest::Approx(0.004));
    CHECK(log.str() ==
          "notifType=Alert alertDelay=0.004 account=acct1 device=cam1 region=door level=high "
          "eventTs=1764460800.125 publishTs=1764460800.129 recipients=guard@a1\n");
}

TEST_CASE("a notification over the threshold also logs a system-alert line") {
    alert_service svc(action_kind::state, {});
    std::ostringstream log;
    run_activation(
        svc,
        value_with(json::parse(R"([{"account": "acct1", "device": "cam1", "type": "status",
                                        "ts": 1000, "state": "offline"}])"),
                   1000),
        0, log);
    const json out = run_activation(svc, value_with(json::array(), 1000 + 300 + 400.5), 0, log);
    CHECK(out["notifications"][0]["notifType"] == "Offline");
    CHECK(out["stats"]["late"] == 1);
    CHECK(log.str().find("level=warning systemAlert=alertDelayOverThreshold notifType=Offline "
                         "alertDelay=400.500 threshold=300.000 account=acct1 device=cam1\n") !=
          std::string::npos);
}

TEST_CASE("with OW_LOG_FORMAT=json the notification lines are JSON objects, numbers as numbers") {
    service_env env;
    env.json_logs = true;
    alert_service svc(action_kind::state, env);
    std::ostringstream log;
    run_activation(
        svc,
        value_with(json::parse(R"([{"account": "acct1", "device": "cam1", "type": "status",
                                        "ts": 1000, "state": "offline"}])"),
                   1000),
        0, log);
    run_activation(svc, value_with(json::array(), 1000 + 300 + 400.5), 0, log);
    std::istringstream lines(log.str());
    std::string line;
    REQUIRE(std::getline(lines, line));
    const json note = json::parse(line);
    CHECK(note["notifType"] == "Offline");
    CHECK(note["alertDelay"] == 400.5);  // a number, for a log aggregator's queries
    CHECK(note["account"] == "acct1");
    CHECK(note["eventTs"] == 1000.0);
    REQUIRE(std::getline(lines, line));
    CHECK(json::parse(line) == json{{"level", "warning"},
                                    {"systemAlert", "alertDelayOverThreshold"},
                                    {"notifType", "Offline"},
                                    {"alertDelay", 400.5},
                                    {"threshold", 300.0},
                                    {"account", "acct1"},
                                    {"device", "cam1"}});
    CHECK_FALSE(std::getline(lines, line));
}

TEST_CASE("without now the wall clock given to run_text() is the evaluation time") {
    alert_service svc(action_kind::motion, {});
    std::ostringstream log;
    json v = value_with(json::parse(R"([{"account": "acct1", "device": "cam1", "type": "motion",
                                         "ts": 5000, "region": "yard", "magnitude": 1}])"),
                        0);
    v.erase("now");
    const json out = run_activation(svc, v, 5002.5, log);
    CHECK(out["notifications"][0]["alertDelay"].get<double>() == doctest::Approx(2.5));
}

TEST_CASE("an unchanged bound config is parsed once, a changed one is installed") {
    alert_service svc(action_kind::monitor, {});
    std::ostringstream log;
    run_activation(svc, value_with(json::array(), 1), 0, log);
    const alert_config* first = svc.core().config();
    run_activation(svc, value_with(json::array(), 2), 0, log);
    CHECK(svc.core().config() == first);
    json v = value_with(json::array(), 3);
    v["config"]["alert_delay_threshold"] = 5;
    run_activation(svc, v, 0, log);
    CHECK(svc.core().config() != first);
    CHECK(svc.core().config()->alert_delay_threshold == 5);
}

TEST_CASE("the config can come from the file named by ALERT_CONFIG") {
    const fs::path file = scratch("alerts-config.json");
    std::ofstream(file) << sample_config().dump();
    service_env env;
    env.config_file = file.string();
    alert_service svc(action_kind::monitor, env);
    std::ostringstream log;
    const json out = run_activation(svc, json{{"etags", json::array()}, {"now", 1}}, 0, log);
    CHECK(out["stats"]["etags"] == 0);
    fs::remove(file);
    alert_service unconfigured(action_kind::monitor, {});
    CHECK_THROWS_WITH(run_activation(unconfigured, json::object(), 0, log),
                      "config: pass value.config or set ALERT_CONFIG in the action's env");
}

TEST_CASE("with ALERT_STATE_DIR a restarted service loses no pending hold") {
    const fs::path dir = scratch("alerts-state");
    fs::remove_all(dir);
    service_env env;
    env.state_dir = dir.string();
    std::ostringstream log;
    {
        alert_service svc(action_kind::state, env);
        run_activation(svc,
                       value_with(json::parse(R"([{"id": "s1", "account": "acct1", "device": "cam1",
                                            "type": "status", "ts": 1000, "state": "offline"}])"),
                                  1000),
                       0, log);
    }
    alert_service svc(action_kind::state, env);
    const json again = run_activation(svc,
                                      value_with(json::parse(R"([{"id": "s1", "account": "acct1",
        "device": "cam1", "type": "status", "ts": 1000, "state": "offline"}])"),
                                                 1001),
                                      0, log);
    CHECK(again["stats"]["duplicates"] == 1);
    CHECK(again["stats"]["pending"] == 1);
    const json out = run_activation(svc, value_with(json::array(), 1300), 0, log);
    REQUIRE(out["notifications"].size() == 1);
    CHECK(out["notifications"][0]["notifType"] == "Offline");
    fs::remove_all(dir);
}

namespace {

// Sets (or, for nullptr, unsets) environment variables for one scope, then restores them.
class scoped_env {
public:
    scoped_env(std::initializer_list<std::pair<const char*, const char*>> vars) {
        for (const auto& [name, value] : vars) {
            const char* old = std::getenv(name);
            saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
            set(name, value);
        }
    }
    ~scoped_env() {
        for (const auto& [name, value] : saved_)
            set(name.c_str(), value ? value->c_str() : nullptr);
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

private:
    static void set(const char* name, const char* value) {
        if (value) {
            ::setenv(name, value, 1);
        } else {
            ::unsetenv(name);
        }
    }
    std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

std::string environment_error() {
    try {
        read_environment();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the input bounds and who may pass a config come from the environment") {
    const scoped_env clean({{"ALERT_CONFIG", nullptr},
                            {"ALERT_ALLOW_VALUE_CONFIG", nullptr},
                            {"ALERT_MAX_BATCH_ETAGS", nullptr},
                            {"ALERT_MAX_FUTURE_SECONDS", nullptr},
                            {"ALERT_MAX_PAST_SECONDS", nullptr}});
    const service_env defaults = read_environment();
    CHECK(defaults.max_batch_etags == 50000);
    CHECK(defaults.ts.max_future == 300);
    CHECK(defaults.ts.max_past == 604800);
    CHECK(defaults.allow_value_config);  // no deployed config: value.config is the way
    {
        const scoped_env deployed({{"ALERT_CONFIG", "/etc/alerts.json"}});
        CHECK_FALSE(read_environment().allow_value_config);
        const scoped_env allowed({{"ALERT_ALLOW_VALUE_CONFIG", "1"}});
        CHECK(read_environment().allow_value_config);
    }
    {
        const scoped_env nothing({{"ALERT_ALLOW_VALUE_CONFIG", "0"}});
        CHECK(environment_error() ==
              "ALERT_ALLOW_VALUE_CONFIG=0 without ALERT_CONFIG leaves the action no config: "
              "deploy one with ALERT_CONFIG");
    }
    {
        const scoped_env set({{"ALERT_MAX_BATCH_ETAGS", "2000"},
                              {"ALERT_MAX_FUTURE_SECONDS", "0"},
                              {"ALERT_MAX_PAST_SECONDS", "86400"}});
        const service_env env = read_environment();
        CHECK(env.max_batch_etags == 2000);
        CHECK(env.ts.max_future == 0);
        CHECK(env.ts.max_past == 86400);
    }
    const scoped_env over({{"ALERT_MAX_BATCH_ETAGS", "100001"}});
    CHECK(environment_error() ==
          "ALERT_MAX_BATCH_ETAGS='100001' must be a whole number from 1 to 100000");
}

TEST_CASE("with a deployed config and no permission, value.config is refused before any work") {
    const fs::path file = scratch("alerts-deployed.json");
    std::ofstream(file) << sample_config().dump();
    service_env env;
    env.config_file = file.string();
    env.allow_value_config = false;
    alert_service svc(action_kind::monitor, env);
    std::ostringstream log;
    const json etags = json::parse(R"([{"account": "acct1", "device": "cam1", "type": "motion",
                                        "ts": 5000, "region": "door", "magnitude": 1}])");
    CHECK_THROWS_WITH(run_activation(svc, value_with(etags, 5000), 0, log),
                      "config: value.config is refused: this action's config is deployed "
                      "(ALERT_CONFIG) and ALERT_ALLOW_VALUE_CONFIG is not 1");
    CHECK(svc.core().device_count() == 0);
    const json out = run_activation(svc, json{{"etags", etags}, {"now", 5000}}, 0, log);
    CHECK(out["notifications"].size() == 1);
    fs::remove(file);
}

TEST_CASE("a device damaged by a ts in milliseconds before the bound recovers (state dir)") {
    const fs::path dir = scratch("alerts-damaged");
    fs::remove_all(dir);
    {  // the damage, as the code before the bound stored it
        core_harness h;
        file_store store({dir.string()});
        store.load(h.core);
        h.run({status("cam1", T0 * 1000, device_state::offline, "s0")}, T0);
        store.commit(h.core);
    }
    service_env env;
    env.state_dir = dir.string();
    std::ostringstream log;
    const json next = cam1_offline_after_damage();
    {
        alert_service svc(action_kind::state, env);
        const json out = run_activation(svc, value_with(next, T0 + 10), 0, log);
        CHECK(out["stats"]["stale"] == 0);
        CHECK(out["stats"]["pending"] == 1);
    }
    // The repaired record was stored: a restarted service sends the Offline on time.
    alert_service svc(action_kind::state, env);
    const json out = run_activation(svc, value_with(json::array(), T0 + 310), 0, log);
    REQUIRE(out["notifications"].size() == 1);
    CHECK(out["notifications"][0]["notifType"] == "Offline");
    CHECK(out["notifications"][0]["eventTs"] == T0 + 10);
    fs::remove_all(dir);
}

namespace {

// What register_redis_store.cpp registers in the actions (this binary does not link it).
std::unique_ptr<state_store> make_test_redis_store(const service_env& env) {
    redis_store_options o;
    o.url = parse_redis_url(env.redis_url);
    o.prefix = env.redis_prefix;
    return std::make_unique<redis_store>(std::move(o));
}

}  // namespace

TEST_CASE("a device damaged by a ts in milliseconds before the bound recovers (Redis, shared)") {
    redis_server server;
    {  // the damage, as the code before the bound stored it for every container
        core_harness h;
        redis_store_options o;
        o.url = parse_redis_url(server.url());
        redis_store store(std::move(o));
        store.process(h.core, {status("cam1", T0 * 1000, device_state::offline, "s0")}, T0);
    }
    register_redis_store(&make_test_redis_store);
    service_env env;
    env.redis_url = server.url();
    env.redis_prefix = "alerts:";
    std::ostringstream log;
    const json next = cam1_offline_after_damage();
    alert_service first(action_kind::state, env);
    const json out = run_activation(first, value_with(next, T0 + 10), 0, log);
    CHECK(out["stats"]["stale"] == 0);
    CHECK(out["stats"]["pending"] == 1);
    // Another container's tick finds the repaired due time in Redis.
    alert_service second(action_kind::state, env);
    const json offline = run_activation(second, value_with(json::array(), T0 + 310), 0, log);
    REQUIRE(offline["notifications"].size() == 1);
    CHECK(offline["notifications"][0]["eventTs"] == T0 + 10);
}

TEST_CASE("a value.config is named on the diagnostics stream when it is installed, not after") {
    std::ostringstream diagnostics, log;
    alert_service svc(action_kind::monitor, {}, nullptr, &diagnostics);
    json v = value_with(json::array(), 1);
    run_activation(svc, v, 0, log);
    const std::string text = v["config"].dump();
    const std::string sha =
        diagnostics.str().substr(std::string("alerts: config sha256=").size(), 64);
    CHECK(diagnostics.str() == "alerts: config sha256=" + sha + " bytes=" +
                                   std::to_string(text.size()) + " read=value.config\n");
    CHECK(sha == sha256_hex(text));
    run_activation(svc, value_with(json::array(), 2), 0, log);  // the same bound config
    CHECK(lines_in(diagnostics.str()) == 1);
    v["config"]["alert_delay_threshold"] = 5;
    run_activation(svc, v, 0, log);
    CHECK(lines_in(diagnostics.str()) == 2);
    CHECK(log.str().empty());  // the notification lines' stream stays theirs
}
