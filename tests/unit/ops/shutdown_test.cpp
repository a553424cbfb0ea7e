// ops/shutdown's drain_state: the in-flight count, the refusal once draining, and the wait.
#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <thread>

#include "ops/shutdown.hpp"

using namespace actionloop;
using namespace std::chrono;

TEST_CASE("drain: activations are counted in and out, a ticket leaves once") {
    drain_state state;
    CHECK(state.enter());
    CHECK(state.enter());
    CHECK(state.in_flight() == 2);
    state.leave();
    {
        in_flight_ticket ticket(state);
        std::optional<in_flight_ticket> moved;
        moved.emplace(std::move(ticket));
        CHECK(state.in_flight() == 1);
    }
    CHECK(state.in_flight() == 0);
    CHECK_FALSE(state.draining());
}

TEST_CASE("drain: once draining, new activations are refused and not counted") {
    drain_state state;
    CHECK(state.enter());
    state.begin_drain();
    CHECK(state.draining());
    CHECK_FALSE(state.enter());
    CHECK(state.in_flight() == 1);
    state.leave();
    CHECK(state.in_flight() == 0);
    CHECK(state.wait_idle(milliseconds(0)));
}

TEST_CASE("drain: wait_idle ends when the last activation leaves, or at its cap") {
    drain_state state;
    REQUIRE(state.enter());
    state.begin_drain();
    CHECK_FALSE(state.wait_idle(milliseconds(20)));  // still one in flight
    std::thread last([&] { state.leave(); });
    CHECK(state.wait_idle(seconds(30)));  // woken by leave(), long before the cap
    last.join();
    CHECK(state.in_flight() == 0);
}
