// The alert actions across containers: several real proxies, each with its own monitor.zip
// process, sharing one real redis-server (ALERT_REDIS_URL) started by the test on a unix
// socket. Whatever proxy gets each batch — alternating, at random, two at once, one killed
// mid-stream, Redis itself stopped and restarted — the notifications are exactly those of one
// memory-only process fed the same batches in the same order (docs/alerts.md, "Persistence").
// Also: a bad ALERT_CONFIG, config key or ALERT_REDIS_URL fails /init.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "alerts_redis_support.hpp"

using namespace alerts_redis;

namespace {

json status(const std::string& id, const std::string& device, const std::string& state, double ts) {
    return {{"id", id},         {"account", "acct1"}, {"device", device},
            {"type", "status"}, {"ts", ts},           {"state", state}};
}

json motion(const std::string& id, double ts) {
    return {{"id", id}, {"account", "acct1"}, {"device", "cam1"}, {"type", "motion"},
            {"ts", ts}, {"region", "door"},   {"magnitude", 0.8}};
}

// What the stream cases share: the generated stream, a redis-server (append-only when `aof`)
// and two proxies with `monitor` sharing it.
struct two_monitors {
    explicit two_monitors(bool aof = false)
        : s(generated()),
          server(aof, tracked_spawn(), tracked_kill),
          env(redis_env(server, s.config)),
          a(start_monitor(env)),
          b(start_monitor(env)) {}
    const stream& s;
    redis_server server;
    json env;
    std::unique_ptr<proxy_process> a, b;
};

// The same on an append-only redis-server (fsync always): it can be stopped and started again.
struct two_monitors_aof : two_monitors {
    two_monitors_aof() : two_monitors(true) {}
};

}  // namespace

TEST_CASE("alerts/redis: the generated stream holds every kind of notification") {
    const stream& s = generated();
    INFO("reference: " << s.reference.size() << " notifications");
    CHECK(s.types.at("Alert") > 100);
    CHECK(s.types.at("Offline") > 10);
    CHECK(s.types.at("Online") > 10);
}

TEST_CASE("alerts/redis: holds, cooldowns and ids carry over between two proxies in turn") {
    redis_server server(false, tracked_spawn(), tracked_kill);
    const json env = {{"ALERT_CONFIG", fixture_path("alerts/config.json").string()},
                      {"ALERT_REDIS_URL", server.url()},
                      {"ALERT_REDIS_PREFIX", "demo:"}};
    auto a = start_monitor(env);
    auto b = start_monitor(env);
    const json first = run_text(
        *a, batch(json::array({motion("m1", T0), status("s1", "cam1", "offline", T0 + 1)}), T0 + 2)
                .dump());
    CHECK(types_of(first) == strings{"Alert"});
    CHECK(first["stats"]["pending"] == 1);
    // The same batch re-delivered to the other proxy: duplicates, nothing sent twice.
    const json again = run_text(
        *b, batch(json::array({motion("m1", T0), status("s1", "cam1", "offline", T0 + 1)}), T0 + 3)
                .dump());
    CHECK(types_of(again).empty());
    CHECK(again["stats"]["duplicates"] == 2);
    // The cooldown started on A holds on B.
    const json cooled = run_text(*b, batch(json::array({motion("m2", T0 + 30)}), T0 + 30).dump());
    CHECK(types_of(cooled).empty());
    CHECK(cooled["stats"]["suppressed"] == 1);
    CHECK(types_of(run_text(*a, batch(json::array(), T0 + 300).dump())).empty());
    const json offline = run_text(*b, batch(json::array(), T0 + 305).dump());
    REQUIRE(types_of(offline) == strings{"Offline"});
    CHECK(offline["notifications"][0]["alertDelay"] == 4.0);
    CHECK(offline["stats"]["pending"] == 0);
    CHECK(types_of(run_text(*a, batch(json::array(), T0 + 306).dump())).empty());
    CHECK(types_of(
              run_text(
                  *a,
                  batch(json::array({status("s2", "cam1", "online", T0 + 400)}), T0 + 400).dump()))
              .empty());
    const json online = run_text(*b, batch(json::array(), T0 + 500).dump());
    CHECK(types_of(online) == strings{"Online"});
    CHECK(server.command({"EXISTS", "demo:d:5:acct1:cam1"}) == "1");
    CHECK(server.command({"EXISTS", "alerts:d:5:acct1:cam1"}) == "0");
}

