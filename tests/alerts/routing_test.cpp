// routing_test.cpp — the routing tree applied by the core (docs/alerts.md, "Routing"): a tree
// whose root takes everything keeps today's recipients exactly (the old overrides are the
// default receiver), and a mixed stream reaches the receivers its routes name, with continue,
// send_resolved, time intervals by Berlin's clock and labels; the same in every store.
#include <set>

#include "alert_test_util.hpp"
#include "core/result_json.hpp"
#include "generator/stream_generator.hpp"
#include "redis/redis_store.hpp"
#include "redis_server.hpp"
#include "runtime/redis_url.hpp"
#include "store_identity.hpp"

using namespace alerts;
using namespace alerts::test;
using json = nlohmann::json;

namespace {

constexpr double JAN04 = 1799020800;  // 2027-01-04 00:00 UTC, a Monday (01:00 in Berlin)
constexpr double H = 3600;

// The notifications of a generated stream (outages, flaps, motion, bridges) through `config`.
std::multiset<std::string> generated(const json& config, const generator_options& o, int minutes) {
    stream_generator gen(o);
    batch_list batches;
    std::vector<char> ids;
    std::vector<std::vector<char>> keep;
    for (int m = 0; m < minutes; ++m) {
        const std::vector<gen_etag>& minute = gen.next_minute();
        std::vector<etag> batch;
        keep.emplace_back();
        gen.to_etags(minute.data(), minute.size(), batch, keep.back());
        batches.push_back({batch, gen.minute_start()});
    }
    return through_memory(config, batches);
}

std::multiset<std::string> without_receivers(const std::multiset<std::string>& texts) {
    std::multiset<std::string> out;
    for (const std::string& t : texts) {
        json j = json::parse(t);
        CHECK(j["receivers"] == json{"default"});
        CHECK_FALSE(j.contains("webhooks"));
        j.erase("receivers");
        out.insert(j.dump());
    }
    return out;
}

// sample_config() with three receivers and the tree of docs/alerts.md's example: high and
// critical motion at night to the guard desk's webhook (and on), Offlines (and their Onlines,
// not sent resolved) to facilities, everything of acct1's perimeter cameras to the integrator.
json routed_config() {
    json c = sample_config();
    c["time_intervals"] = json::parse(R"({"night": [{"times": [
        {"start_time": "22:00", "end_time": "24:00"}, {"start_time": "00:00", "end_time": "06:00"}],
        "location": "Europe/Berlin"}]})");
    c["receivers"] = json::parse(R"({
        "guard-desk": {"webhooks": ["guard"]},
        "facilities": {"email": ["facilities@a1"]},
        "integrator": {"email": ["ops@integrator"], "webhooks": ["integrator-hook"]}})");
    c["route"] = json::parse(R"({"routes": [
        {"match": {"notifType": ["Alert", "PossibleTamper"], "level": ["high", "critical"]},
         "active_time_intervals": ["night"], "receiver": "guard-desk", "continue": true},
        {"match": {"notifType": "Offline"}, "receiver": "facilities", "send_resolved": false},
        {"match": {"account": "acct1", "labels": {"zone": "perimeter"}},
         "receiver": "integrator"}]})");
    c["accounts"]["acct1"]["devices"]["cam1"]["labels"] = {{"zone", "perimeter"}};
    return c;
}

struct routed {
    std::string type, device;
    json receivers, recipients, webhooks;
};

std::vector<routed> routes_of(const std::multiset<std::string>& texts) {
    std::vector<routed> out;
    for (const std::string& t : texts) {
        const json j = json::parse(t);
        out.push_back({j["notifType"], j.value("device", ""), j["receivers"], j["recipients"],
                       j.value("webhooks", json())});
    }
    std::sort(out.begin(), out.end(), [](const routed& a, const routed& b) {
        return std::tie(a.type, a.device) < std::tie(b.type, b.device);
    });
    return out;
}

}  // namespace

TEST_CASE("routing: a tree that sends everything to its root keeps today's recipients exactly, "
          "on the sample config and a generated stream") {
    generator_options o;
    o.devices = 400;
    o.outage_fraction = 0.05;
    o.flap_fraction = 0.05;
    o.bridge_size = 9;
    o.bridge_outage_fraction = 0.2;
    const json plain = stream_generator(o).config();
    json rooted = plain;
    rooted["route"] = json::object();
    rooted["receivers"] = {{"unused", {{"email", {"x@y"}}}}};
    const std::multiset<std::string> before = generated(plain, o, 40);
    CHECK(before.size() > 20);
    CHECK(without_receivers(generated(rooted, o, 40)) == before);

    // The sample config: cam1's door region has its own recipients, cam1 its own, cam2 none.
    const batch_list batches = {
        {{motion("cam1", T0, "door", 1, "a"), motion("cam1", T0 + 1, "yard", 1, "b"),
          motion("cam2", T0 + 2, "lobby", 1, "c"), status("cam2", T0 + 3, device_state::offline)},
         T0 + 3},
        {{status("cam2", T0 + 400, device_state::online)}, T0 + 400},
        {{}, T0 + 600},
    };
    json sample_rooted = sample_config();
    sample_rooted["route"] = {{"send_resolved", true}};
    const std::multiset<std::string> plain_sample = through_memory(sample_config(), batches);
    CHECK(plain_sample.size() == 5);
    CHECK(without_receivers(through_memory(sample_rooted, batches)) == plain_sample);
}

