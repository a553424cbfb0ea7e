// outbox_test.cpp — notification identity and the Redis outbox (docs/alerts.md, "Notification
// identity" and "The outbox stream"): every notification's dedupKey (stable, derived from what
// it announces), an Online's `resolves` (the key of the Offline it ends), the same keys in
// every store for one generated stream, old records still read; then, against a real
// redis-server, the outbox's exact entries: one per notification, written by the commit that
// changes the state, none for a re-sent batch, a lost reply or a lost race, trimmed only past
// what every consumer group acknowledged, and cut at its cap with a warning.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "alert_test_util.hpp"
#include "core/hash.hpp"
#include "core/record_codec.hpp"
#include "core/result_json.hpp"
#include "generator/stream_generator.hpp"
#include "redis/redis_records.hpp"
#include "redis/redis_store.hpp"
#include "redis_server.hpp"
#include "runtime/file_store.hpp"
#include "runtime/redis_url.hpp"

using namespace alerts;
using namespace alerts::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

using strings = std::vector<std::string>;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The answer's object of each notification of `r`, as the action writes it (compact).
strings notes_of(const alert_core& core, const batch_result& r) {
    strings out;
    for (const notification& n : r.notifications) out.push_back(dump(notification_json(core, n)));
    return out;
}

redis_store_options redis_options(const redis_server& server) {
    redis_store_options o;
    o.url = parse_redis_url(server.url());
    return o;
}

// One container: its own core and Redis store on the shared server.
struct container {
    explicit container(const redis_server& server, redis_store_options o = {})
        : store([&] {
              if (o.url.text.empty()) {
                  const redis_store_options base = redis_options(server);
                  o.url = base.url;
              }
              return o;
          }()) {}
    strings run(const std::vector<etag>& batch, double now) {
        const batch_result r = store.process(harness.core, batch, now);
        return notes_of(harness.core, r);
    }
    core_harness harness;
    redis_store store;
};

// The outbox's entries: per entry its id and its fields "name=value", in order.
struct entry {
    std::string id;
    strings fields;
};
std::vector<entry> outbox(const redis_server& server, const std::string& key = "alerts:outbox") {
    // XRANGE's reply flattened by redis_server::command: id, then the field names and values.
    const std::string text = server.command({"XRANGE", key, "-", "+"});
    std::vector<entry> out;
    std::istringstream lines(text);
    std::string line;
    strings all;
    while (std::getline(lines, line)) all.push_back(line);
    // Entries have exactly two fields (key, n): 5 lines each.
    REQUIRE(all.size() % 5 == 0);
    for (std::size_t i = 0; i < all.size(); i += 5) {
        out.push_back({all[i], {all[i + 1] + "=" + all[i + 2], all[i + 3] + "=" + all[i + 4]}});
    }
    return out;
}
std::size_t outbox_length(const redis_server& server, const std::string& key = "alerts:outbox") {
    return std::stoul(server.command({"XLEN", key}));
}

// The entry a notification (its answer object's text) must have: key=<dedupKey>, n=<text>.
strings fields_for(const std::string& note) {
    return {"key=" + json::parse(note).at("dedupKey").get<std::string>(), "n=" + note};
}

const std::regex KEY_FORM(
    "(Alert|Offline|Online|InternetOffline|FlappingStarted|FlappingStopped|StillOffline)-[0-9]+-"
    "[0-9a-f]{32}");

}  // namespace