TEST_CASE("alerts/redis: a stream sent to three proxies at random gives one process's notes") {
    const stream& s = generated();
    redis_server server(false, tracked_spawn(), tracked_kill);
    const json env = redis_env(server, s.config);
    std::vector<std::unique_ptr<proxy_process>> proxies;
    for (int i = 0; i < 3; ++i) proxies.push_back(start_monitor(env));
    std::mt19937 pick(5);
    notes got;
    for (const std::string& b : s.batches) add_notes(got, run_text(*proxies[pick() % 3], b));
    CHECK(got.size() == s.reference.size());
    CHECK_MESSAGE(got == s.reference, difference(got, s.reference));
}

TEST_CASE_FIXTURE(
    two_monitors,
    "alerts/redis: two senders racing every batch to two proxies send each note once") {
    notes got;
    for (const std::string& value : s.batches) {
        json from_b;
        std::thread other(
            [&] { from_b = json::parse(b->run_raw("{\"value\":" + value + "}").body); });
        const json from_a = run_text(*a, value);
        other.join();
        REQUIRE_MESSAGE(from_b.contains("notifications"), shorten(from_b.dump()));
        add_notes(got, from_a);
        add_notes(got, from_b);
    }
    CHECK(got.size() == s.reference.size());
    CHECK_MESSAGE(got == s.reference, difference(got, s.reference));
}

TEST_CASE_FIXTURE(two_monitors, "alerts/redis: a proxy killed mid-stream loses nothing") {
    notes got;
    const std::size_t half = s.batches.size() / 2;
    for (std::size_t i = 0; i < half; ++i) {
        INFO("batch " << i);
        add_notes(got, run_text(i % 2 ? *b : *a, s.batches[i]));
    }
    const std::vector<pid_t> actions = b->children();
    REQUIRE(actions.size() == 1);
    REQUIRE(::kill(actions[0], SIGKILL) == 0);  // the container's process dies
    b->stop();
    b = start_monitor(env);  // a fresh container
    for (std::size_t i = half; i < s.batches.size(); ++i) {
        add_notes(got, run_text(i % 2 ? *b : *a, s.batches[i]));
    }
    CHECK_MESSAGE(got == s.reference, difference(got, s.reference));
}

TEST_CASE_FIXTURE(
    two_monitors_aof,
    "alerts/redis: Redis stopped mid-stream: errors answered, nothing lost on re-send") {
    notes got;
    const std::size_t stop_at = s.batches.size() / 3;
    std::size_t errors = 0;
    for (std::size_t i = 0; i < s.batches.size(); ++i) {
        const proxy_process& p = i % 2 ? *b : *a;
        if (i == stop_at) {
            server.stop();
            for (int k = 0; k < 2; ++k) {  // OpenWhisk's retries while Redis is down
                const http_reply failed = p.run_raw("{\"value\":" + s.batches[i] + "}");
                CHECK(failed.status == 200);
                const json answer = json::parse(failed.body);
                CHECK(contains(answer.value("error", ""), "redis unix://"));
                CHECK_FALSE(answer.contains("notifications"));
                ++errors;
            }
            server.start();
        }
        add_notes(got, run_text(p, s.batches[i]));
    }
    CHECK(errors == 2);
    CHECK_MESSAGE(got == s.reference, difference(got, s.reference));
    // One clear line per failure, in the activation's log.
    const proxy_process& failing = stop_at % 2 ? *b : *a;
    CHECK(wait_until(
        [&] { return count_occurrences(failing.stderr_text(), "alerts: state store failed") == 2; },
        std::chrono::seconds(10)));
}

