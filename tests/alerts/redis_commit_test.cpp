// redis_commit_test.cpp — the Redis store's commit is all or nothing at any size (docs/alerts.md,
// "All or nothing"), against a real redis-server: batches of 1, 4,000, 10,000 and 50,000 ETags
// (the batch bound, ALERT_MAX_BATCH_ETAGS) of first-seen cameras, with motion and with statuses,
// each notification in the outbox exactly once; a commit refused for a shared key of the wrong
// type, a counter that is no number or a stream with no id left writes nothing (the re-sent
// batch gives its notifications once the key is mended); and maxmemory refuses a commit only
// before its first write, never half-way.
#include <algorithm>
#include <set>
#include <sstream>

#include "redis_container.hpp"

using namespace alerts;
using namespace alerts::test;

namespace {

using strings = std::vector<std::string>;

std::string cam(std::size_t i) { return "cam" + std::to_string(100000 + i); }

// One account "site" with `cameras` cameras, each with a region "door" (no cooldown).
nlohmann::json fleet(std::size_t cameras) {
    nlohmann::json devices = nlohmann::json::object();
    for (std::size_t i = 0; i < cameras; ++i)
        devices[cam(i)] = {{"regions", {{"door", nlohmann::json::object()}}}};
    return {{"accounts", {{"site", {{"recipients", {"ops@site"}}, {"devices", devices}}}}}};
}

std::vector<etag> motions(std::size_t from, std::size_t to, double ts, const std::string& tag) {
    static std::vector<std::string> ids;  // the ETags view their strings
    static std::vector<std::string> names;
    ids.clear();
    names.clear();
    ids.reserve(to - from);
    names.reserve(to - from);
    std::vector<etag> batch;
    for (std::size_t i = from; i < to; ++i) {
        names.push_back(cam(i));
        ids.push_back(tag + std::to_string(i));
        batch.push_back(motion(names.back(), ts, "door", 0.9, ids.back(), "site"));
    }
    return batch;
}

// Statuses of `n` devices no config lists ("box<i>"), first seen by Redis.
struct status_batch {
    std::vector<std::string> names, ids;
    std::vector<etag> etags;
    status_batch(std::size_t n, double ts, device_state s, const std::string& tag) {
        names.reserve(n);
        ids.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            names.push_back("box" + std::to_string(i));
            ids.push_back(tag + std::to_string(i));
            etags.push_back(status(names.back(), ts, s, ids.back(), "site"));
        }
    }
};

// The outbox's dedupKeys, in its order (XRANGE, in pages).
strings outbox_keys(const redis_server& server) {
    strings keys;
    std::string from = "-";
    for (;;) {
        const std::string page =
            server.command({"XRANGE", "alerts:outbox", from, "+", "COUNT", "10000"});
        if (page.empty()) break;
        // Each entry: id, then its fields: key <dedupKey> n <JSON> (one line each).
        std::istringstream lines(page);
        std::string id, name, key, n, json;
        std::size_t read = 0;
        while (std::getline(lines, id) && std::getline(lines, name) && std::getline(lines, key) &&
               std::getline(lines, n) && std::getline(lines, json)) {
            REQUIRE(name == "key");
            keys.push_back(key);
            from = "(" + id;
            ++read;
        }
        if (read < 10000) break;
    }
    return keys;
}

// Every created key of the creations log, and whether its entries chain from 0 to `total`.
std::size_t logged_creations(const redis_server& server, std::uint64_t total) {
    const std::string text = server.command({"XRANGE", "alerts:created", "-", "+"});
    std::istringstream lines(text);
    std::uint64_t n = 0, c = 0, previous = 0;
    std::size_t keys = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line == "n" && std::getline(lines, line)) n = std::stoull(line);
        if (line == "c" && std::getline(lines, line)) {
            c = std::stoull(line);
            CHECK(n - c == previous);  // each entry chains from the one before
            previous = n;
        }
        if (line == "k") ++keys;
    }
    CHECK(previous == total);
    return keys;
}