TEST_CASE("identity: a dedupKey names what a notification announces, never when it was sent") {
    const notif_key k = make_notif_key("acct1", "cam1", notif_type::offline, 1764460801.0, {}, {});
    CHECK(notif_key_text(k).substr(0, 22) == "Offline-1764460801000-");
    CHECK(std::regex_match(notif_key_text(k), KEY_FORM));
    CHECK(notif_key_text(k) ==
          notif_key_text(make_notif_key("acct1", "cam1", notif_type::offline, 1764460801.0)));
    // Every part counts: account, device, type, the exact time, and a motion's region and event.
    std::set<std::string> keys{
        notif_key_text(k),
        notif_key_text(make_notif_key("acct2", "cam1", notif_type::offline, 1764460801.0)),
        notif_key_text(make_notif_key("acct1", "cam2", notif_type::offline, 1764460801.0)),
        notif_key_text(make_notif_key("acct1", "cam1", notif_type::internet_offline, 1764460801.0)),
        notif_key_text(make_notif_key("acct1", "cam1", notif_type::offline, 1764460801.0001)),
        notif_key_text(make_notif_key("acct1c", "am1", notif_type::offline, 1764460801.0)),
        notif_key_text(make_notif_key("acct1", "cam1", notif_type::alert, 5, "door", "m1")),
        notif_key_text(make_notif_key("acct1", "cam1", notif_type::alert, 5, "door", "m2")),
        notif_key_text(make_notif_key("acct1", "cam1", notif_type::alert, 5, "yard", "m1")),
        notif_key_text(make_notif_key("acct1", "cam1", notif_type::alert, 5, "door", "")),
    };
    CHECK(keys.size() == 10);
    // Whatever the ids hold, the key is header-safe.
    CHECK(std::regex_match(
        notif_key_text(make_notif_key("a b:\r\n", "d\"<>", notif_type::online, -12.5)),
        std::regex("Online--12500-[0-9a-f]{32}")));

    // Through the service: the same batch at another evaluation time gives the same keys.
    alert_service early(action_kind::monitor, {}), late(action_kind::monitor, {});
    std::ostringstream log;
    const json etags = json::parse(R"([
      {"id": "m-1", "account": "acct1", "device": "cam1", "type": "motion", "ts": 1764460800.125,
       "region": "door", "magnitude": 0.8}])");
    const json a = run_activation(
        early, json{{"etags", etags}, {"now", 1764460800.2}, {"config", sample_config()}}, 0, log);
    const json b = run_activation(
        late, json{{"etags", etags}, {"now", 1764460900.0}, {"config", sample_config()}}, 0, log);
    REQUIRE(a["notifications"].size() == 1);
    REQUIRE(b["notifications"].size() == 1);
    CHECK(a["notifications"][0]["publishTs"] != b["notifications"][0]["publishTs"]);
    CHECK(a["notifications"][0]["dedupKey"] == b["notifications"][0]["dedupKey"]);
    CHECK(a["notifications"][0]["dedupKey"] ==
          notif_key_text(
              make_notif_key("acct1", "cam1", notif_type::alert, 1764460800.125, "door", "m-1")));
    CHECK_FALSE(a["notifications"][0].contains("resolves"));
}