// A Redis that takes the connection and never answers (SIGSTOP, as a stuck machine): the
// activation answers, after ALERT_REDIS_TIMEOUT_MS in all (not once per round trip or retry),
// an error that says it timed out; once Redis goes on (SIGCONT), the same batch succeeds.
TEST_CASE("alerts/redis: a paused Redis answers 'timed out' after ALERT_REDIS_TIMEOUT_MS") {
    using std::chrono::milliseconds;
    using std::chrono::steady_clock;
    redis_server server(false, tracked_spawn(), tracked_kill);
    const fs::path config =
        fs::path(ACTIONLOOP_SOURCE_DIR) / "actions" / "alerts" / "sample-config.json";
    const std::string offline =
        R"({"etags":[{"id":"s-1","account":"00001234","device":"100a1b2c","type":"status",)"
        R"("ts":1764460801.0,"state":"offline"}],"now":1764460802})";
    const std::string tick = R"({"etags":[],"now":1764461105})";
    const struct {
        const char* setting;  // ALERT_REDIS_TIMEOUT_MS, or null: the default
        milliseconds timeout;
    } cases[] = {{nullptr, milliseconds(2000)}, {"700", milliseconds(700)}};
    for (const auto& c : cases) {
        CAPTURE(c.timeout.count());
        json env = redis_env(server, config);
        if (c.setting) env["ALERT_REDIS_TIMEOUT_MS"] = c.setting;
        auto proxy = start_monitor(env);
        CHECK(run_text(*proxy, offline).at("stats").at("pending") == 1);  // a kept connection
        http_reply reply;
        const auto start = steady_clock::now();
        {
            const redis_server::paused frozen(server);
            reply = proxy->run_raw("{\"value\":" + tick + "}");
        }
        const auto took = steady_clock::now() - start;
        CHECK(reply.status == 200);
        CHECK(reply.body == json{{"error", "redis " + server.url() +
                                               ": timed out waiting for a reply "
                                               "(ALERT_REDIS_TIMEOUT_MS: " +
                                               std::to_string(c.timeout.count()) + " ms)"}}
                                    .dump() +
                                "\n");
        CHECK(took >= c.timeout);
        CHECK(took < c.timeout + milliseconds(500));
        CHECK(types_of(run_text(*proxy, tick)) == strings{"Offline"});  // Redis answers again
        server.command({"FLUSHALL"});
    }
}

TEST_CASE("alerts/redis: a bad config, Redis URL or secret file fails /init") {
    temp_dir dir("alerts-init");
    write_file(dir.path() / "typo.json", R"({"holds": {"ofline": 30}, "accounts": {}})");
    const struct {
        json env;
        const char* log;
    } cases[] = {
        {{{"ALERT_CONFIG", (dir.path() / "missing.json").string()}},
         "alerts: cannot start: config: cannot read ALERT_CONFIG file"},
        {{{"ALERT_CONFIG", (dir.path() / "typo.json").string()}},
         "alerts: cannot start: config: holds has an unknown key 'ofline'"},
        {{{"ALERT_REDIS_URL", "localhost:6379"}},
         "alerts: cannot start: ALERT_REDIS_URL 'localhost:6379' is not redis://"},
        {{{"ALERT_REDIS_URL", "redis://127.0.0.1:6379"}, {"ALERT_STATE_DIR", dir.path().string()}},
         "alerts: cannot start: set ALERT_REDIS_URL or ALERT_STATE_DIR, not both"},
        // A secret file that cannot be read fails /init, not the first batch.
        {{{"ALERT_REDIS_URL", "redis://127.0.0.1:6379"},
          {"ALERT_REDIS_PASSWORD_FILE", (dir.path() / "no-such-secret").string()}},
         "alerts: cannot start: ALERT_REDIS_PASSWORD_FILE"},
    };
    const std::string exec =
        (fs::path(ACTIONLOOP_BINARY_DIR) / "actions" / "monitor.d" / "exec").string();
    for (const auto& c : cases) {
        CAPTURE(c.log);
        proxy_process proxy(runtime());
        const http_reply reply = proxy.init(monitor_zip_code(), "main", &c.env);
        CHECK(reply.status == 502);
        // The reason is in the answer: the action fails its on_init (docs/SDK.md).
        CHECK(reply.body.rfind(R"({"error":"cannot start action: The action did not initialize )"
                               R"(properly. on_init: )" +
                                   std::string(c.log),
                               0) == 0);
        // The reason, as the action process writes it (the same exec, run on its own).
        env_map env;
        for (const auto& [k, v] : c.env.items()) env[k] = v.get<std::string>();
        const command_result run = run_command({exec}, "", env, dir.path());
        CHECK(run.exit_code == 1);
        CHECK(contains(run.err, c.log));
    }
    // A good config file starts (and, with no request on stdin, ends cleanly).
    env_map good{{"ALERT_CONFIG", fixture_path("alerts/config.json").string()}};
    const command_result ok = run_command({exec}, "", good, dir.path());
    CHECK(ok.exit_code == 0);
    CHECK(ok.err.rfind("alerts: config sha256=", 0) == 0);  // its one line: the config's name
    CHECK(count_occurrences(ok.err, "\n") == 1);
}