TEST_CASE("routing: a mixed stream reaches the receivers its routes name, with continue, "
          "send_resolved, a night by Berlin's clock and labels, alike in every store") {
    const json config = routed_config();
    const double night = JAN04 + 1 * H;  // 02:00 in Berlin
    const double day = JAN04 + 11 * H;   // 12:00 in Berlin
    const batch_list batches = {
        // At night: cam1's door (high) -> guard-desk, and on: cam1 is a perimeter camera.
        {{motion("cam1", night, "door", 1, "n1")}, night},
        // cam2 (no label) goes down: its Offline to facilities; its Online is not sent.
        {{status("cam2", night + 10, device_state::offline, "n2")}, night + 10},
        {{status("cam2", night + 400, device_state::online, "n3")}, night + 400},
        {{}, night + 600},
        // By day: the guard desk's route is muted; cam1's door motion goes on to the
        // integrator (continue), its yard motion (normal) too; cam2's lobby motion falls to the
        // root: the recipients as before (the account's), every webhook.
        {{motion("cam1", day, "door", 1, "d1"), motion("cam1", day + 1, "yard", 1, "d2"),
          motion("cam2", day + 2, "lobby", 1, "d3")},
         day + 2},
    };
    const std::multiset<std::string> memory = through_memory(config, batches);
    const std::vector<routed> got = routes_of(memory);
    REQUIRE(got.size() == 5);
    // Alert cam1 at night.
    CHECK(got[0].receivers == json{"guard-desk", "integrator"});
    CHECK(got[0].recipients == json{"ops@integrator"});
    CHECK(got[0].webhooks == json{"guard", "integrator-hook"});
    // Alert cam1 by day (door, then yard: both only to the integrator).
    CHECK(got[1].receivers == json{"integrator"});
    CHECK(got[2].receivers == json{"integrator"});
    CHECK(got[2].webhooks == json{"integrator-hook"});
    // Alert cam2 by day: the root's default receiver.
    CHECK(got[3].device == "cam2");
    CHECK(got[3].receivers == json{"default"});
    CHECK(got[3].recipients == json{"ops@a1"});
    CHECK(got[3].webhooks.is_null());  // every webhook target, as without routes
    // Offline cam2: facilities only; no Online (send_resolved false).
    CHECK(got[4].type == "Offline");
    CHECK(got[4].receivers == json{"facilities"});
    CHECK(got[4].recipients == json{"facilities@a1"});
    CHECK(got[4].webhooks == json::array());

    CHECK(through_restarted_state_dir(config, batches, "alerts-routing") == memory);
    std::multiset<std::string> shared;
    redis_server server;
    redis_store_options o;
    o.url = parse_redis_url(server.url());
    for (std::size_t i = 0; i < batches.size(); ++i) {
        core_harness h({}, config);
        redis_store store(o);
        for (std::string& t :
             notification_texts(h.core, store.process(h.core, batches[i].first, batches[i].second)))
            shared.insert(std::move(t));
    }
    CHECK(shared == memory);
}

TEST_CASE("routing: the site's notifications route by site, and a device's labels are bounded") {
    json config = sample_config();
    config["accounts"]["acct1"]["sites"] = {{"hq", json::object()}};
    config["accounts"]["acct1"]["devices"]["cam2"]["site"] = "hq";
    config["grouping"] = {{"group_wait", 10}};
    config["receivers"] = {{"hq-desk", {{"email", {"hq@a1"}}}}};
    config["route"] = {{"routes", {{{"match", {{"site", "hq"}}}, {"receiver", "hq-desk"}}}}};
    const batch_list batches = {{{status("cam2", T0, device_state::offline)}, T0}, {{}, T0 + 311}};
    const std::multiset<std::string> out = through_memory(config, batches);
    REQUIRE(out.size() == 1);
    const json j = json::parse(*out.begin());
    CHECK(j["notifType"] == "SiteOffline");
    CHECK(j["receivers"] == json{"hq-desk"});
    CHECK(j["recipients"] == json{"hq@a1"});

    json labels = sample_config();
    json& cam = labels["accounts"]["acct1"]["devices"]["cam2"];
    for (int i = 0; i < 65; ++i) cam["labels"]["l" + std::to_string(i)] = "v";
    CHECK_THROWS_WITH_AS(parse_config(labels),
                         "config: accounts.acct1.devices.cam2.labels has more than 64 labels",
                         config_error);
    cam["labels"] = {{"zone", 1}};
    CHECK_THROWS_WITH_AS(
        parse_config(labels),
        "config: accounts.acct1.devices.cam2.labels.zone must be a string of 1 to 255 characters "
        "without control characters",
        config_error);
}
