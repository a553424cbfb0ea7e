// redis_damage_test.cpp — keys the Redis store did not write (docs/alerts.md, "Damaged keys"),
// against a real redis-server: a due-set member that is no device key, a device key whose text
// is no record, a due member whose record is gone, a device key of another type, junk at a key
// this process knew without a record. Each is skipped (or replaced by the device's next
// change), counted in the activation's `damaged` stat, named on stderr with its key escaped, and
// the batch goes on: the other devices' notifications come as before, and the damaged device
// recovers (decided as never seen; its next change writes a good record).
#include <iostream>
#include <sstream>

#include "redis_container.hpp"

using namespace alerts;
using namespace alerts::test;

namespace {

using strings = std::vector<std::string>;

// std::cerr into a string for the scope's duration.
class captured_stderr {
public:
    captured_stderr() : old_(std::cerr.rdbuf(text_.rdbuf())) {}
    ~captured_stderr() { std::cerr.rdbuf(old_); }
    captured_stderr(const captured_stderr&) = delete;
    captured_stderr& operator=(const captured_stderr&) = delete;
    std::string text() const { return text_.str(); }

private:
    std::ostringstream text_;
    std::streambuf* old_;
};

strings lines_of(const std::string& text) {
    strings out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

constexpr const char* CAM1 = "alerts:d:5:acct1:cam1";

}  // namespace

TEST_CASE("redis: a foreign due member or an undecodable record is skipped, the batch goes on") {
    redis_server server;
    container a(server);
    CHECK(a.run({status("cam2", T0, device_state::offline, "s0")}, T0).empty());
    server.command({"ZADD", "alerts:due", "1", "garbage"});
    server.command({"ZADD", "alerts:due", "2", "garbage\r\nalerts: injected line"});
    server.command({"SET", CAM1, "junk from an older tool"});
    server.command({"ZADD", "alerts:due", "3", CAM1});
    server.command({"ZADD", "alerts:due", "4", "alerts:d:5:acct1:gone"});  // no record
    {
        captured_stderr err;
        CHECK(a.run({}, T0 + 300) == strings{"Offline cam2"});
        CHECK(a.stats.damaged == 3);
        const strings lines = lines_of(err.text());
        REQUIRE(lines.size() == 3);
        CHECK(
            lines[0] ==
            "alerts: redis: skipped 'garbage': a member of alerts:due that is no device key (left "
            "there: remove it with ZREM)");
        CHECK(lines[1].rfind("alerts: redis: skipped 'garbage\\r\\nalerts: injected line': ", 0) ==
              0);
        CHECK(lines[2] ==
              "alerts: redis: skipped '" + std::string(CAM1) +
                  "': holds no device record (decided as a device never seen; its next change "
                  "replaces it)");
    }
    CHECK(a.store.counters().damaged == 3);
    // cam1 recovers: its next status writes a good record (compared against the junk as read),
    // and its hold matures; the foreign members stay skipped.
    CHECK(a.run({status("cam1", T0 + 301, device_state::offline, "s1")}, T0 + 301).empty());
    const std::string record = server.command({"GET", CAM1});
    CAPTURE(record);
    CHECK(record.substr(1, 5) == " f n ");  // offline, announced online (version 3: a change)
    CHECK(a.run({}, T0 + 601) == strings{"Offline cam1"});
    CHECK(a.stats.damaged == 2);
    CHECK(a.stats.pending == 3);  // what stays in the due set: the two foreign members and "gone"
}

TEST_CASE("redis: a device key of another type is replaced by the device's first change") {
    redis_server server;
    container a(server);
    server.command({"HSET", CAM1, "field", "value"});
    captured_stderr err;
    CHECK(a.run({status("cam1", T0, device_state::offline, "s1"),
                 status("cam2", T0, device_state::offline, "s2")},
                T0)
              .empty());
    CHECK(a.stats.damaged == 1);
    CHECK(err.text() == "alerts: redis: skipped '" + std::string(CAM1) +
                            "': was no string (another type): replaced by the device's record\n");
    CHECK(server.command({"TYPE", CAM1}) == "string");
    CHECK(a.run({}, T0 + 300) == strings{"Offline cam1", "Offline cam2"});
}

// A process that found cam1 without a record skips reading it while the creations log vouches;
// junk written there by another tool (no log entry) makes its commit conflict: the next attempt
// reads cam1, skips the junk, and replaces it.
TEST_CASE("redis: junk at a device this process knew without a record does not block it") {
    redis_server server;
    container a(server);
    CHECK(a.run({heartbeat("cam1", T0, device_state::online)}, T0).empty());
    CHECK(a.run({heartbeat("cam1", T0 + 1, device_state::online)}, T0 + 1).empty());
    CHECK(a.store.counters().skipped == 1);
    server.command({"SET", CAM1, "1 n"});
    captured_stderr err;
    CHECK(a.run({status("cam1", T0 + 2, device_state::offline, "s1")}, T0 + 2).empty());
    CHECK(a.store.counters().conflicts == 1);
    CHECK(a.stats.damaged == 1);
    CHECK(a.run({}, T0 + 302) == strings{"Offline cam1"});
}

// A camera's commit compares its bridge's record as read (docs/alerts.md, "Bridges"): a bridge
// whose text is no record is compared as that text, not as no record, so the camera's change
// goes through.
TEST_CASE("redis: a bridge whose record is damaged does not block its cameras") {
    nlohmann::json config = sample_config();
    config["accounts"]["acct1"]["devices"]["bridge1"] = nlohmann::json::object();
    config["accounts"]["acct1"]["devices"]["cam1"]["bridge"] = "bridge1";
    redis_server server;
    container a(server, {}, std::chrono::milliseconds(2000), config);
    server.command({"SET", "alerts:d:5:acct1:bridge1", "junk"});
    captured_stderr err;
    CHECK(a.run({status("cam1", T0, device_state::offline, "s1")}, T0).empty());
    CHECK(a.stats.damaged == 1);
    CHECK(a.store.counters().conflicts == 0);
    CHECK(a.run({}, T0 + 300) == strings{"Offline cam1"});
    CHECK(server.command({"GET", "alerts:d:5:acct1:bridge1"}) == "junk");  // only compared
}