namespace {

// The outbox's entries (XRANGE), each as {key, n}: the entry format docs/alerts.md fixes.
std::vector<std::pair<std::string, std::string>> outbox_entries(const redis_server& server) {
    const std::string text = server.command({"XRANGE", "alerts:outbox", "-", "+"});
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::vector<std::pair<std::string, std::string>> out;
    REQUIRE(lines.size() % 5 == 0);  // id, "key", the key, "n", the JSON
    for (std::size_t i = 0; i < lines.size(); i += 5) {
        REQUIRE(lines[i + 1] == "key");
        REQUIRE(lines[i + 3] == "n");
        out.emplace_back(lines[i + 2], lines[i + 4]);
    }
    return out;
}

}  // namespace

// The outbox (docs/alerts.md, "The outbox stream"): every notification a proxy answers is one
// entry, key = its dedupKey, n = the answer's object as compact JSON; a batch re-sent to the
// other proxy after its commit (as a consumer does when the answer was lost) answers nothing
// and adds no entry.
TEST_CASE_FIXTURE(two_monitors,
                  "alerts/redis: the outbox holds each answered notification once, as answered") {
    std::vector<std::string> answered;
    std::size_t resent = 0, resent_with_notes = 0;
    for (std::size_t i = 0; i < s.batches.size(); ++i) {
        const json answer = run_text(i % 2 ? *b : *a, s.batches[i]);
        for (const json& n : answer.at("notifications")) answered.push_back(n.dump());
        if (i % 7 == 0) {  // the reply "lost": the same batch again, to the other proxy
            const std::string before = server.command({"XLEN", "alerts:outbox"});
            const json again = run_text(i % 2 ? *a : *b, s.batches[i]);
            CHECK(again.at("notifications").empty());
            CHECK(server.command({"XLEN", "alerts:outbox"}) == before);
            ++resent;
            resent_with_notes += !answer.at("notifications").empty();
        }
    }
    CHECK(resent_with_notes > 5);
    const auto entries = outbox_entries(server);
    REQUIRE(entries.size() == answered.size());
    CHECK(entries.size() == s.reference.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
        CAPTURE(i);
        CHECK(entries[i].second == answered[i]);
        CHECK(entries[i].first == json::parse(answered[i]).at("dedupKey"));
    }
    // Every Online names an Offline/InternetOffline sent before it.
    std::set<std::string> offline;
    std::size_t online = 0;
    for (const std::string& text : answered) {
        const json n = json::parse(text);
        if (n["notifType"] == "Offline" || n["notifType"] == "InternetOffline")
            offline.insert(n["dedupKey"].get<std::string>());
        if (n["notifType"] == "Online") {
            ++online;
            CHECK(offline.count(n.value("resolves", "")) == 1);
        }
    }
    CHECK(online == static_cast<std::size_t>(s.types.at("Online")));
}