TEST_CASE("identity: an Online resolves the Offline or InternetOffline it ends") {
    json config = sample_config();
    config["flapping"] = false;  // cam1 changes state six times within the hour
    core_harness h({}, config);
    auto run = [&](const std::vector<etag>& batch, double now) {
        const batch_result& r = h.core.process(batch, now);
        strings out = notes_of(h.core, r);
        return out;
    };
    CHECK(run({status("cam1", T0, device_state::offline, "s1")}, T0).empty());
    const strings offline = run({}, T0 + 300);
    REQUIRE(offline.size() == 1);
    const json off = json::parse(offline[0]);
    CHECK(off["notifType"] == "Offline");
    CHECK(off["dedupKey"] ==
          notif_key_text(make_notif_key("acct1", "cam1", notif_type::offline, T0)));
    CHECK_FALSE(off.contains("resolves"));
    // Offline -> internet_offline restarts the hold: the InternetOffline is what Online ends.
    CHECK(run({status("cam1", T0 + 400, device_state::internet_offline, "s2")}, T0 + 400).empty());
    const strings inet = run({}, T0 + 700);
    REQUIRE(inet.size() == 1);
    const json io = json::parse(inet[0]);
    CHECK(io["notifType"] == "InternetOffline");
    CHECK(run({status("cam1", T0 + 800, device_state::online, "s3")}, T0 + 800).empty());
    const strings online = run({}, T0 + 895);
    REQUIRE(online.size() == 1);
    const json on = json::parse(online[0]);
    CHECK(on["notifType"] == "Online");
    CHECK(on["resolves"] == io["dedupKey"]);
    CHECK(on["dedupKey"] ==
          notif_key_text(make_notif_key("acct1", "cam1", notif_type::online, T0 + 800)));
    // A flap back to online before the hold ends sends nothing, and the next outage's Online
    // resolves the next Offline.
    CHECK(run({status("cam1", T0 + 1000, device_state::offline, "s4"),
               status("cam1", T0 + 1010, device_state::online, "s5")},
              T0 + 1010)
              .empty());
    CHECK(run({status("cam1", T0 + 2000, device_state::offline, "s6")}, T0 + 2000).empty());
    const json off2 = json::parse(run({}, T0 + 2300).at(0));
    CHECK(run({status("cam1", T0 + 2400, device_state::online, "s7")}, T0 + 2400).empty());
    const json on2 = json::parse(run({}, T0 + 2500).at(0));
    CHECK(off2["dedupKey"] ==
          notif_key_text(make_notif_key("acct1", "cam1", notif_type::offline, T0 + 2000)));
    CHECK(on2["resolves"] == off2["dedupKey"]);
}

// What an older version wrote: a Redis record "1 …" and a state-dir 'D' frame, without the
// announced time. With no hold pending it is the hold's start (exact); with one pending it is
// lost, and that Online carries no `resolves`.
TEST_CASE("identity: records of older versions stay readable") {
    struct copy : record_sink {
        void on_device(const device_record& r) override { d = r; }
        void on_cooldown(const cooldown_record&) override {}
        void on_id(std::uint64_t) override {}
        device_record d;
    } v1, v2;
    REQUIRE(decode_redis_value("1 f f 1764460800 1764460800 7", "acct1", "cam1", v1));
    CHECK(v1.d.state == device_state::offline);
    CHECK(std::isnan(v1.d.notified_ts));
    redis_value_encoder enc;
    device_record r;
    r.state = device_state::online;
    r.notified = device_state::offline;
    r.hold_ts = T0 + 500;
    r.last_ts = T0 + 500;
    r.notified_ts = T0 + 0.25;
    enc.on_device(r);
    const std::string text = enc.finish();
    CHECK(text == "2 n f 1764461300 1764461300 0 1764460800.25");
    REQUIRE(decode_redis_value(text, "acct1", "cam1", v2));
    CHECK(v2.d.notified_ts == T0 + 0.25);
    CHECK_FALSE(decode_redis_value("2 n f 1764461300 1764461300 0", "a", "d", v2));

    // Restored into a core: the v1 record (offline announced, no hold pending) gives the
    // Offline's key to the Online that follows.
    core_harness h;
    h.core.restore_device(v1.d);
    h.run({status("cam1", T0 + 600, device_state::online, "s9")}, T0 + 600);
    const batch_result& done = h.core.process({}, T0 + 700);
    REQUIRE(done.notifications.size() == 1);
    REQUIRE(done.notifications[0].has_resolves);
    CHECK(notif_key_text(done.notifications[0].resolves) ==
          notif_key_text(make_notif_key("acct1", "cam1", notif_type::offline, T0)));
    // A v1 record with the Online hold pending: no resolves (not made up).
    core_harness pending;
    device_record p = v1.d;
    p.state = device_state::online;
    p.hold_ts = T0 + 600;
    pending.core.restore_device(p);
    const batch_result& later = pending.core.process({}, T0 + 700);
    REQUIRE(later.notifications.size() == 1);
    CHECK_FALSE(later.notifications[0].has_resolves);

    // A state dir frame of the older form ('D': no announced time) is read.
    std::string frame;
    {
        std::string payload = "D";
        payload += static_cast<char>(5);
        payload += "acct1";
        payload += static_cast<char>(4);
        payload += "cam1";
        payload += static_cast<char>(1);  // offline
        payload += static_cast<char>(1);  // offline announced
        const double hold = T0, last = T0;
        const std::uint32_t id = 7;
        payload.append(reinterpret_cast<const char*>(&hold), 8);
        payload.append(reinterpret_cast<const char*>(&last), 8);
        payload.append(reinterpret_cast<const char*>(&id), 4);
        const std::uint32_t magic = 0x314a4c41, len = static_cast<std::uint32_t>(payload.size());
        const std::uint64_t seq = 1, sum = hash_bytes(payload);
        frame.append(reinterpret_cast<const char*>(&magic), 4);
        frame.append(reinterpret_cast<const char*>(&len), 4);
        frame.append(reinterpret_cast<const char*>(&seq), 8);
        frame.append(reinterpret_cast<const char*>(&sum), 8);
        frame += payload;
    }
    copy old;
    const decode_result dr = decode_frames(frame, 0, old);
    CHECK(dr.frames == 1);
    CHECK(old.d.device == "cam1");
    CHECK(old.d.notified == device_state::offline);
    CHECK(std::isnan(old.d.notified_ts));
}

