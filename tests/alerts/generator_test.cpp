// generator_test.cpp — the stream generator: deterministic by seed, 13 ETags per device per
// minute, mostly heartbeats, a config the core accepts, and duplicates when asked.
#include "alert_test_util.hpp"
#include "generator/stream_generator.hpp"

using namespace alerts;

TEST_CASE("the generator is deterministic and produces the documented mix") {
    generator_options o;
    o.devices = 2000;
    o.seed = 7;
    stream_generator a(o), b(o);
    const auto first = a.next_minute();
    const auto same = b.next_minute();
    REQUIRE(first.size() == same.size());
    CHECK(a.batch_json(first.data(), 50, 1) == b.batch_json(same.data(), 50, 1));
    CHECK(first.size() >= 2000 * 13);
    CHECK(first.size() <= 2000 * 14);
    std::size_t heartbeats = 0, motion = 0;
    for (const auto& e : first) {
        heartbeats += e.type == etag_type::heartbeat;
        motion += e.type == etag_type::motion;
    }
    CHECK(heartbeats > first.size() * 9 / 10);
    CHECK(motion > 0);
    for (std::size_t i = 1; i < first.size(); ++i) CHECK(first[i - 1].arrival <= first[i].arrival);
}

TEST_CASE("generated batches parse and run through the core with the generated config") {
    generator_options o;
    o.devices = 500;
    o.duplicate_rate = 0.05;
    o.reorder_window = 3;
    stream_generator gen(o);
    alert_core core;
    core.set_config(std::make_shared<const alert_config>(parse_config(gen.config())));
    std::vector<etag> etags;
    std::vector<char> ids;
    std::uint64_t duplicates = 0, stale = 0, alerts_sent = 0;
    for (int m = 0; m < 3; ++m) {
        const auto& minute = gen.next_minute();
        for (std::size_t i = 0; i < minute.size(); i += 1000) {
            const std::size_t n = std::min<std::size_t>(1000, minute.size() - i);
            gen.to_etags(minute.data() + i, n, etags, ids);
            const auto& r = core.process(etags, minute[i + n - 1].arrival);
            duplicates += r.stats.duplicates;
            stale += r.stats.stale;
            alerts_sent += r.notifications.size();
        }
    }
    CHECK(core.device_count() == 500);
    CHECK(duplicates > 0);
    CHECK(alerts_sent > 0);
    CHECK(stale < duplicates * 10 + 100);
}

TEST_CASE("alertgen --sites: each bridge's group is a site, its cameras take it from the bridge") {
    generator_options o;
    o.devices = 400;
    o.accounts = 2;
    o.bridge_size = 39;
    o.sites = true;
    const alert_config cfg = parse_config(stream_generator(o).config());
    std::size_t sited = 0;
    for (const device_config& d : cfg.devices) {
        const site_config* site = cfg.site_of(d);
        if (!site) continue;
        ++sited;
        const std::string& bridge =
            d.bridge_cfg >= 0 ? cfg.devices[static_cast<std::size_t>(d.bridge_cfg)].id : d.id;
        CHECK(site->id == "site" + bridge);
    }
    CHECK(sited == 400);
    CHECK(cfg.sites.size() == 10);  // 400 devices in groups of 40
}
