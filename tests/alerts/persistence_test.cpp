// persistence_test.cpp — the state that survives a restart: the record codec, and the file
// store round trip (write state, build a new core from the store, carry on identically),
// torn journal tails, compaction, and heartbeats writing nothing.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "alert_test_util.hpp"
#include "core/record_codec.hpp"
#include "runtime/file_store.hpp"

using namespace alerts;
using namespace alerts::test;
namespace fs = std::filesystem;

namespace {

struct temp_dir {
    temp_dir() {
        path = fs::temp_directory_path() /
               ("alerts-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::remove_all(path);
    }
    ~temp_dir() { fs::remove_all(path); }
    std::string str() const { return path.string(); }
    fs::path path;
    static inline int counter = 0;
};

struct counting_sink : record_sink {
    void on_device(const device_record& r) override { devices.emplace_back(r.device); }
    void on_cooldown(const cooldown_record& r) override { regions.emplace_back(r.region); }
    void on_id(std::uint64_t) override { ++ids; }
    std::vector<std::string> devices, regions;
    int ids = 0;
};

// A scenario that leaves a pending hold, a notified-offline device, a cooldown and ids.
void drive_before_restart(core_harness& h, state_store& store) {
    h.run({status("cam1", T0, device_state::offline, "s1")}, T0);
    store.commit(h.core);
    h.tick(T0 + 300);  // cam1: Offline sent
    store.commit(h.core);
    h.run({status("cam2", T0 + 310, device_state::offline, "s2"),
           motion("cam1", T0 + 320, "door", 0.9, "m1")},
          T0 + 320);
    store.commit(h.core);
}

std::vector<note> drive_after_restart(core_harness& h) {
    std::vector<note> all;
    auto add = [&](std::vector<note> n) { all.insert(all.end(), n.begin(), n.end()); };
    add(h.run({motion("cam1", T0 + 320, "door", 0.9, "m1")}, T0 + 330));  // re-delivered
    add(h.run({motion("cam1", T0 + 340, "door", 0.9, "m2")}, T0 + 340));  // in cooldown
    add(h.run({status("cam1", T0 + 350, device_state::online, "s3")}, T0 + 350));
    add(h.tick(T0 + 620));  // cam2 Offline (due 610), cam1 Online (due 445)
    return all;
}

}  // namespace

TEST_CASE("the codec round-trips records and stops at a torn frame") {
    frame_encoder enc;
    enc.on_device({"acct1", "cam1", device_state::offline, device_state::online, 10, 20, 7});
    enc.on_cooldown({"acct1", "cam1", "door", 30});
    enc.on_id(42);
    std::string data = enc.finish(1);
    enc.on_device({"acct1", "cam2", device_state::online, device_state::offline, 1, 2, 3});
    const std::string second = enc.finish(2);
    data += second.substr(0, second.size() - 1);  // torn

    counting_sink sink;
    const decode_result r = decode_frames(data, 0, sink);
    CHECK(r.frames == 1);
    CHECK(r.last_seq == 1);
    CHECK(r.valid_bytes == data.size() - second.size() + 1);
    CHECK(sink.devices == std::vector<std::string>{"cam1"});
    CHECK(sink.regions == std::vector<std::string>{"door"});
    CHECK(sink.ids == 1);

    counting_sink skip;
    CHECK(decode_frames(data, 1, skip).frames == 1);
    CHECK(skip.devices.empty());
}

TEST_CASE("a core rebuilt from the file store carries on exactly like the one it replaces") {
    temp_dir dir;
    core_harness reference;
    memory_store none;
    drive_before_restart(reference, none);
    const auto expected = drive_after_restart(reference);
    REQUIRE(expected.size() == 2);
    CHECK(expected[0].type == "Online");
    CHECK(expected[1].type == "Offline");

    {
        core_harness before;
        file_store store({dir.str()});
        store.load(before.core);
        drive_before_restart(before, store);
    }  // the process dies: nothing but the directory survives
    core_harness after;
    file_store store({dir.str()});
    store.load(after.core);
    CHECK(after.core.pending() == 1);
    const auto got = drive_after_restart(after);
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i].type == expected[i].type);
        CHECK(got[i].device == expected[i].device);
        CHECK(got[i].event_ts == expected[i].event_ts);
        CHECK(got[i].publish_ts == expected[i].publish_ts);
    }
    CHECK(after.stats().pending == 0);
}

TEST_CASE("same-state heartbeats write nothing to the journal") {
    temp_dir dir;
    core_harness h;
    file_store store({dir.str()});
    store.load(h.core);
    h.run({heartbeat("cam1", T0, device_state::online, "h1")}, T0);
    store.commit(h.core);
    CHECK(store.journal_bytes() == 0);
    h.run({status("cam1", T0 + 1, device_state::offline, "s1")}, T0 + 1);
    store.commit(h.core);
    CHECK(store.journal_bytes() > 0);
}

TEST_CASE("compaction folds the journal into a snapshot without losing state") {
    temp_dir dir;
    {
        core_harness h;
        file_store store({dir.str()});
        store.load(h.core);
        drive_before_restart(h, store);
        store.compact(h.core);
        CHECK(store.journal_bytes() == 0);
        h.run({status("cam3", T0 + 330, device_state::offline)}, T0 + 330);
        store.commit(h.core);
    }
    core_harness after;
    file_store store({dir.str()});
    store.load(after.core);
    CHECK(after.core.pending() == 2);  // cam2 from the snapshot, cam3 from the journal
    CHECK(after.run({motion("cam1", T0 + 320, "door", 0.9, "m1")}, T0 + 331).empty());
    CHECK(after.stats().duplicates == 1);
}

TEST_CASE("a torn journal tail is dropped and the journal stays appendable") {
    temp_dir dir;
    {
        core_harness h;
        file_store store({dir.str()});
        store.load(h.core);
        h.run({status("cam1", T0, device_state::offline)}, T0);
        store.commit(h.core);
    }
    std::ofstream(dir.path / "journal", std::ios::app) << "ALJ1garbage";
    {
        core_harness h;
        file_store store({dir.str()});
        store.load(h.core);
        CHECK(h.core.pending() == 1);
        h.run({status("cam2", T0 + 1, device_state::offline)}, T0 + 1);
        store.commit(h.core);
    }
    core_harness h;
    file_store store({dir.str()});
    store.load(h.core);
    CHECK(h.core.pending() == 2);
}
