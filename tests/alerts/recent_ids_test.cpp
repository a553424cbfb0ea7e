// recent_ids_test.cpp — the bounded recent-id set: membership, FIFO eviction, order.
#include "core/recent_ids.hpp"

#include <doctest/doctest.h>

#include "core/config.hpp"

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

// B5 (docs/protocol.md): the capacity comes from the config; a hostile one must not make the
// action allocate without bound (1e12 asked for 8 TB) nor hit the undefined cast of a double
// above 2^64.
TEST_CASE("config.recent_ids is bounded: above MAX_RECENT_IDS or fractional it is refused") {
    using alerts::MAX_RECENT_IDS;
    const auto with_ids = [](nlohmann::json ids) {
        return nlohmann::json{{"recent_ids", std::move(ids)},
                              {"accounts", nlohmann::json::object()}};
    };
    CHECK(MAX_RECENT_IDS == 1048576);
    CHECK(alerts::parse_config(with_ids(MAX_RECENT_IDS)).recent_ids == MAX_RECENT_IDS);
    CHECK(alerts::parse_config(with_ids(0)).recent_ids == 0);
    CHECK(alerts::parse_config(with_ids(2)).recent_ids == 2);
    CHECK(alerts::parse_config(nlohmann::json{{"accounts", nlohmann::json::object()}}).recent_ids ==
          65536);
    const std::string refused =
        "config: config.recent_ids must be a whole number from 0 to 1048576";
    for (const nlohmann::json& ids : {nlohmann::json(MAX_RECENT_IDS + 1), nlohmann::json(1e12),
                                      nlohmann::json(1e30), nlohmann::json(2.5)}) {
        CAPTURE(ids);
        CHECK_THROWS_WITH_AS(alerts::parse_config(with_ids(ids)), refused.c_str(),
                             alerts::config_error);
    }
    CHECK_THROWS_AS(alerts::parse_config(with_ids(-1)), alerts::config_error);
    recent_ids largest(MAX_RECENT_IDS);  // what the largest accepted config costs
    CHECK(largest.memory_bytes() <= (24u << 20));
}
