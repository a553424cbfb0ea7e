// redis_memory_test.cpp — the warning before Redis refuses writes (redis/redis_memory.hpp):
// INFO memory parsed, the share judged, the questions spaced out, all without a server; then
// query_redis_memory against a real redis-server, and the monitor's store logging the warning
// once (not at every batch) when maxmemory is close.
#include <doctest/doctest.h>

#include <chrono>
#include <iostream>
#include <sstream>
#include <string>

#include "alert_test_util.hpp"
#include "generator/stream_generator.hpp"
#include "redis/redis_client.hpp"
#include "redis/redis_memory.hpp"
#include "redis/redis_store.hpp"
#include "redis_container.hpp"
#include "redis_server.hpp"
#include "runtime/redis_url.hpp"

using namespace alerts;
using namespace alerts::test;
using std::chrono::seconds;

TEST_CASE("redis memory: INFO memory parsed") {
    const auto m = parse_info_memory(
        "# Memory\r\nused_memory:858993459\r\nused_memory_human:819.20M\r\n"
        "used_memory_rss:900000000\r\nmaxmemory:1073741824\r\nmaxmemory_human:1.00G\r\n");
    REQUIRE(m);
    CHECK(m->used == 858993459);
    CHECK(m->maxmemory == 1073741824);
    CHECK(parse_info_memory("used_memory:10\nmaxmemory:0\n")->maxmemory == 0);  // \n alone
    CHECK_FALSE(parse_info_memory("used_memory:10\r\n"));                       // no maxmemory
    CHECK_FALSE(parse_info_memory("used_memory:x\r\nmaxmemory:5\r\n"));
    CHECK_FALSE(parse_info_memory("used_memory_rss:10\r\nmaxmemory:5\r\n"));  // not the field
    CHECK_FALSE(parse_info_memory(""));
}

TEST_CASE("redis memory: a warning from 80 % of maxmemory, none without a limit") {
    CHECK(memory_warning({799, 1000}, "redis://r").empty());
    CHECK(memory_warning({10'000'000, 0}, "redis://r").empty());  // no maxmemory: no refusal
    CHECK(memory_warning({850'000'000, 1'000'000'000}, "redis://r:6379") ==
          "redis redis://r:6379: used_memory 850.0 MB is 85 % of maxmemory 1000.0 MB: at "
          "maxmemory Redis refuses every commit (noeviction) and alerting stops; raise maxmemory, "
          "or lower ALERT_OUTBOX_MAXLEN, or check that alertgw keeps up");
    CHECK_FALSE(memory_warning({800, 1000}, "x").empty());
    CHECK(memory_warning({500, 1000}, "x", 0.5).find("50 %") != std::string::npos);
    CHECK(memory_share({250, 1000}) == doctest::Approx(0.25));
    // A maxmemory set far below the use (found by fuzz_redis_memory: an int overflowed).
    CHECK(memory_warning({4'772'190'000'000, 1000}, "x").find(" is 477219000000 % of ") !=
          std::string::npos);
    CHECK(memory_warning({UINT64_MAX, 1}, "x").find(" is 1000000000000000 % of ") !=
          std::string::npos);
}

TEST_CASE("redis memory: asked at the first call, then once per interval") {
    memory_watch watch(seconds(60));
    const std::chrono::steady_clock::time_point t0{};
    CHECK(watch.due(t0 + seconds(1)));
    CHECK_FALSE(watch.due(t0 + seconds(2)));
    CHECK_FALSE(watch.due(t0 + seconds(60)));
    CHECK(watch.due(t0 + seconds(61)));
    CHECK_FALSE(watch.due(t0 + seconds(62)));
}

TEST_CASE("redis memory: the figures of a real redis-server, and the monitor's warning") {
    redis_server server;
    redis_client client(parse_redis_url(server.url()), std::chrono::milliseconds(2000));
    const redis_memory before = query_redis_memory(client);
    CHECK(before.used > 100'000);
    CHECK(before.maxmemory == 0);
    container warm(server);  // the scripts loaded, the first records written: no limit yet
    warm.run({motion("cam1", T0, "yard", 0.9, "m0")}, T0);
    // A limit a little above what is used: the next commits still fit, the warning is due.
    const std::uint64_t limit = query_redis_memory(client).used * 115 / 100;
    server.command({"CONFIG", "SET", "maxmemory", std::to_string(limit)});
    CHECK(query_redis_memory(client).maxmemory == limit);

    container a(server);
    std::ostringstream captured;
    std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
    for (int i = 1; i <= 3; ++i) {
        a.run({motion("cam1", T0 + i, "yard", 0.9, "m" + std::to_string(i))}, T0 + i);
    }
    std::cerr.rdbuf(old);
    const std::string text = captured.str();
    const std::string start = "alerts: warning: redis " + server.url() + ": used_memory ";
    CHECK_MESSAGE(text.rfind(start, 0) == 0, text);
    CHECK(text.find("% of maxmemory ") != std::string::npos);
    CHECK(text.find(start, 1) == std::string::npos);  // once: the next check is a minute away
}

// The outbox's memory per entry, the figure actions/alerts/README.md sizes ALERT_OUTBOX_MAXLEN
// with against maxmemory: the generator's notifications (outages and motion) committed by the
// store to a real redis-server, then MEMORY USAGE of the stream (every node: SAMPLES 0) over
// its length.
TEST_CASE("redis memory: an outbox entry costs 350 to 500 bytes of Redis memory") {
    generator_options o;
    o.devices = 2000;
    o.outage_fraction = 0.05;
    o.seed = 41;
    stream_generator gen(o);
    redis_server server;
    container a(server, {}, std::chrono::milliseconds(5000), gen.config());
    std::vector<etag> etags;
    std::vector<char> ids;
    for (int m = 0; m < 30; ++m) {
        const auto& minute = gen.next_minute();
        for (std::size_t i = 0; i < minute.size(); i += 1000) {
            const std::size_t n = std::min<std::size_t>(1000, minute.size() - i);
            etags.clear();
            ids.clear();
            gen.to_etags(minute.data() + i, n, etags, ids);
            a.run(etags, minute[i + n - 1].arrival + 0.05);
        }
        a.run({}, gen.minute_start() + 1);
    }
    const double entries = std::stod(server.command({"XLEN", "alerts:outbox"}));
    const double bytes =
        std::stod(server.command({"MEMORY", "USAGE", "alerts:outbox", "SAMPLES", "0"}));
    MESSAGE("outbox: " << entries << " entries, " << bytes << " bytes, " << bytes / entries
                       << " bytes per entry");
    REQUIRE(entries > 2000);
    CHECK(bytes / entries >= 350);
    CHECK(bytes / entries <= 500);
}
