// What the Redis alert suites share (alerts_redis_test.cpp: across containers;
// alerts_workers_test.cpp: across the workers of one container): batches and their answers, the
// generated stream with its one-process reference, a redis-server the suites may stop, the
// outbox's entries, and the site outage of many cameras.
#pragma once

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../alerts/redis_server.hpp"
#include "archive_builder.hpp"
#include "expectations.hpp"
#include "monitor_action.hpp"
#include "process_tools.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

namespace alerts_redis {

using namespace support;
using alerts::test::redis_server;
using nlohmann::json;

constexpr double T0 = 1764460800;
using strings = std::vector<std::string>;
using notes = std::multiset<std::string>;

inline proxy_options runtime() {
    proxy_options options;
    options.env["OW_COMPILER"] = compiler_script().string();
    options.env["OW_WAIT_FOR_ACK"] = "1";
    return options;
}

// The answer of one batch (a JSON value's text); the run must succeed.
inline json run_text(const proxy_process& proxy, const std::string& value) {
    const http_reply reply = proxy.run_raw("{\"value\":" + value + "}");
    REQUIRE_MESSAGE(reply.status == 200, shorten(reply.body));
    json answer = json::parse(reply.body);
    REQUIRE_MESSAGE(answer.contains("notifications"), shorten(reply.body));
    return answer;
}

inline void add_notes(notes& all, const json& answer) {
    for (const json& n : answer.at("notifications")) all.insert(n.dump());
}

inline strings types_of(const json& answer) {
    strings types;
    for (const json& n : answer.at("notifications")) types.push_back(n.at("notifType"));
    return types;
}

inline json batch(const json& etags, double now) { return json{{"etags", etags}, {"now", now}}; }

// A generated stream (alertgen): 1,500 devices for 8 minutes with many outages, flaps, motion,
// 1 % re-delivered ETags, 3 s of arrival jitter and a tick after each minute; its config in
// a file. The reference is one memory-only monitor fed every batch in order.
struct stream {
    temp_dir dir{"alerts-stream"};
    fs::path config;
    strings batches;
    notes reference;
    std::map<std::string, int> types;

    // alertgen's options of the topology (the config and the stream), then the stream's own.
    stream(const strings& topology = {"--devices", "1500", "--outage", "0.05", "--seed", "11"},
           const strings& options = {"--minutes", "8", "--batch", "400", "--duplicates", "0.01",
                                     "--reorder", "3", "--ticks"}) {
        const std::string gen =
            (fs::path(ACTIONLOOP_BINARY_DIR) / "actions" / "alerts" / "alertgen").string();
        strings args{gen};
        args.insert(args.end(), topology.begin(), topology.end());
        strings config_args = args;
        config_args.push_back("--config");
        args.insert(args.end(), options.begin(), options.end());
        const command_result cfg = run_command(config_args, "", {}, dir.path());
        REQUIRE(cfg.exit_code == 0);
        config = dir.path() / "config.json";
        write_file(config, cfg.out);
        const command_result out = run_command(args, "", {}, dir.path());
        REQUIRE(out.exit_code == 0);
        std::istringstream lines(out.out);
        for (std::string line; std::getline(lines, line);) {
            if (!line.empty()) batches.push_back(line);
        }
        REQUIRE(batches.size() > 50);
        auto proxy = start_monitor(json{{"ALERT_CONFIG", config.string()}});
        for (const std::string& b : batches) {
            const json answer = run_text(*proxy, b);
            add_notes(reference, answer);
            for (const json& n : answer["notifications"]) ++types[n["notifType"]];
        }
    }
};

inline const stream& generated() {
    static const stream GENERATED;
    return GENERATED;
}

// The notes in one multiset and not the other (at most 8 each), for a failure's message.
inline std::string difference(const notes& got, const notes& want) {
    std::vector<std::string> extra, missing;
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(),
                        std::back_inserter(extra));
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                        std::back_inserter(missing));
    std::string out =
        std::to_string(extra.size()) + " extra, " + std::to_string(missing.size()) + " missing";
    for (std::size_t i = 0; i < extra.size() && i < 8; ++i) out += "\n+ " + extra[i];
    for (std::size_t i = 0; i < missing.size() && i < 8; ++i) out += "\n- " + missing[i];
    return out;
}

