// redis_store_test.cpp — the Redis store: its URL, keys and records (pure), then against a
// real redis-server: two cores sharing it behave as one, a commit that lost a race to another
// container is decided again, a due hold is sent once whichever container ticks, same-state
// heartbeats write nothing, and a Redis that is gone or does not answer fails the activation
// loudly (within the time-out).
#include <set>

#include "alert_test_util.hpp"
#include "redis/redis_records.hpp"
#include "redis/redis_store.hpp"
#include "redis_container.hpp"
#include "redis_server.hpp"
#include "runtime/redis_url.hpp"

using namespace alerts;
using namespace alerts::test;

namespace {

struct record_copy : record_sink {
    void on_device(const device_record& r) override {
        account = r.account;
        device = r.device;
        state = r.state;
        notified = r.notified;
        hold_ts = r.hold_ts;
        last_ts = r.last_ts;
        last_id = r.last_id;
    }
    void on_cooldown(const cooldown_record& r) override {
        regions.emplace_back(r.region);
        alerts.push_back(r.last_alert);
    }
    void on_id(std::uint64_t) override {}
    std::string account, device;
    device_state state{}, notified{};
    double hold_ts = 0, last_ts = 0;
    std::uint32_t last_id = 0;
    std::vector<std::string> regions;
    std::vector<double> alerts;
};

using strings = std::vector<std::string>;

}  // namespace