// The same generated stream with ALERT_STATE_DIR, the action process killed and the container
// started again mid-stream: the same notifications, keys and resolves as memory and Redis.
TEST_CASE("alerts/redis: the state dir gives the same dedupKeys, across a restart") {
    const stream& s = generated();
    temp_dir state("alerts-state-keys");
    const json env = {{"ALERT_CONFIG", s.config.string()},
                      {"ALERT_STATE_DIR", state.path().string()}};
    auto p = start_monitor(env);
    notes got;
    const std::size_t half = s.batches.size() / 2;
    for (std::size_t i = 0; i < s.batches.size(); ++i) {
        if (i == half) {
            const std::vector<pid_t> actions = p->children();
            REQUIRE(actions.size() == 1);
            REQUIRE(::kill(actions[0], SIGKILL) == 0);
            p->stop();
            p = start_monitor(env);
        }
        add_notes(got, run_text(*p, s.batches[i]));
    }
    CHECK_MESSAGE(got == s.reference, difference(got, s.reference));
}

TEST_CASE("alerts/redis: ALERT_OUTBOX=0 writes no outbox, a bad value fails /init") {
    redis_server server(false, tracked_spawn(), tracked_kill);
    const fs::path config = fixture_path("alerts/config.json");
    json env = redis_env(server, config);
    env["ALERT_OUTBOX"] = "0";
    auto off = start_monitor(env);
    const json sent = run_text(*off, batch(json::array({motion("m1", T0)}), T0 + 1).dump());
    CHECK(types_of(sent) == strings{"Alert"});
    CHECK(server.command({"EXISTS", "alerts:outbox"}) == "0");
    env["ALERT_OUTBOX"] = "1";
    auto on = start_monitor(env);
    CHECK(types_of(run_text(*on, batch(json::array({motion("m2", T0 + 100)}), T0 + 101).dump())) ==
          strings{"Alert"});
    CHECK(server.command({"XLEN", "alerts:outbox"}) == "1");
    const std::string exec =
        (fs::path(ACTIONLOOP_BINARY_DIR) / "actions" / "monitor.d" / "exec").string();
    for (const auto& [name, value, message] :
         {std::tuple<const char*, const char*, const char*>{
              "ALERT_OUTBOX", "yes",
              "alerts: cannot start: ALERT_OUTBOX='yes' must be a whole number from 0 to 1"},
          {"ALERT_OUTBOX_MAXLEN", "10",
           "alerts: cannot start: ALERT_OUTBOX_MAXLEN='10' must be a whole number from 1000 to "
           "1000000000"}}) {
        CAPTURE(name);
        const command_result run =
            run_command({exec}, "", env_map{{name, value}}, fs::temp_directory_path());
        CHECK(run.exit_code == 1);
        CHECK(contains(run.err, message));
    }
}