void check_once(const strings& answered, const redis_server& server) {
    const strings stored = outbox_keys(server);
    CHECK(stored.size() == answered.size());
    CHECK(std::set<std::string>(stored.begin(), stored.end()).size() == stored.size());
    CHECK(std::multiset<std::string>(stored.begin(), stored.end()) ==
          std::multiset<std::string>(answered.begin(), answered.end()));
}

}  // namespace

TEST_CASE("redis: a commit of 1, 4,000, 10,000 or 50,000 first-seen devices is whole") {
    for (const std::size_t size :
         {std::size_t{1}, std::size_t{4000}, std::size_t{10000}, std::size_t{50000}}) {
        CAPTURE(size);
        redis_server server;
        container a(server, {}, std::chrono::milliseconds(60000), fleet(size));
        // Motion on cameras Redis has never seen: one Alert each, every record created.
        const strings alerts = a.run(motions(0, size, T0, "m"), T0);
        CHECK(alerts.size() == size);
        strings answered = a.keys;
        CHECK(server.command({"GET", "alerts:devices"}) == std::to_string(size));
        CHECK(logged_creations(server, size) == size);
        check_once(answered, server);
        // Sent again (as after an error answer): all duplicates, nothing added.
        CHECK(a.run(motions(0, size, T0, "m"), T0 + 1).empty());
        CHECK(a.stats.duplicates == size);
        CHECK(server.command({"XLEN", "alerts:outbox"}) == std::to_string(size));
        // First-time statuses of as many devices: records and holds, then one Offline each.
        const status_batch down(size, T0 + 2, device_state::offline, "s");
        CHECK(a.run(down.etags, T0 + 2).empty());
        CHECK(a.stats.pending == size);
        CHECK(server.command({"GET", "alerts:devices"}) == std::to_string(2 * size));
        CHECK(logged_creations(server, 2 * size) == 2 * size);
        CHECK(a.run({}, T0 + 302).size() == size);
        answered.insert(answered.end(), a.keys.begin(), a.keys.end());
        check_once(answered, server);
        CHECK(server.command({"ZCARD", "alerts:due"}) == "0");
    }
}

// A shared key another program damaged: the commit refuses before its first write (an error
// answer, nothing stored), and once the key is mended the same batch gives its notification.
TEST_CASE("redis: a commit refused for a damaged shared key writes nothing") {
    struct damage {
        std::string what;
        strings break_it;
        strings mend_it;
        const char* message;
    };
    const damage cases[] = {
        {"outbox of another type",
         {"SET", "alerts:outbox", "x"},
         {"DEL", "alerts:outbox"},
         "alerts:outbox is a string, not a stream"},
        {"outbox with no id left",
         {"XADD", "alerts:outbox", "18446744073709551615-18446744073709551000", "k", "v"},
         {"DEL", "alerts:outbox"},
         "alerts:outbox has no stream id left"},
        {"outbox whose last id is taken",
         {"XADD", "alerts:outbox", "18446744073709551615-18446744073709551615", "k", "v"},
         {"DEL", "alerts:outbox"},
         "alerts:outbox: ERR The stream has exhausted the last possible ID"},
        {"device counter that is no number",
         {"SET", "alerts:devices", "many"},
         {"DEL", "alerts:devices"},
         "alerts:devices holds no device count"},
    };
    for (const damage& d : cases) {
        CAPTURE(d.what);
        redis_server server;
        container a(server);
        server.command(d.break_it);
        std::string error;
        try {
            a.run({motion("cam1", T0, "door", 0.9, "m1")}, T0);
        } catch (const redis_error& e) {
            error = e.what();
        }
        CHECK(error.find("commit refused, nothing written: " + std::string(d.message)) !=
              std::string::npos);
        CHECK(server.command({"EXISTS", "alerts:d:5:acct1:cam1"}) == "0");
        CHECK(server.command({"KEYS", "alerts:i:*"}).empty());
        server.command(d.mend_it);
        CHECK(a.run({motion("cam1", T0, "door", 0.9, "m1")}, T0 + 1) == strings{"Alert cam1"});
        CHECK(server.command({"XLEN", "alerts:outbox"}) == "1");
    }
}