// One generated stream (alertgen's library: outages, flaps, motion, duplicates, jitter, a tick
// after each minute; flapping devices, reminders and a maintenance window) through the memory
// store, a state dir whose process restarts mid-stream,
// and two containers sharing Redis in turn: the same notifications, dedupKeys and resolves.
TEST_CASE("identity: the same stream gives the same dedupKeys in memory, state dir and Redis") {
    generator_options o;
    o.devices = 400;
    o.outage_fraction = 0.05;
    o.duplicate_rate = 0.01;
    o.reorder_window = 3;
    o.seed = 23;
    stream_generator gen(o);
    // With the noise rules on (issue 21): flapping by default, reminders, and a maintenance
    // window over one account for minutes 5 to 12.
    json config = gen.config();
    config["reminders"] = {{"offline", {120, 600}}};
    config["maintenance"] = json::array();
    config["maintenance"].push_back({{"account", config["accounts"].begin().key()},
                                     {"from", o.start + 300},
                                     {"until", o.start + 720}});
    struct batch {
        std::vector<etag> etags;
        std::vector<char> ids;
        double now;
    };
    std::vector<batch> batches;
    for (int m = 0; m < 25; ++m) {
        const auto& minute = gen.next_minute();
        for (std::size_t i = 0; i < minute.size(); i += 500) {
            const std::size_t n = std::min<std::size_t>(500, minute.size() - i);
            batch b;
            gen.to_etags(minute.data() + i, n, b.etags, b.ids);
            b.now = minute[i + n - 1].arrival + 0.05;
            batches.push_back(std::move(b));
        }
        batches.push_back({{}, {}, gen.minute_start() + 1});  // a tick
    }
    // to_etags' views point into each batch's ids: moved vectors keep their buffers.

    strings memory;
    {
        core_harness h({}, config);
        memory_store store;
        for (const batch& b : batches) {
            const strings n = notes_of(h.core, store.process(h.core, b.etags, b.now));
            memory.insert(memory.end(), n.begin(), n.end());
        }
    }
    std::map<std::string, int> types;
    std::size_t resolved = 0;
    std::set<std::string> keys, offline_keys;
    for (const std::string& text : memory) {
        const json n = json::parse(text);
        ++types[n["notifType"].get<std::string>()];
        CHECK(std::regex_match(n["dedupKey"].get<std::string>(), KEY_FORM));
        keys.insert(n["dedupKey"].get<std::string>());
        if (n["notifType"] == "Offline" || n["notifType"] == "InternetOffline")
            offline_keys.insert(n["dedupKey"].get<std::string>());
        if (n.contains("resolves")) {
            ++resolved;
            CHECK(n["notifType"] == "Online");
            CHECK(offline_keys.count(n["resolves"].get<std::string>()) == 1);
        }
    }
    INFO("memory: " << memory.size() << " notifications");
    CHECK(types["Alert"] > 50);
    CHECK(types["Offline"] > 5);
    CHECK(types["Online"] > 5);
    CHECK(types["FlappingStarted"] > 0);
    CHECK(types["StillOffline"] > 2);
    CHECK(resolved == static_cast<std::size_t>(types["Online"]));  // every Online resolves one
    CHECK(keys.size() == memory.size());                           // one key per notification

    strings disk;
    {
        const fs::path dir =
            fs::temp_directory_path() / ("alerts-outbox-state-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        const std::size_t half = batches.size() / 2;
        for (int part = 0; part < 2; ++part) {  // a restarted process: a new core, loaded
            core_harness h({}, config);
            file_store store(file_store_options{dir.string(), false});
            store.load(h.core);
            for (std::size_t i = part ? half : 0; i < (part ? batches.size() : half); ++i) {
                const strings n =
                    notes_of(h.core, store.process(h.core, batches[i].etags, batches[i].now));
                disk.insert(disk.end(), n.begin(), n.end());
            }
        }
        fs::remove_all(dir);
    }
    // (A restarted process numbers its devices in another order, and a batch's notifications
    // come in device order: compared as sets.)
    CHECK(std::multiset<std::string>(disk.begin(), disk.end()) ==
          std::multiset<std::string>(memory.begin(), memory.end()));

    redis_server server;
    strings shared;
    {
        container a(server), b(server);
        b.harness.core.set_config(make_config(config));
        a.harness.core.set_config(make_config(config));
        for (std::size_t i = 0; i < batches.size(); ++i) {
            const strings n = (i % 2 ? b : a).run(batches[i].etags, batches[i].now);
            shared.insert(shared.end(), n.begin(), n.end());
        }
    }
    CHECK(std::multiset<std::string>(shared.begin(), shared.end()) ==
          std::multiset<std::string>(memory.begin(), memory.end()));
    // And the outbox holds exactly those, one entry each, in the order they were committed.
    const std::vector<entry> entries = outbox(server);
    REQUIRE(entries.size() == shared.size());
    for (std::size_t i = 0; i < shared.size(); ++i)
        CHECK(entries[i].fields == fields_for(shared[i]));
}

TEST_CASE("outbox: one entry per notification, written with the state, none for a re-send") {
    redis_server server;
    container a(server), b(server);
    const std::vector<etag> first = {motion("cam1", T0, "door", 0.9, "m1"),
                                     motion("cam1", T0 + 1, "yard", 0.9, "m2"),
                                     status("cam2", T0, device_state::offline, "s1")};
    const strings sent = a.run(first, T0 + 2);
    REQUIRE(sent.size() == 2);
    std::vector<entry> entries = outbox(server);
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].fields == fields_for(sent[0]));
    CHECK(entries[1].fields == fields_for(sent[1]));
    CHECK(entries[0].fields[1] ==
          "n=" + dump(json::parse(sent[0])));  // exactly the answer's object, compact
    // The entry id's milliseconds are the commit's time (the server's clock).
    const std::string ms = entries[0].id.substr(0, entries[0].id.find('-'));
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    CHECK(std::abs(std::stoll(ms) - now_ms) < 60000);

    // The same batch re-sent, to either container: duplicates, no entry.
    CHECK(a.run(first, T0 + 3).empty());
    CHECK(b.run(first, T0 + 4).empty());
    CHECK(outbox_length(server) == 2);
    // A batch that changes nothing but heartbeats: no commit, no entry.
    CHECK(b.run({heartbeat("cam1", T0 + 5, device_state::online)}, T0 + 5).empty());
    // The Offline, matured by a tick on B: one more entry; the tick re-sent adds none.
    const strings off = b.run({}, T0 + 300);
    REQUIRE(off.size() == 1);
    CHECK(a.run({}, T0 + 300).empty());
    entries = outbox(server);
    REQUIRE(entries.size() == 3);
    CHECK(entries[2].fields == fields_for(off[0]));
    CHECK(a.store.counters().outbox_entries == 2);
    CHECK(b.store.counters().outbox_entries == 1);
}