// Bridges across containers (docs/alerts.md, "Bridges"): a bridge's events reach one proxy,
// its cameras' the other; each activation reads a bridge's cameras and a camera's bridge with
// its own devices. One InternetOffline covering the 5 cameras, the bridge's Online, and the
// camera still down 300 s after the bridge's return gets its own Offline, whichever proxy
// decides it.
TEST_CASE("alerts/redis: a bridge and its cameras on two proxies give one notification") {
    temp_dir dir("alerts-bridge");
    json devices = {{"bridge1", {{"name", "Site bridge"}}}};
    for (int i = 1; i <= 5; ++i) {
        devices["cam" + std::to_string(i)] = {{"name", "Camera " + std::to_string(i)},
                                              {"bridge", "bridge1"}};
    }
    const fs::path config = dir.path() / "config.json";
    write_file(config,
               json{{"accounts", {{"site", {{"recipients", {"ops@site"}}, {"devices", devices}}}}}}
                   .dump());
    redis_server server(false, tracked_spawn(), tracked_kill);
    const json env = redis_env(server, config);
    auto a = start_monitor(env);
    auto b = start_monitor(env);
    int id = 0;
    auto site = [&](const std::string& device, const std::string& state, double ts) {
        json e = status("b" + std::to_string(++id), device, state, ts);
        e["account"] = "site";
        return e;
    };
    auto cameras = [&](int from, int to, const std::string& state, double ts) {
        json etags = json::array();
        for (int i = from; i <= to; ++i)
            etags.push_back(site("cam" + std::to_string(i), state, ts));
        return etags;
    };
    auto send = [](const proxy_process& p, const json& etags, double now) {
        return run_text(p, batch(etags, now).dump());
    };
    CHECK(
        types_of(send(*a, json::array({site("bridge1", "internet_offline", T0)}), T0 + 1)).empty());
    CHECK(types_of(send(*b, cameras(1, 5, "offline", T0 + 2), T0 + 3)).empty());
    const json down = send(*a, json::array(), T0 + 300);
    REQUIRE(types_of(down) == strings{"InternetOffline"});
    const json& n = down["notifications"][0];
    CHECK(n["device"] == "bridge1");
    CHECK(n["affected"] == 5);
    REQUIRE(n["affectedDevices"].size() == 5);
    CHECK(n["affectedDevices"][4] == json{{"device", "cam5"}, {"name", "Camera 5"}});
    CHECK(down["stats"]["inhibited"] == 5);
    CHECK(types_of(send(*b, json::array(), T0 + 400)).empty());
    // The bridge comes back on B, cam1..cam4 with it on A; cam5 stays down.
    CHECK(
        types_of(send(*b, json::array({site("bridge1", "online", T0 + 1000)}), T0 + 1000)).empty());
    CHECK(types_of(send(*a, cameras(1, 4, "online", T0 + 1001), T0 + 1001)).empty());
    CHECK(types_of(send(*a, json::array(), T0 + 1095)) == strings{"Online"});
    CHECK(types_of(send(*b, json::array(), T0 + 1299)).empty());
    const json late = send(*a, json::array(), T0 + 1300);
    REQUIRE(types_of(late) == strings{"Offline"});
    CHECK(late["notifications"][0]["device"] == "cam5");
    CHECK(late["notifications"][0]["eventTs"] == T0 + 2);
    CHECK(types_of(send(*b, json::array(), T0 + 5000)).empty());
}

// alertgen's topology: 4 bridges with 40 cameras each, every bridge losing its uplink 20
// minutes in the hour, for 70 minutes; batches sent to two proxies at random give the
// notifications of one memory-only process (each bridge's InternetOffline with its cameras).
TEST_CASE("alerts/redis: bridge outages sent to two proxies at random give one process's notes") {
    static const stream s(
        {"--devices", "164", "--accounts", "1", "--bridge-size", "40", "--bridge-outage", "1",
         "--outage", "0.05", "--seed", "4"},
        {"--minutes", "70", "--rate", "2", "--batch", "300", "--reorder", "3", "--ticks"});
    INFO("reference: " << s.reference.size() << " notifications");
    REQUIRE(s.types.count("InternetOffline") == 1);
    CHECK(s.types.at("InternetOffline") >= 4);
    std::size_t affected = 0;
    for (const std::string& text : s.reference) affected += json::parse(text).value("affected", 0);
    CHECK(affected >= 120);
    redis_server server(false, tracked_spawn(), tracked_kill);
    const json env = redis_env(server, s.config);
    auto a = start_monitor(env);
    auto b = start_monitor(env);
    std::mt19937 pick(9);
    notes got;
    for (const std::string& value : s.batches)
        add_notes(got, run_text(pick() % 2 ? *a : *b, value));
    CHECK(got.size() == s.reference.size());
    CHECK_MESSAGE(got == s.reference, difference(got, s.reference));
}

