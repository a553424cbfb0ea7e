// recent_ids_test.cpp — the bounded recent-id set: membership, FIFO eviction, order.
#include "core/recent_ids.hpp"

#include <doctest/doctest.h>

using alerts::recent_ids;

TEST_CASE("recent ids remembers the last `capacity` ids, oldest first out") {
    recent_ids ids(3);
    for (std::uint64_t i = 1; i <= 3; ++i) ids.insert(i * 1000);
    CHECK(ids.contains(1000));
    ids.insert(4000);
    CHECK_FALSE(ids.contains(1000));
    CHECK(ids.contains(2000));
    CHECK(ids.contains(4000));
    std::vector<std::uint64_t> order;
    ids.for_each([&](std::uint64_t id) { order.push_back(id); });
    CHECK(order == std::vector<std::uint64_t>{2000, 3000, 4000});
}

TEST_CASE("recent ids survives heavy churn with colliding probe chains") {
    recent_ids ids(100);
    for (std::uint64_t i = 0; i < 10000; ++i) {
        ids.insert((i % 7) << 7 | (i << 20));  // many keys share a home slot
        CHECK(ids.size() == std::min<std::size_t>(i + 1, 100));
    }
    for (std::uint64_t i = 9900; i < 10000; ++i) CHECK(ids.contains((i % 7) << 7 | (i << 20)));
    for (std::uint64_t i = 9000; i < 9900; ++i) CHECK_FALSE(ids.contains((i % 7) << 7 | (i << 20)));
}