// The hole docs/alerts.md used to admit: a commit Redis applied whose reply never came back.
// The activation fails (an error answer); the batch re-sent finds its ids applied and answers
// no notification — and the outbox has them, once, from the commit that applied.
TEST_CASE("outbox: a commit whose reply was lost still delivers its notifications, once") {
    redis_server server;
    bool lose = true;
    redis_store_options o = redis_options(server);
    o.after_commit = [&] {
        if (lose) throw redis_error("redis: connection lost (test)");
    };
    container a(server, o), b(server);
    const std::vector<etag> batch = {motion("cam1", T0, "door", 0.9, "m1"),
                                     status("cam2", T0 - 400, device_state::offline, "s1")};
    CHECK(b.run({status("cam2", T0 - 400, device_state::offline, "s0")}, T0 - 400).empty());
    CHECK_THROWS_AS(a.run(batch, T0 + 1), redis_error);
    lose = false;
    // What the first attempt decided: an Alert, and cam2's Offline (due at T0 - 100).
    const std::vector<entry> entries = outbox(server);
    REQUIRE(entries.size() == 2);
    // Re-sent, to the same container and to the other: nothing more.
    CHECK(a.run(batch, T0 + 2).empty());
    CHECK(b.run(batch, T0 + 3).empty());
    CHECK(outbox_length(server) == 2);
    // The entries are those a memory-only process answers for the batch.
    core_harness mem;
    mem.core.process({status("cam2", T0 - 400, device_state::offline, "s0")}, T0 - 400);
    const strings want = notes_of(mem.core, mem.core.process(batch, T0 + 1));
    REQUIRE(want.size() == 2);
    std::multiset<strings> got_fields{entries[0].fields, entries[1].fields};
    CHECK(got_fields == std::multiset<strings>{fields_for(want[0]), fields_for(want[1])});
}