// The creations log is only a hint for the readers: a commit whose log entry cannot be added
// (no id left) goes through, and a reader that followed the log stops trusting it.
TEST_CASE("redis: a creations log with no id left does not stop a commit") {
    redis_server server;
    container a(server), b(server);
    CHECK(b.run({heartbeat("cam2", T0, device_state::online)}, T0).empty());  // cam2: no record
    server.command(
        {"XADD", "alerts:created", "18446744073709551615-18446744073709551615", "k", "v"});
    CHECK(a.run({motion("cam1", T0 + 1, "door", 0.9, "m1"),
                 status("cam2", T0 + 1, device_state::offline, "s1")},
                T0 + 1) == strings{"Alert cam1"});
    CHECK(server.command({"XLEN", "alerts:outbox"}) == "1");
    CHECK(server.command({"GET", "alerts:devices"}) == "2");
    // B knew cam2 without a record; the counter is ahead of the log: B reads cam2 again.
    CHECK(b.run({status("cam2", T0 + 2, device_state::online, "s2")}, T0 + 2).empty());
    CHECK(b.store.counters().log_resets == 1);
    CHECK(b.run({}, T0 + 400).empty());  // the flap cancelled the hold: no Offline
}

// maxmemory with noeviction: Redis refuses a script's write only while the script has written
// nothing (its first write), so a commit is refused whole or applied whole, even one that takes
// memory past the limit. Limits from what Redis uses before a commit of 10,000 motion alerts
// to 11 MiB above: each commit is all or nothing; some are refused; and some are applied whole
// although they went past the limit on the way: a refused one shows that the command alone
// (its arguments, read before the script runs) took more than its limit, so an applied one whose
// limit is below that plus what the commit stored was past its limit before the script ended.
TEST_CASE("redis: maxmemory refuses a commit before its first write, never half-way") {
    const std::size_t size = 10000;
    redis_server server;
    container a(server, {}, std::chrono::milliseconds(30000), fleet(size + 1));
    const auto used = [&] {
        const std::string info = server.command({"INFO", "memory"});
        const std::size_t at = info.find("used_memory:") + 12;
        return std::stoull(info.substr(at, info.find('\r', at) - at));
    };
    std::uint64_t refused_below = 0;  // the largest limit above the start that refused
    int refused = 0, crossed = 0;
    for (std::uint64_t mib = 0; mib < 12; ++mib) {
        CAPTURE(mib);
        server.command({"CONFIG", "SET", "maxmemory", "0"});
        server.command({"FLUSHALL"});
        CHECK(a.run(motions(size, size + 1, T0, "w" + std::to_string(mib)), T0).size() == 1);
        const std::string keys_before = server.command({"DBSIZE"});
        const std::uint64_t start = used();
        const std::uint64_t extra = mib * 1024 * 1024;
        server.command({"CONFIG", "SET", "maxmemory", std::to_string(start + extra)});
        bool applied = false;
        try {
            applied =
                a.run(motions(0, size, T0 + 1, "m" + std::to_string(mib)), T0 + 1).size() == size;
        } catch (const redis_error& e) {
            CHECK(std::string(e.what()).find("OOM command not allowed") != std::string::npos);
        }
        if (applied) {
            CHECK(server.command({"XLEN", "alerts:outbox"}) == std::to_string(size + 1));
            CHECK(server.command({"GET", "alerts:devices"}) == std::to_string(size + 1));
            if (extra < refused_below + (used() - start)) ++crossed;
        } else {
            ++refused;
            refused_below = extra;
            CHECK(server.command({"DBSIZE"}) == keys_before);
            CHECK(server.command({"XLEN", "alerts:outbox"}) == "1");
            CHECK(server.command({"GET", "alerts:devices"}) == "1");
        }
    }
    CHECK(refused > 0);
    CHECK(crossed > 0);
}
