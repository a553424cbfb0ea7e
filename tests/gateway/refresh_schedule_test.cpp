// refresh_schedule: each held entry claimed again every interval from when it was taken, a
// bounded number per turn, never left to go idle.
#include "gateway/ledger/refresh_schedule.hpp"

#include <chrono>
#include <set>
#include <string>

#include <doctest/doctest.h>

using namespace alerts::gateway;
using namespace std::chrono;

namespace {

const refresh_schedule::time_point t0{};

bool any(const std::string&) { return true; }

}  // namespace

TEST_CASE("refresh schedule: an entry is due one interval after it was taken, then again") {
    refresh_schedule schedule(milliseconds(10000), 1000);
    schedule.taken("1-0", t0);
    schedule.taken("2-0", t0 + seconds(4));
    CHECK(schedule.due(t0 + milliseconds(9999), any).empty());
    CHECK(schedule.due(t0 + seconds(10), any) == std::vector<std::string>{"1-0"});
    CHECK(schedule.due(t0 + seconds(13), any).empty());
    CHECK(schedule.due(t0 + seconds(14), any) == std::vector<std::string>{"2-0"});
    CHECK(schedule.due(t0 + seconds(20), any) == std::vector<std::string>{"1-0"});
    CHECK(schedule.size() == 2);
}

TEST_CASE("refresh schedule: entries no longer held are forgotten when they come due") {
    refresh_schedule schedule(milliseconds(10000), 1000);
    for (int i = 0; i < 5; ++i) schedule.taken(std::to_string(i) + "-0", t0);
    const std::set<std::string> held = {"1-0", "3-0"};
    const auto ids =
        schedule.due(t0 + seconds(10), [&](const std::string& id) { return held.count(id) != 0; });
    CHECK(ids == std::vector<std::string>{"1-0", "3-0"});
    CHECK(schedule.size() == 2);
}

TEST_CASE("refresh schedule: 65,536 entries taken together go out per_turn at a time") {
    refresh_schedule schedule(milliseconds(10000), 1000);
    for (int i = 0; i < 65536; ++i) schedule.taken(std::to_string(i) + "-0", t0);
    // The loop's turns, one millisecond apart from the moment they come due: each refreshes
    // one command's worth, until they are late by half an interval.
    auto now = t0 + seconds(10);
    std::size_t refreshed = 0;
    int turns = 0;
    while (refreshed < 65536) {
        const auto ids = schedule.due(now, any);
        CHECK(ids.size() <= 1000);
        refreshed += ids.size();
        now += milliseconds(1);
        ++turns;
    }
    CHECK(turns == 66);
    // Refreshed now, spread over those turns: the next round is spread the same way.
    CHECK(schedule.due(t0 + seconds(20), any).size() == 1000);
}

TEST_CASE("refresh schedule: refreshes behind by half an interval take every due id at once") {
    refresh_schedule schedule(milliseconds(10000), 1000);
    for (int i = 0; i < 3000; ++i) schedule.taken(std::to_string(i) + "-0", t0);
    // The loop did not turn for 5 s after they came due (a stalled Redis, a long wait).
    CHECK(schedule.due(t0 + seconds(15), any).size() == 3000);
    CHECK(schedule.due(t0 + seconds(16), any).empty());
}