TEST_CASE("outbox: a commit that lost a race to another container adds nothing") {
    redis_server server;
    container b(server);
    strings from_b;
    bool raced = false;
    redis_store_options o = redis_options(server);
    o.before_commit = [&] {
        if (raced) return;
        raced = true;  // B commits the same due hold between A's read and A's commit
        from_b = b.run({}, T0 + 300);
    };
    container a(server, o);
    container setup(server);
    setup.run({status("cam1", T0, device_state::offline, "s1")}, T0);
    const strings from_a = a.run({}, T0 + 300);
    CHECK(a.store.counters().conflicts == 1);
    CHECK(from_a.empty());
    REQUIRE(from_b.size() == 1);
    const std::vector<entry> entries = outbox(server);
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].fields == fields_for(from_b[0]));
}

// Trimming: only entries every consumer group acknowledged (no group: none); past the cap the
// oldest go whatever the groups, counted and logged.
TEST_CASE("outbox: trimmed only past what every consumer group acknowledged") {
    redis_server server;
    redis_store_options o = redis_options(server);
    o.outbox_trim_above = 4;
    o.outbox_maxlen = 1000;
    container a(server, o);
    double t = T0;
    int next = 0;
    // Each call: one Alert (region yard has no cooldown), one entry.
    auto alert = [&] {
        t += 1;
        const std::string id = "m" + std::to_string(++next);
        REQUIRE(a.run({motion("cam1", t, "yard", 0.9, id)}, t).size() == 1);
    };
    for (int i = 0; i < 6; ++i) alert();
    CHECK(outbox_length(server) == 6);  // no group: nothing trimmed
    // Two gateways' groups, created from the start as alertgw does.
    server.command({"XGROUP", "CREATE", "alerts:outbox", "alertgw", "0", "MKSTREAM"});
    server.command({"XGROUP", "CREATE", "alerts:outbox", "audit", "0"});
    const std::vector<entry> all = outbox(server);
    alert();
    CHECK(outbox_length(server) == 7);  // nothing delivered yet
    // alertgw reads 5 and acknowledges the first 3; audit reads and acknowledges 4.
    server.command(
        {"XREADGROUP", "GROUP", "alertgw", "g1", "COUNT", "5", "STREAMS", "alerts:outbox", ">"});
    server.command({"XACK", "alerts:outbox", "alertgw", all[0].id, all[1].id, all[2].id});
    server.command(
        {"XREADGROUP", "GROUP", "audit", "x1", "COUNT", "4", "STREAMS", "alerts:outbox", ">"});
    server.command({"XACK", "alerts:outbox", "audit", all[0].id, all[1].id, all[2].id, all[3].id});
    alert();
    // alertgw's oldest pending entry is the 4th: the first 3 go, the 4th stays.
    std::vector<entry> left = outbox(server);
    REQUIRE(left.size() == 8 - 3);
    CHECK(left[0].id == all[3].id);
    // Everything read and acknowledged by both: trimmed to the last entry delivered.
    server.command({"XREADGROUP", "GROUP", "alertgw", "g1", "STREAMS", "alerts:outbox", ">"});
    server.command({"XREADGROUP", "GROUP", "audit", "x1", "STREAMS", "alerts:outbox", ">"});
    left = outbox(server);
    for (const char* group : {"alertgw", "audit"}) {
        strings ack = {"XACK", "alerts:outbox", group};
        for (const entry& e : left) ack.push_back(e.id);
        server.command(ack);
    }
    alert();
    left = outbox(server);
    CHECK(left.size() == 2);  // the last one delivered (kept as the floor) and the new one
    CHECK(a.store.counters().outbox_dropped == 0);
}