// The mass event (docs/alerts.md, "All or nothing"): 10,000 cameras of one site go down at
// once, come back, and all see motion. In one batch per step on one proxy, or split over five
// batches sent to two proxies in turn, with Redis the notifications are a memory-only
// process's, each in the outbox exactly once.
TEST_CASE("alerts/redis: a site outage of 10,000 cameras gives one process's notes, once each") {
    const big_site site(10000);
    notes reference;
    {
        auto memory = start_monitor(json{{"ALERT_CONFIG", site.config.string()}});
        for (const std::string& value : outage_steps(site, 1))
            add_notes(reference, run_text(*memory, value));
    }
    std::map<std::string, int> types;
    for (const std::string& text : reference) ++types[json::parse(text).at("notifType")];
    CHECK(types ==
          std::map<std::string, int>{{"Alert", 10000}, {"Offline", 10000}, {"Online", 10000}});
    for (const std::size_t parts : {std::size_t{1}, std::size_t{5}}) {
        CAPTURE(parts);
        redis_server server(false, tracked_spawn(), tracked_kill);
        const json env = redis_env(server, site.config);
        auto a = start_monitor(env);
        auto b = start_monitor(env);
        notes got;
        std::size_t turn = 0;
        for (const std::string& value : outage_steps(site, parts))
            add_notes(got, run_text(turn++ % 2 ? *b : *a, value));
        CHECK_MESSAGE(got == reference, difference(got, reference));
        const notes stored = outbox_notes(server);
        CHECK(stored.size() == reference.size());
        CHECK_MESSAGE(stored == reference, difference(stored, reference));
    }
}

// The issue's case: a site's first busy minute, 4,800 motion ETags on 4,800 cameras Redis has
// never seen, in one batch: 4,800 notifications, in the outbox once; re-sent, all duplicates.
TEST_CASE("alerts/redis: 4,800 motion alerts of first-seen cameras in one batch are all sent") {
    const big_site site(4800);
    redis_server server(false, tracked_spawn(), tracked_kill);
    auto proxy = start_monitor(redis_env(server, site.config));
    const json value = batch(site.etags(0, 4800, "", T0, "m"), T0 + 1);
    const json first = run_text(*proxy, value.dump());
    CHECK(first["notifications"].size() == 4800);
    const json again = run_text(*proxy, value.dump());
    CHECK(again["notifications"].empty());
    CHECK(again["stats"]["duplicates"] == 4800);
    CHECK(server.command({"XLEN", "alerts:outbox"}) == "4800");
}

// One bad key stops nothing (docs/alerts.md, "Damaged keys"): a foreign due member and an
// undecodable record are skipped, counted in the answer's stats and named on the action's
// stderr; the other devices' notifications come as before.
TEST_CASE("alerts/redis: a poisoned due set and record are skipped, counted and logged") {
    const big_site site(3);
    redis_server server(false, tracked_spawn(), tracked_kill);
    auto proxy = start_monitor(redis_env(server, site.config));
    CHECK(
        types_of(run_text(*proxy, batch(site.etags(0, 1, "offline", T0, "s"), T0).dump())).empty());
    server.command({"ZADD", "alerts:due", "1", "garbage\nalerts: forged line"});
    server.command({"SET", "alerts:d:4:site:cam1", "not a record"});
    server.command({"ZADD", "alerts:due", "2", "alerts:d:4:site:cam1"});
    const json due = run_text(*proxy, batch(json::array(), T0 + 300).dump());
    CHECK(types_of(due) == strings{"Offline"});
    CHECK(due["stats"]["damaged"] == 2);
    REQUIRE(wait_until([&] { return contains(proxy->stderr_text(), "holds no device record"); },
                       std::chrono::seconds(10)));
    const std::string err = proxy->stderr_text();
    CHECK(contains(err, "alerts: redis: skipped 'garbage\\nalerts: forged line': a member of "
                        "alerts:due that is no device key"));
    CHECK_FALSE(contains(err, "\nalerts: forged line"));
    CHECK(contains(err, "alerts: redis: skipped 'alerts:d:4:site:cam1': holds no device record"));
    // cam1 recovers: its next status writes a good record.
    CHECK(types_of(
              run_text(*proxy, batch(site.etags(1, 2, "offline", T0 + 301, "t"), T0 + 301).dump()))
              .empty());
    CHECK(types_of(run_text(*proxy, batch(json::array(), T0 + 601).dump())) == strings{"Offline"});
}
