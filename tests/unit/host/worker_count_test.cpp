// OW_WORKERS resolved at /init (host/worker_count.hpp): the action's own value wins, auto is
// the CPU count, OW_MAX_WORKERS caps, an invalid value is an error naming it.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "host/worker_count.hpp"

using actionloop::resolve_worker_count;
using actionloop::worker_count;

namespace {

const auto NO_CPUS = [] {
    FAIL("the CPU count was read for a value that is not auto");
    return 0u;
};

worker_count resolve(const std::string& proxy, const std::optional<std::string>& init = {},
                     unsigned max = 64) {
    return resolve_worker_count(proxy, init, max, NO_CPUS);
}

}  // namespace

TEST_CASE("worker_count: unset is one worker") {
    const worker_count none = resolve("");
    CHECK(none.count == 1);
    CHECK(none.error.empty());
    CHECK_FALSE(none.capped);
    CHECK(resolve("", std::string("")).count == 1);  // an empty /init value is not given
    CHECK(resolve("  ").count == 1);
}

TEST_CASE("worker_count: a number, from the proxy or from /init's env (which wins)") {
    CHECK(resolve("4").count == 4);
    CHECK(resolve(" 8 ").count == 8);
    CHECK(resolve("2", std::string("3")).count == 3);
    CHECK(resolve("", std::string("5")).count == 5);
    CHECK(resolve("6", std::string(" ")).count == 6);  // blank: the proxy's
    CHECK(resolve("1").count == 1);
}

TEST_CASE("worker_count: auto is the CPU count, asked only then") {
    int asked = 0;
    const auto three = [&] {
        ++asked;
        return 3u;
    };
    CHECK(resolve_worker_count("auto", {}, 64, three).count == 3);
    CHECK(resolve_worker_count("2", std::string("auto"), 64, three).count == 3);
    CHECK(asked == 2);
    CHECK(resolve_worker_count("auto", {}, 64, [] { return 0u; }).count == 1);  // at least 1
}

TEST_CASE("worker_count: OW_MAX_WORKERS caps, wherever the value came from") {
    const worker_count capped = resolve("100", {}, 64);
    CHECK(capped.count == 64);
    CHECK(capped.capped);
    CHECK(resolve("", std::string("9"), 4).count == 4);
    CHECK(resolve("99999999999999999999999", {}, 8).count == 8);  // saturates, no overflow
    CHECK(resolve_worker_count("auto", {}, 2, [] { return 16u; }).count == 2);
    CHECK_FALSE(resolve("4", {}, 4).capped);
    CHECK(resolve("3", {}, 0).count == 1);  // a cap of 0 is read as 1
}

TEST_CASE("worker_count: an invalid value is an error naming the variable and the value") {
    const std::string hint = " is not a worker count (a number from 1, or auto)";
    for (const std::string value : {"0", "-1", "many", "4x", "1.5", "+2", "AUTO", "00"}) {
        CAPTURE(value);
        const worker_count bad = resolve(value);
        std::string expected = "OW_WORKERS=\"";
        expected += value + "\"" + hint;
        CHECK(bad.error == expected);
    }
    CHECK(resolve("4", std::string("none")).error == "OW_WORKERS=\"none\" (in /init's env)" + hint);
}
