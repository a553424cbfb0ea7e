// The Redis store's record codec (actions/alerts/redis/redis_records.cpp), the text every
// container reads back from keys anyone with access to Redis may have written: an input is
// taken as a device record, as a device key and as a key to log.
// Invariants:
//  - decode_redis_value either refuses (and hands the sink nothing) or hands it one device and
//    its cooldowns, named by the account and device it was given;
//  - what it accepted encodes to a record that decodes to the same text again (a fixed point
//    after one round: older versions' records are rewritten as the current one);
//  - a record it accepted, restored into a real core, is then decided on without a crash (a
//    status, a motion and a tick), and exports back;
//  - parse_redis_device_key accepts exactly the keys redis_device_key makes: what it splits
//    rebuilds the same key;
//  - printable_key leaves no control byte (no CR/LF: a log line stays one line) and is bounded.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/alert_core.hpp"
#include "core/config.hpp"
#include "fuzz_check.hpp"
#include "redis/damaged_keys.hpp"
#include "redis/redis_records.hpp"

namespace {

using namespace alerts;

// Copies what decode_redis_value hands over (its views die with the call).
struct copy_sink : record_sink {
    int devices = 0;
    device_record device;
    std::vector<double> changes;
    std::vector<std::string> regions;
    std::vector<double> alerts;
    group_record group;  // a site's group (version 4): copied, as the rest
    std::vector<group_change_view> group_changes;
    void on_device(const device_record& r) override {
        ++devices;
        FUZZ_CHECK(r.account == "acct1" && r.device == "cam1");
        device = r;
        changes.assign(r.changes, r.changes + r.change_count);
        device.changes = changes.data();
        if (r.group) {
            group = *r.group;
            group_changes.assign(r.group->changes, r.group->changes + r.group->change_count);
            group.changes = group_changes.data();
            device.group = &group;
        }
    }
    void on_cooldown(const cooldown_record& r) override {
        FUZZ_CHECK(devices == 1);
        FUZZ_CHECK(r.account == "acct1" && r.device == "cam1");
        regions.emplace_back(r.region);
        alerts.push_back(r.last_alert);
    }
    void on_id(std::uint64_t) override { FUZZ_CHECK(false); }

    std::string encode() const {
        redis_value_encoder encoder;
        encoder.on_device(device);
        for (std::size_t i = 0; i < regions.size(); ++i) {
            cooldown_record c;
            c.region = regions[i];
            c.last_alert = alerts[i];
            encoder.on_cooldown(c);
        }
        return encoder.finish();
    }
};

// Restores into a core, as the store does, and decides a little on it.
struct core_sink : record_sink {
    explicit core_sink(alert_core& c) : core(c) {}
    void on_device(const device_record& r) override { core.restore_device(r); }
    void on_cooldown(const cooldown_record& r) override { core.restore_cooldown(r); }
    void on_id(std::uint64_t id) override { core.restore_id(id); }
    alert_core& core;
};

// cam1 is at site "hq", whose account groups (docs/alerts.md, "Grouping"): a record may be
// restored as cam1's or as the site's group's.
const std::shared_ptr<const alert_config>& config() {
    static const auto c = std::make_shared<const alert_config>(parse_config(nlohmann::json::parse(
        R"({"accounts": {"acct1": {"recipients": ["ops@a1"], "sites": {"hq": {}},
            "devices": {"cam1": {"site": "hq", "regions": {"door": {"cooldown": 60}}}}}},
            "grouping": {"group_wait": 30, "group_interval": 60},
            "reminders": {"offline": [600]}})")));
    return c;
}

etag event(etag_type type, double ts) {
    etag e;
    e.type = type;
    e.account = "acct1";
    e.device = "cam1";
    e.ts = ts;
    e.state = device_state::offline;
    e.region = "door";
    e.magnitude = 1;
    e.id = type == etag_type::motion ? "m" : "s";
    return e;
}

// Restores the record as `device`'s (cam1, or the group of its site), decides on it (cam1 goes
// down, moves, and its outage matures into the group), and exports it back.
void decide_on(std::string_view text, const std::string& device) {
    alert_core core;
    core.set_config(config());
    core_sink sink(core);
    FUZZ_CHECK(decode_redis_value(text, "acct1", device, sink));
    const double now = 1764460800;
    core.process({event(etag_type::status, now), event(etag_type::motion, now + 1)}, now + 1);
    core.process({}, now + 4000);
    const std::uint32_t d = core.find_device("acct1", device);
    if (d == std::numeric_limits<std::uint32_t>::max()) return;
    redis_value_encoder encoder;
    core.export_device(d, encoder);
    core.export_cooldowns_of(d, encoder);
    struct any_sink : record_sink {
        void on_device(const device_record&) override {}
        void on_cooldown(const cooldown_record&) override {}
        void on_id(std::uint64_t) override {}
    } again;
    FUZZ_CHECK(decode_redis_value(encoder.finish(), "acct1", device, again));
}

void check_record(std::string_view text) {
    copy_sink first;
    if (!decode_redis_value(text, "acct1", "cam1", first)) {
        FUZZ_CHECK(first.devices == 0 && first.regions.empty());
        return;
    }
    FUZZ_CHECK(first.devices == 1);
    const std::string once = first.encode();
    copy_sink second;
    FUZZ_CHECK(decode_redis_value(once, "acct1", "cam1", second));
    FUZZ_CHECK(second.encode() == once);
    decide_on(text, "cam1");
    decide_on(text, group_device_id("hq"));
}

void check_key(std::string_view key) {
    std::string_view account, device;
    if (parse_redis_device_key("alerts:", key, account, device)) {
        FUZZ_CHECK(redis_device_key("alerts:", account, device) == key);
    }
    const std::string shown = printable_key(key, 64);
    for (const char c : shown) {
        const auto u = static_cast<unsigned char>(c);
        FUZZ_CHECK(u >= 0x20 && u != 0x7f);  // bytes past 0x7f: only the "…" of a cut key
    }
    FUZZ_CHECK(shown.size() <= 64 * 4 + 32);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_record(text);
    check_key(text);
    return 0;
}
