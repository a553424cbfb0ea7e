// The finished ids remembered for 400 and 410: what each became, the timed-out one consumed
// by its first late post, the oldest forgotten past the bound.
#include <doctest/doctest.h>

#include "lambda_api/recent_ids.hpp"

using actionloop::lambda_api::recent_ids;
using state = recent_ids::state;

TEST_CASE("recent_ids: an id is found as it was remembered until consumed") {
    recent_ids ids(10);
    ids.remember("a", state::answered);
    ids.remember("b", state::timed_out);
    CHECK(ids.find("a") == state::answered);
    CHECK(ids.find("b") == state::timed_out);
    CHECK_FALSE(ids.find("c").has_value());
    ids.consume("b");
    CHECK(ids.find("b") == state::answered);
    ids.consume("c");  // unknown: nothing
    CHECK(ids.size() == 2);
}

TEST_CASE("recent_ids: past its capacity the oldest id is forgotten first") {
    recent_ids ids(2);
    ids.remember("a", state::answered);
    ids.remember("b", state::answered);
    ids.remember("c", state::timed_out);
    CHECK_FALSE(ids.find("a").has_value());
    CHECK(ids.find("b") == state::answered);
    CHECK(ids.find("c") == state::timed_out);
    CHECK(ids.size() == 2);
}

TEST_CASE("recent_ids: a capacity of 0 remembers nothing") {
    recent_ids ids(0);
    ids.remember("a", state::answered);
    CHECK_FALSE(ids.find("a").has_value());
    CHECK(ids.size() == 0);
}

TEST_CASE("recent_ids: the ids stay found while many come and go") {
    recent_ids ids(100);
    for (int i = 0; i < 1000; ++i) ids.remember(std::to_string(i), state::answered);
    CHECK(ids.size() == 100);
    CHECK_FALSE(ids.find("899").has_value());
    for (int i = 900; i < 1000; ++i) REQUIRE(ids.find(std::to_string(i)) == state::answered);
}
