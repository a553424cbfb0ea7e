// write_pacing: acknowledgements and dead letters are written at once; progress alone waits
// a little, so that many deliveries' progress goes to Redis in one round trip.
#include "gateway/ledger/write_pacing.hpp"

#include <chrono>

#include <doctest/doctest.h>

using namespace alerts::gateway;
using namespace std::chrono;

namespace {

const write_pacing::time_point t0{};

constexpr pending_writes NONE = pending_writes::none;
constexpr pending_writes PROGRESS = pending_writes::progress_only;
constexpr pending_writes URGENT = pending_writes::urgent;  // an acknowledgement or dead letter

}  // namespace

TEST_CASE("write pacing: nothing to write is never due and sets no wake-up") {
    write_pacing pacing(milliseconds(50));
    CHECK_FALSE(pacing.due(NONE, t0, false));
    CHECK_FALSE(pacing.next_due().has_value());
}

TEST_CASE("write pacing: an acknowledgement or a dead letter is written at once") {
    write_pacing pacing(milliseconds(50));
    CHECK(pacing.due(URGENT, t0, false));
}

TEST_CASE("write pacing: progress alone waits up to the delay from the first one unwritten") {
    write_pacing pacing(milliseconds(50));
    CHECK_FALSE(pacing.due(PROGRESS, t0, false));
    REQUIRE(pacing.next_due().has_value());
    CHECK(*pacing.next_due() == t0 + milliseconds(50));
    // More progress later does not move the time: the first one waits at most the delay.
    CHECK_FALSE(pacing.due(PROGRESS, t0 + milliseconds(30), false));
    CHECK(*pacing.next_due() == t0 + milliseconds(50));
    CHECK(pacing.due(PROGRESS, t0 + milliseconds(50), false));
    pacing.written();
    CHECK_FALSE(pacing.next_due().has_value());
    // The next progress waits from its own time.
    CHECK_FALSE(pacing.due(PROGRESS, t0 + milliseconds(70), false));
    CHECK(*pacing.next_due() == t0 + milliseconds(120));
}

TEST_CASE("write pacing: progress waiting goes out with the next acknowledgement") {
    write_pacing pacing(milliseconds(50));
    CHECK_FALSE(pacing.due(PROGRESS, t0, false));
    CHECK(pacing.due(URGENT, t0 + milliseconds(1), false));
}

TEST_CASE("write pacing: stopping writes everything at once") {
    write_pacing pacing(milliseconds(50));
    CHECK(pacing.due(PROGRESS, t0, true));
}

TEST_CASE("write pacing: a delay of zero writes progress at once, as before") {
    write_pacing pacing(milliseconds(0));
    CHECK(pacing.due(PROGRESS, t0, false));
}