TEST_CASE("outbox: past its cap the oldest entries are dropped, counted and logged") {
    redis_server server;
    redis_store_options o = redis_options(server);
    o.outbox_trim_above = 2;
    o.outbox_maxlen = 3;
    container a(server, o);
    std::ostringstream captured;
    std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
    for (int i = 1; i <= 5; ++i) {
        a.run({motion("cam1", T0 + i, "yard", 0.9, "m" + std::to_string(i))}, T0 + i);
    }
    std::cerr.rdbuf(old);
    CHECK(outbox_length(server) == 3);
    CHECK(a.store.counters().outbox_entries == 5);
    CHECK(a.store.counters().outbox_dropped == 2);
    // The newest three are kept.
    const std::vector<entry> left = outbox(server);
    CHECK(json::parse(left[0].fields[1].substr(2))["eventTs"] == T0 + 3);
    // One line at once (later drops within 10 s are counted into the next line).
    CHECK(captured.str() ==
          "alerts: warning: the outbox alerts:outbox is over its cap of 3 entries "
          "(ALERT_OUTBOX_MAXLEN): dropped the oldest 1 notifications, which no gateway had "
          "acknowledged (is alertgw running? set ALERT_OUTBOX=0 if nothing reads the outbox)\n");
}

TEST_CASE("outbox: ALERT_OUTBOX=0 writes no stream, the same notifications") {
    redis_server server;
    redis_store_options o = redis_options(server);
    o.outbox = false;
    container a(server, o);
    const strings sent = a.run({motion("cam1", T0, "door", 0.9, "m1")}, T0);
    CHECK(sent.size() == 1);
    CHECK(server.command({"EXISTS", "alerts:outbox"}) == "0");
    // A prefix names the stream too.
    redis_store_options p = redis_options(server);
    p.prefix = "site2:";
    container b(server, p);
    CHECK(b.run({motion("cam1", T0, "door", 0.9, "m1")}, T0).size() == 1);
    CHECK(outbox_length(server, "site2:outbox") == 1);
}