TEST_CASE("redis: ALERT_REDIS_URL forms and errors") {
    const redis_url tcp = parse_redis_url("redis://cache.local:6380/2");
    CHECK(tcp.host == "cache.local");
    CHECK(tcp.port == 6380);
    CHECK(tcp.db == 2);
    CHECK(parse_redis_url("redis://127.0.0.1").port == 6379);
    const redis_url unix_url = parse_redis_url("unix:///run/redis/redis.sock");
    CHECK(unix_url.socket == "/run/redis/redis.sock");
    CHECK(unix_url.host.empty());
    for (const char* bad : {"localhost:6379", "redis://", "redis://h:0", "redis://h:99999",
                            "redis://h:6379/x", "unix://relative.sock", "redis://u:p@h:1"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(parse_redis_url(bad), std::invalid_argument);
    }
}

TEST_CASE("redis: device keys and records round-trip exactly") {
    const std::string key = redis_device_key("alerts:", "acc:1", "dev 2");
    CHECK(key == "alerts:d:5:acc:1:dev 2");
    std::string_view account, device;
    REQUIRE(parse_redis_device_key("alerts:", key, account, device));
    CHECK(account == "acc:1");
    CHECK(device == "dev 2");
    CHECK_FALSE(parse_redis_device_key("other:", key, account, device));
    CHECK_FALSE(parse_redis_device_key("alerts:", "alerts:d:05:acct:1:dev 2", account, device));
    CHECK(parse_redis_device_key("alerts:", "alerts:d:0::dev", account, device));
    CHECK(redis_id_key("p:", 0xabcULL) == "p:i:0000000000000abc");

    redis_value_encoder encoder;
    device_record d;
    d.state = device_state::offline;
    d.notified = device_state::internet_offline;
    d.hold_ts = T0 + 0.1;
    d.last_ts = -std::numeric_limits<double>::infinity();
    d.last_id = 4000000001U;
    encoder.on_device(d);
    cooldown_record c;
    c.region = "front door";
    c.last_alert = T0 + 1.0 / 3;
    encoder.on_cooldown(c);
    const std::string text = encoder.finish();
    record_copy copy;
    REQUIRE(decode_redis_value(text, "acc", "dev", copy));
    CHECK(copy.account == "acc");
    CHECK(copy.state == device_state::offline);
    CHECK(copy.notified == device_state::internet_offline);
    CHECK(copy.hold_ts == T0 + 0.1);
    CHECK(copy.last_ts == -std::numeric_limits<double>::infinity());
    CHECK(copy.last_id == 4000000001U);
    CHECK(copy.regions == strings{"front door"});
    CHECK(copy.alerts == std::vector<double>{T0 + 1.0 / 3});
    for (const char* bad : {"", "2 n n 0 0 0", "1 x n 0 0 0", "1 n n 0 0", "1 n n 0 0 0 5",
                            "1 n n 0 0 0 5 9:short", "1 n n zero 0 0"}) {
        CAPTURE(bad);
        record_copy none;
        CHECK_FALSE(decode_redis_value(bad, "a", "d", none));
        CHECK(none.device.empty());
    }
}

TEST_CASE("redis: two containers sharing one Redis send each notification once") {
    redis_server server;
    container a(server), b(server);
    CHECK(a.run({status("cam1", T0, device_state::offline, "s1")}, T0).empty());
    CHECK(a.stats.pending == 1);
    CHECK(b.run({}, T0 + 299).empty());                     // not due yet
    CHECK(b.run({}, T0 + 300) == strings{"Offline cam1"});  // B matures A's hold
    CHECK(a.run({}, T0 + 301).empty());                     // and A does not send it again
    CHECK(a.stats.pending == 0);
    // The re-delivered status (same id) is a duplicate on either container.
    CHECK(a.run({status("cam1", T0, device_state::offline, "s1")}, T0 + 302).empty());
    CHECK(a.stats.duplicates == 1);
    // Motion cooldown is shared: the second alert inside 60 s is suppressed on the other one.
    CHECK(a.run({motion("cam1", T0 + 400, "door", 0.9, "m1")}, T0 + 400) == strings{"Alert cam1"});
    CHECK(b.run({motion("cam1", T0 + 430, "door", 0.9, "m2")}, T0 + 430).empty());
    CHECK(b.stats.suppressed == 1);
    // Online after the online hold, started on B, matured by A.
    CHECK(b.run({status("cam1", T0 + 500, device_state::online, "s2")}, T0 + 500).empty());
    CHECK(a.run({}, T0 + 595) == strings{"Online cam1"});
    CHECK(server.command({"ZCARD", "alerts:due"}) == "0");
}

TEST_CASE("redis: same-state heartbeats write nothing") {
    redis_server server;
    container a(server);
    a.run({status("cam1", T0, device_state::offline, "s1")}, T0);
    const std::string before = server.command({"GET", "alerts:d:5:acct1:cam1"});
    REQUIRE_FALSE(before.empty());
    server.command({"CONFIG", "RESETSTAT"});
    for (int i = 1; i <= 5; ++i) {
        a.run({heartbeat("cam1", T0 + i, device_state::offline, "h" + std::to_string(i)),
               heartbeat("cam2", T0 + i, device_state::online)},
              T0 + i);
    }
    CHECK(server.command({"GET", "alerts:d:5:acct1:cam1"}) == before);
    CHECK(server.command({"EXISTS", "alerts:d:5:acct1:cam2"}) == "0");
    // Reads only: one pipelined round trip per batch (MGET, ZRANGEBYSCORE, ZCARD, GET), no
    // commit script.
    const std::string calls = server.command({"INFO", "commandstats"});
    CHECK(calls.find("cmdstat_mget:calls=5,") != std::string::npos);  // no id lookup: heartbeats
    CHECK(calls.find("cmdstat_eval") == std::string::npos);           // nor evalsha
    CHECK(calls.find("cmdstat_set") == std::string::npos);
    CHECK(a.store.round_trips() == 2 + 5);
}

TEST_CASE("redis: a commit that lost a race is decided again on the fresh record") {
    redis_server server;
    container b(server);
    bool raced = false;
    container a(server, [&] {
        if (raced) return;
        raced = true;  // B's batch lands between A's read and A's commit
        CHECK(b.run({status("cam1", T0 + 1, device_state::offline, "b1")}, T0 + 1).empty());
    });
    CHECK(a.run({status("cam1", T0 + 2, device_state::offline, "a1")}, T0 + 2).empty());
    CHECK(a.store.counters().conflicts == 1);
    // Decided again on B's record: A's status is a same-state one (it only moves the stale
    // horizon), and the hold stays B's, from T0 + 1.
    CHECK(a.store.counters().commits == 1);
    CHECK(b.run({}, T0 + 301) == strings{"Offline cam1"});
    CHECK(a.run({}, T0 + 400).empty());
}

TEST_CASE("redis: a due hold claimed by two containers at once is sent once") {
    redis_server server;
    container b(server);
    std::vector<std::string> b_sent;
    bool raced = false;
    container a(server, [&] {
        if (raced) return;
        raced = true;
        b_sent = b.run({}, T0 + 300);
    });
    container setup(server);
    setup.run({status("cam1", T0, device_state::offline, "s1"),
               status("cam2", T0, device_state::offline, "s2")},
              T0);
    const std::vector<std::string> a_sent = a.run({}, T0 + 300);
    std::multiset<std::string> all(a_sent.begin(), a_sent.end());
    all.insert(b_sent.begin(), b_sent.end());
    CHECK(all == std::multiset<std::string>{"Offline cam1", "Offline cam2"});
    CHECK(a_sent.empty());
    CHECK(a.store.counters().conflicts == 1);
}

TEST_CASE("redis: a Redis that is gone fails the activation, and the retry succeeds") {
    redis_server server(true);
    container a(server);
    CHECK(a.run({status("cam1", T0, device_state::offline, "s1")}, T0).empty());
    server.stop();
    CHECK_THROWS_AS(a.run({}, T0 + 300), redis_error);
    CHECK(a.store.counters().failures == 1);
    server.start();  // the append-only file brings the record back
    CHECK(a.run({}, T0 + 300) == strings{"Offline cam1"});
    CHECK(a.run({}, T0 + 301).empty());
}

// A Redis that takes the connection and never answers (SIGSTOP): the activation fails after
// the time-out — one budget for the whole activation, not one per round trip or retry — with
// a message that says so; once Redis goes on, the next activation succeeds.
TEST_CASE("redis: a Redis that does not answer times out within the time-out, in all") {
    using std::chrono::milliseconds;
    redis_server server(true);
    const milliseconds timeout(600);
    container a(server, {}, timeout);
    CHECK(a.run({status("cam1", T0, device_state::offline, "s1")}, T0).empty());
    container fresh(server, {}, timeout);  // its first activation connects to a paused Redis
    for (container* c : {&a, &fresh}) {
        CAPTURE((c == &a ? "a kept connection" : "a new connection"));
        std::string message;
        const auto start = std::chrono::steady_clock::now();
        {
            const redis_server::paused frozen(server);
            try {
                c->run({}, T0 + 300);
            } catch (const redis_timeout& e) {
                message = e.what();
            }
        }
        const auto took = std::chrono::steady_clock::now() - start;
        CHECK(message == "redis " + server.url() +
                             ": timed out waiting for a reply (ALERT_REDIS_TIMEOUT_MS: 600 ms)");
        CHECK(took >= timeout);
        CHECK(took < timeout + milliseconds(400));
        CHECK(c->store.counters().failures == 1);
    }
    CHECK(a.run({}, T0 + 300) == strings{"Offline cam1"});  // Redis answers again
    CHECK(fresh.run({}, T0 + 301).empty());
}

// A process skips reading devices it found without a record, as long as the creations log
// shows none of them got one since (redis_store_read.cpp, "Devices without a record").
TEST_CASE("redis: a device another container gave a record is read again, not skipped") {
    redis_server server;
    container a(server), b(server);
    // A sees cam1 and cam2 without records (same-state heartbeats): both known absent.
    CHECK(a.run({heartbeat("cam1", T0, device_state::online),
                 heartbeat("cam2", T0, device_state::online)},
                T0)
              .empty());
    CHECK(a.run({heartbeat("cam2", T0 + 0.5, device_state::online)}, T0 + 0.5).empty());
    CHECK(a.store.counters().skipped == 1);  // cam2, the second time
    // B gives cam1 a record (offline, a hold pending); A's next batch must read it: the online
    // status is then a flap that cancels the hold, not a same-state status on a blank device.
    CHECK(b.run({status("cam1", T0 + 1, device_state::offline, "s1")}, T0 + 1).empty());
    CHECK(a.run({status("cam1", T0 + 2, device_state::online, "s2"),
                 heartbeat("cam2", T0 + 2, device_state::online)},
                T0 + 2)
              .empty());
    CHECK(a.store.counters().skipped == 2);  // cam2 again, never cam1
    CHECK(a.run({}, T0 + 400).empty());      // no Offline: the hold was cancelled
    CHECK(b.run({}, T0 + 400).empty());
    CHECK(server.command({"ZCARD", "alerts:due"}) == "0");
    CHECK(a.store.counters().log_resets == 0);
}

TEST_CASE("redis: a record created without a log entry, or a trimmed log, makes a reset") {
    redis_server server;
    container a(server), b(server);
    CHECK(a.run({heartbeat("cam1", T0, device_state::online),
                 heartbeat("cam2", T0, device_state::online)},
                T0)
              .empty());
    // A writer that does not log (an older version of the action): its record and counter.
    container writer(server);
    CHECK(writer.run({status("cam1", T0 + 1, device_state::offline, "s1")}, T0 + 1).empty());
    const std::string record = server.command({"GET", "alerts:d:5:acct1:cam1"});
    server.command({"DEL", "alerts:d:5:acct1:cam1"});
    server.command({"DECR", "alerts:devices"});
    server.command({"DEL", "alerts:created"});
    server.command({"ZREM", "alerts:due", "alerts:d:5:acct1:cam1"});
    CHECK(a.run({heartbeat("cam1", T0 + 1.5, device_state::online)}, T0 + 1.5).empty());
    const std::uint64_t skipped = a.store.counters().skipped;
    CHECK(skipped >= 1);  // cam1 known absent
    server.command({"SET", "alerts:d:5:acct1:cam1", record});
    server.command({"INCR", "alerts:devices"});
    server.command({"ZADD", "alerts:due", std::to_string(T0 + 301), "alerts:d:5:acct1:cam1"});
    // The counter is ahead of the log: A reads cam1 after all and sees the flap.
    CHECK(a.run({status("cam1", T0 + 2, device_state::online, "s2")}, T0 + 2).empty());
    CHECK(a.store.counters().log_resets == 1);
    CHECK(a.run({}, T0 + 400).empty());

    // A log trimmed past A's position: the next entry does not chain from what A followed.
    CHECK(a.run({heartbeat("cam2", T0 + 401, device_state::online)}, T0 + 401).empty());
    CHECK(b.run({status("cam2", T0 + 402, device_state::offline, "s3")}, T0 + 402).empty());
    server.command({"XTRIM", "alerts:created", "MAXLEN", "0"});
    CHECK(b.run({status("cam2", T0 + 403, device_state::online, "s4")}, T0 + 403).empty());
    // (b's second status changed cam2's record, created none: an entry that does, for cam3.)
    CHECK(b.run({status("cam3", T0 + 404, device_state::offline, "s5")}, T0 + 404).empty());
    CHECK(server.command({"XLEN", "alerts:created"}) == "1");
    const std::uint64_t resets = a.store.counters().log_resets;
    // cam2 is read (its record: online after the flap), so this offline status starts a hold.
    CHECK(a.run({status("cam2", T0 + 405, device_state::offline, "s6")}, T0 + 405).empty());
    CHECK(a.store.counters().log_resets == resets + 1);
    CHECK(a.stats.pending == 2);  // cam3's and cam2's
    CHECK(a.run({}, T0 + 705) == strings{"Offline cam3", "Offline cam2"});
}
