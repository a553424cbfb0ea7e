// ordering_test.cpp — per-device ordering by ts, stale events, duplicates by id (within a
// batch, across batches, re-delivered batches, after the recent-id ring forgot them).
#include "alert_test_util.hpp"

using namespace alerts;
using namespace alerts::test;

TEST_CASE("events of a device are applied in ts order whatever the batch order") {
    core_harness h;
    // Arrives as online-then-offline but happened offline-then-online: a flap, nothing held.
    h.run(
        {status("cam1", T0 + 10, device_state::online), status("cam1", T0, device_state::offline)},
        T0 + 11);
    CHECK(h.stats().pending == 0);
    CHECK(h.stats().stale == 0);
    CHECK(h.tick(T0 + 1000).empty());
}

TEST_CASE("an event older than the last applied one is stale and skipped") {
    core_harness h;
    h.run({status("cam1", T0 + 10, device_state::online)}, T0 + 10);
    CHECK(h.run({status("cam1", T0, device_state::offline)}, T0 + 11).empty());
    CHECK(h.stats().stale == 1);
    CHECK(h.stats().pending == 0);
}

TEST_CASE("events at the same ts are applied in batch order") {
    core_harness h;
    h.run({status("cam1", T0, device_state::offline), status("cam1", T0, device_state::online)},
          T0);
    CHECK(h.stats().pending == 0);
    CHECK(h.stats().stale == 0);
}

TEST_CASE("a repeated id is a duplicate, in the same batch or a later one") {
    core_harness h;
    auto notes =
        h.run({motion("cam1", T0, "yard", 0.9, "m1"), motion("cam1", T0, "yard", 0.9, "m1")}, T0);
    CHECK(notes.size() == 1);
    CHECK(h.stats().duplicates == 1);
    CHECK(h.run({motion("cam1", T0, "yard", 0.9, "m1")}, T0 + 1).empty());
    CHECK(h.stats().duplicates == 1);
}

TEST_CASE("a re-delivered batch notifies once") {
    core_harness h;
    const std::vector<etag> batch = {motion("cam1", T0, "door", 0.9, "e-1"),
                                     status("cam2", T0 + 1, device_state::offline, "e-2"),
                                     heartbeat("cam2", T0 + 30, device_state::offline, "e-3")};
    CHECK(h.run(batch, T0 + 31).size() == 1);
    CHECK(h.run(batch, T0 + 32).empty());
    CHECK(h.stats().duplicates == 3);
    CHECK(h.tick(T0 + 301).size() == 1);  // the Offline, once
    CHECK(h.run(batch, T0 + 400).empty());
}

TEST_CASE("the same id on two devices is not a duplicate") {
    core_harness h;
    h.run({status("cam1", T0, device_state::offline, "x"),
           status("cam2", T0, device_state::offline, "x")},
          T0);
    CHECK(h.stats().duplicates == 0);
    CHECK(h.stats().pending == 2);
}

TEST_CASE("a duplicate forgotten by the recent-id ring is still caught by the device") {
    nlohmann::json cfg = sample_config();
    cfg["recent_ids"] = 2;
    core_harness h({}, cfg);
    h.run({motion("cam1", T0, "yard", 0.9, "a")}, T0);
    h.run({heartbeat("cam2", T0, device_state::online, "b"),
           heartbeat("cam3", T0, device_state::online, "c")},
          T0);
    // "a" left the ring; cam1's last applied event is still "a" at T0.
    CHECK(h.run({motion("cam1", T0, "yard", 0.9, "a")}, T0 + 1).empty());
    CHECK(h.stats().duplicates == 1);
}

TEST_CASE("events without an id are never duplicates") {
    core_harness h;
    auto notes = h.run({motion("cam1", T0, "yard", 0.9), motion("cam1", T0, "yard", 0.9)}, T0);
    CHECK(notes.size() == 2);
    CHECK(h.stats().duplicates == 0);
}
