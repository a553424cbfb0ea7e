// When the loop and the action switch to SCHED_BATCH and back (batch_scheduling.hpp): pure
// decisions, then the policy applied to a thread of this test.
#include <doctest/doctest.h>

#include <sched.h>

#include <thread>

#include "engine/batch_scheduling.hpp"

using namespace actionloop;
using change = batch_switch::change;

TEST_CASE("batch_switch: one activation at a time never switches") {
    batch_switch s;
    for (int i = 0; i < 1000; ++i) REQUIRE(s.wrote(1) == change::none);
    CHECK_FALSE(s.batch());
}

TEST_CASE("batch_switch: overlap switches at once, once") {
    batch_switch s;
    CHECK(s.wrote(1) == change::none);
    CHECK(s.wrote(2) == change::to_batch);
    CHECK(s.batch());
    CHECK(s.wrote(8) == change::none);
    CHECK(s.wrote(256) == change::none);
    CHECK(s.batch());
}

TEST_CASE("batch_switch: back after ALONE_WRITES lone writes in a row, not fewer") {
    batch_switch s;
    REQUIRE(s.wrote(3) == change::to_batch);
    for (unsigned i = 1; i < batch_switch::ALONE_WRITES; ++i) REQUIRE(s.wrote(1) == change::none);
    CHECK(s.wrote(2) == change::none);  // overlap again: the count starts over
    for (unsigned i = 1; i < batch_switch::ALONE_WRITES; ++i) REQUIRE(s.wrote(1) == change::none);
    CHECK(s.batch());
    CHECK(s.wrote(1) == change::to_normal);
    CHECK_FALSE(s.batch());
    CHECK(s.wrote(0) == change::none);
    CHECK(s.wrote(2) == change::to_batch);  // and again
}

TEST_CASE("set_batch_policy: the calling thread goes to SCHED_BATCH and back") {
    std::thread([] {
        REQUIRE(sched_getscheduler(0) == SCHED_OTHER);
        CHECK(set_batch_policy(0, true));
        CHECK(sched_getscheduler(0) == SCHED_BATCH);
        CHECK(set_batch_policy(0, false));
        CHECK(sched_getscheduler(0) == SCHED_OTHER);
        CHECK_FALSE(set_batch_policy(2147483647, true));  // no such thread
    }).join();
}