// redis-server started through the suite's tracked spawn: stopping a proxy kills the orphans
// the test process inherited, and Redis must not be taken for one.
inline redis_server::spawner tracked_spawn() {
    return [](const std::vector<std::string>& argv) {
        const char* path = std::getenv("PATH");
        return spawn_process(spawn_spec{argv,
                                        env_map{{"PATH", path ? path : "/usr/bin:/bin"}},
                                        "/tmp",
                                        {},
                                        "/dev/null",
                                        "/dev/null"});
    };
}

inline void tracked_kill(pid_t pid) { terminate_and_reap(pid, std::chrono::milliseconds(0)); }

inline json redis_env(const redis_server& server, const fs::path& config) {
    return json{{"ALERT_CONFIG", config.string()}, {"ALERT_REDIS_URL", server.url()}};
}

// A site of `cameras` cameras ("site", cam0 …), each with a region "door"; its config file.
struct big_site {
    temp_dir dir{"alerts-site"};
    fs::path config = dir.path() / "config.json";
    std::size_t cameras;
    explicit big_site(std::size_t n) : cameras(n) {
        json devices = json::object();
        for (std::size_t i = 0; i < n; ++i) {
            devices["cam" + std::to_string(i)] = {{"regions", {{"door", json::object()}}}};
        }
        write_file(config, json{{"accounts",
                                 {{"site", {{"recipients", {"ops@site"}}, {"devices", devices}}}}}}
                               .dump());
    }
    // ETags of cameras [from, to): a status (`state`) or motion (state empty), ids tag<i>.
    json etags(std::size_t from, std::size_t to, const std::string& state, double ts,
               const std::string& tag) const {
        json out = json::array();
        for (std::size_t i = from; i < to; ++i) {
            json e = {{"id", tag + std::to_string(i)},
                      {"account", "site"},
                      {"device", "cam" + std::to_string(i)},
                      {"ts", ts}};
            if (state.empty()) {
                e["type"] = "motion";
                e["region"] = "door";
                e["magnitude"] = 0.9;
            } else {
                e["type"] = "status";
                e["state"] = state;
            }
            out.push_back(std::move(e));
        }
        return out;
    }
};

// The outbox's entries: their `n` (the notification's JSON), each checked against its `key`.
inline notes outbox_notes(const redis_server& server) {
    notes out;
    std::string from = "-";
    for (;;) {
        std::istringstream lines(
            server.command({"XRANGE", "alerts:outbox", from, "+", "COUNT", "5000"}));
        std::string id, key_name, key, n_name, text;
        std::size_t read = 0;
        while (std::getline(lines, id) && std::getline(lines, key_name) &&
               std::getline(lines, key) && std::getline(lines, n_name) &&
               std::getline(lines, text)) {
            const json n = json::parse(text);
            CHECK(n.at("dedupKey") == key);
            out.insert(n.dump());
            from = "(" + id;
            ++read;
        }
        if (read < 5000) return out;
    }
}

// A site outage: every camera offline at once, the holds matured, all of them back, the
// Onlines matured, then motion on all of them; as `parts` batches per step (their values'
// text).
inline strings outage_steps(const big_site& site, std::size_t parts) {
    strings steps;
    const std::size_t n = site.cameras;
    auto add = [&](const std::string& state, double ts, const std::string& tag) {
        for (std::size_t p = 0; p < parts; ++p) {
            const json etags = site.etags(n * p / parts, n * (p + 1) / parts, state, ts, tag);
            steps.push_back(batch(etags, ts + 1).dump());
        }
    };
    add("offline", T0, "down");
    steps.push_back(batch(json::array(), T0 + 301).dump());
    add("online", T0 + 400, "up");
    steps.push_back(batch(json::array(), T0 + 496).dump());
    add("", T0 + 500, "motion");
    return steps;
}

}  // namespace alerts_redis
