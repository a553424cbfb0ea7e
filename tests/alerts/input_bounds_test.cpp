// input_bounds_test.cpp — the bounds on what an invoker sends (docs/alerts.md, "Batch",
// "Timestamps"): a batch over ALERT_MAX_BATCH_ETAGS refused in the parser's one pass, ETags
// whose ts is too far from now rejected with their index and reason, and a device damaged by
// a future ts before the bound existed repaired by its next ETag.
#include "alert_test_util.hpp"
#include "core/batch_text.hpp"
#include "core/state_store.hpp"
#include "core/ts_bounds.hpp"

using namespace alerts;
using namespace alerts::test;

namespace {

std::string status_text(const std::string& device, const std::string& ts) {
    return R"({"account":"acct1","device":")" + device + R"(","type":"status","ts":)" + ts +
           R"(,"state":"offline"})";
}

std::string parse_error(const std::string& text, std::size_t max_etags) {
    parsed_batch b;
    value_members members;
    try {
        parse_value_text(text, b, members, max_etags);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

std::vector<std::size_t> indices(const parsed_batch& b) {
    std::vector<std::size_t> out;
    for (const rejection& r : b.rejected) out.push_back(r.index);
    return out;
}

}  // namespace

TEST_CASE("a batch over the bound is refused at the first ETag past it, the rest unread") {
    const std::string three =
        status_text("a", "1") + "," + status_text("b", "2") + "," + status_text("c", "3");
    const std::string refused =
        "the batch has more than 3 ETags (ALERT_MAX_BATCH_ETAGS): nothing was applied; send "
        "them as batches of at most 3 ETags, in order";
    // What follows the fourth ETag's start is not JSON: the parser never gets there.
    CHECK(parse_error(R"({"etags":[)" + three + R"(,{not json at all)", 3) == refused);
    CHECK(parse_error(R"({"etags":[)" + three + "]}", 3).empty());
    CHECK(parse_error(R"({"etags":[)" + three + "]}", 2) ==
          "the batch has more than 2 ETags (ALERT_MAX_BATCH_ETAGS): nothing was applied; send "
          "them as batches of at most 2 ETags, in order");
    // Malformed ETags count: the bound is on the array's elements.
    CHECK(parse_error(R"({"etags":[1,2,3,4]})", 3) == refused);
    CHECK(parse_error(R"({"now": 1e999, "etags":[]})", 3) == "'now' must be a number");
}

TEST_CASE("ETags too far from now are rejected in index order with their reason") {
    const std::string text = R"({"now": 1000, "etags": [)" + status_text("ok1", "1000") +
                             R"(, {"account": "acct1"}, )" + status_text("ms", "1000000") + ", " +
                             status_text("edge", "1300") + ", " + status_text("zero", "0") +
                             R"(, 7, )" + status_text("old", "-604800") + "]}";
    parsed_batch b;
    value_members members;
    parse_value_text(text, b, members);
    REQUIRE(indices(b) == std::vector<std::size_t>{1, 5});
    const ts_rejections n = reject_out_of_range(b, 1000, ts_bounds{300, 1000});
    CHECK(n.future == 1);
    CHECK(n.past == 1);
    CHECK(indices(b) == std::vector<std::size_t>{1, 2, 5, 6});
    CHECK(b.rejected[1].error ==
          "etag 2: ts 1000000 is more than 300 s after now (1000): is it in milliseconds? "
          "(ALERT_MAX_FUTURE_SECONDS)");
    CHECK(b.rejected[3].error ==
          "etag 6: ts -604800 is more than 1000 s before now (1000) (ALERT_MAX_PAST_SECONDS)");
    // Both bounds are inclusive: `edge` (now + 300) and `zero` (now - 1000) stay.
    REQUIRE(b.etags.size() == 3);
    CHECK(b.etags[0].device == "ok1");
    CHECK(b.etags[1].device == "edge");
    CHECK(b.etags[2].device == "zero");
    // Nothing out of range: nothing moves.
    CHECK(reject_out_of_range(b, 1000, ts_bounds{300, 1000}).future == 0);
    CHECK(b.etags.size() == 3);
}

TEST_CASE("a device damaged by a future ts before the bound is repaired by its next ETag") {
    // The damage, as the code before the bound did it: a status and a motion in milliseconds.
    core_harness damaged;
    const double ms = T0 * 1000;
    damaged.run({status("cam1", ms, device_state::offline, "s0"),
                 motion("cam1", ms + 5, "door", 0.9, "m0")},
                T0);
    core_harness before;  // still without the bound: every later ETag is stale
    core_harness repaired(core_options{"", true, true, 300});
    core_restorer into_before(before.core);
    core_restorer into_repaired(repaired.core);
    damaged.core.export_all(into_before);
    damaged.core.export_all(into_repaired);
    const std::vector<etag> next = {status("cam1", T0 + 10, device_state::offline, "s1"),
                                    motion("cam1", T0 + 20, "door", 0.9, "m1")};
    before.run(next, T0 + 20);
    CHECK(before.stats().stale == 2);

    const std::vector<note> alert = repaired.run(next, T0 + 20);
    CHECK(repaired.stats().stale == 0);
    CHECK_FALSE(repaired.core.changes().devices.empty());  // the repaired record is stored
    REQUIRE(alert.size() == 1);  // the region's cooldown from the future no longer holds
    CHECK(alert[0].type == "Alert");
    CHECK(repaired.core.pending() == 1);
    // The hold begins at the repairing ETag: Offline 300 s after it.
    CHECK(repaired.tick(T0 + 309).empty());
    const std::vector<note> offline = repaired.tick(T0 + 310);
    REQUIRE(offline.size() == 1);
    CHECK(offline[0].type == "Offline");
    CHECK(offline[0].event_ts == T0 + 10);
}
