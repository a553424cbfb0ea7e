// write_pacing: acknowledgements and dead letters are written at once; progress alone waits
// a little, so that many deliveries' progress goes to Redis in one round trip.
#include "gateway/ledger/write_pacing.hpp"

#include <chrono>

#include <doctest/doctest.h>

using namespace alerts::gateway;
using namespace std::chrono;

namespace {

const write_pacing::time_point t0{};

ledger_writes progress_only() {
    ledger_writes writes;
    writes.progress.push_back({"1-0", {{"email", "delivered"}}});
    return writes;
}

}  // namespace

TEST_CASE("write pacing: nothing to write is never due and sets no wake-up") {
    write_pacing pacing(milliseconds(50));
    CHECK_FALSE(pacing.due(ledger_writes{}, t0, false));
    CHECK_FALSE(pacing.next_due().has_value());
}

TEST_CASE("write pacing: an acknowledgement or a dead letter is written at once") {
    write_pacing pacing(milliseconds(50));
    ledger_writes ack;
    ack.acknowledge.push_back("1-0");
    CHECK(pacing.due(ack, t0, false));
    ledger_writes letter;
    letter.dead_letters.push_back(dead_letter{"2-0", "k", "email", "", "HTTP 500", 3, "{}"});
    CHECK(pacing.due(letter, t0, false));
}

TEST_CASE("write pacing: progress alone waits up to the delay from the first one unwritten") {
    write_pacing pacing(milliseconds(50));
    CHECK_FALSE(pacing.due(progress_only(), t0, false));
    REQUIRE(pacing.next_due().has_value());
    CHECK(*pacing.next_due() == t0 + milliseconds(50));
    // More progress later does not move the time: the first one waits at most the delay.
    CHECK_FALSE(pacing.due(progress_only(), t0 + milliseconds(30), false));
    CHECK(*pacing.next_due() == t0 + milliseconds(50));
    CHECK(pacing.due(progress_only(), t0 + milliseconds(50), false));
    pacing.written();
    CHECK_FALSE(pacing.next_due().has_value());
    // The next progress waits from its own time.
    CHECK_FALSE(pacing.due(progress_only(), t0 + milliseconds(70), false));
    CHECK(*pacing.next_due() == t0 + milliseconds(120));
}

TEST_CASE("write pacing: progress waiting goes out with the next acknowledgement") {
    write_pacing pacing(milliseconds(50));
    CHECK_FALSE(pacing.due(progress_only(), t0, false));
    ledger_writes both = progress_only();
    both.acknowledge.push_back("2-0");
    CHECK(pacing.due(both, t0 + milliseconds(1), false));
}

TEST_CASE("write pacing: stopping writes everything at once") {
    write_pacing pacing(milliseconds(50));
    CHECK(pacing.due(progress_only(), t0, true));
}

TEST_CASE("write pacing: a delay of zero writes progress at once, as before") {
    write_pacing pacing(milliseconds(0));
    CHECK(pacing.due(progress_only(), t0, false));
}
