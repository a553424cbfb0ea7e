// routes_test.cpp — the notifications' routing tree (core/route_tree.hpp), Alertmanager's
// semantics: the walk with `continue`, the root as the fallback only when no child matched,
// receivers inherited and the root's default, send_resolved inherited, mute and active time
// intervals (Europe/Berlin, 2027) on the destination only, and every refusal of the config
// with its text.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/route_tree.hpp"
#include "core/time_interval.hpp"

using namespace alerts;
using json = nlohmann::json;

namespace {

// 2027 in Europe/Berlin (CET, UTC+1): JAN04 is Monday 01:00 there.
constexpr double JAN04 = 1799020800;                      // 00:00 UTC, a Monday
constexpr double MON_23 = JAN04 + 22 * 3600;              // Monday 23:00 Berlin: night
constexpr double MON_13 = JAN04 + 12 * 3600;              // Monday 13:00 Berlin: day
constexpr double SAT_23 = JAN04 + 5 * 86400 + 22 * 3600;  // Saturday 23:00: night, weekend
constexpr double SAT_13 = JAN04 + 5 * 86400 + 12 * 3600;  // Saturday 13:00: weekend

// Time ranges do not wrap midnight (time_interval.cpp refuses an end before the start): the
// night is two ranges.
std::vector<time_interval> berlin_intervals() {
    return {parse_time_interval("night", json::parse(R"([{"times": [
                {"start_time": "22:00", "end_time": "24:00"},
                {"start_time": "00:00", "end_time": "06:00"}], "location": "Europe/Berlin"}])")),
            parse_time_interval("weekend", json::parse(R"([{"weekdays": ["saturday", "sunday"],
                "location": "Europe/Berlin"}])"))};
}

// The brief's example: three receivers (sorted: facilities 0, guard-desk 1, integrator 2).
json example_config() {
    return json::parse(R"({
      "receivers": {
        "guard-desk": {"webhooks": ["guard"]},
        "facilities": {"email": ["facilities@example.com"]},
        "integrator": {"email": ["ops@integrator.example"], "webhooks": ["integrator-hook"]}},
      "route": {
        "receiver": "facilities",
        "send_resolved": true,
        "routes": [
          {"match": {"notifType": ["Alert", "PossibleTamper"], "level": ["high", "critical"]},
           "active_time_intervals": ["night"], "receiver": "guard-desk", "continue": true},
          {"match": {"notifType": "Offline"}, "receiver": "facilities", "send_resolved": false},
          {"match": {"account": "00001234", "labels": {"zone": ["perimeter", "gate"]}},
           "receiver": "integrator", "continue": true,
           "routes": [{"match": {"site": "hq"}, "mute_time_intervals": ["weekend"]}]}]}})");
}

const json* member(const json& config, const char* key) {
    const auto it = config.find(key);
    return it == config.end() ? nullptr : &*it;
}

route_tree tree_of(const json& config) {
    return route_tree::parse(member(config, "route"), member(config, "receivers"),
                             berlin_intervals());
}

std::string refusal(const json& config) {
    try {
        tree_of(config);
    } catch (const route_error& e) {
        return e.what();
    }
    return "accepted";
}

// The receivers reached, by name ("default" for DEFAULT_RECEIVER), joined with ','; "" when
// route() answers false (checked to go together).
std::string reach(const route_tree& tree, const route_subject& s) {
    std::vector<std::uint32_t> out{42};  // cleared by route()
    const bool delivered = tree.route(s, out);
    CHECK(delivered == !out.empty());
    std::string names;
    for (const std::uint32_t r : out) {
        if (!names.empty()) names.append(",");
        names.append(r == route_tree::DEFAULT_RECEIVER ? "default" : tree.receivers()[r].name);
    }
    return names;
}

route_subject alert(std::string_view level, double t, const label_map* labels = nullptr,
                    std::string_view site = "hq") {
    route_subject s;
    s.notif_type = "Alert";
    s.level = level;
    s.account = "00001234";
    s.site = site;
    s.device = "cam1";
    s.region = "door";
    s.labels = labels;
    s.t = t;
    return s;
}

route_subject state(std::string_view type, bool resolved, double t,
                    const label_map* labels = nullptr) {
    route_subject s;
    s.notif_type = type;
    s.account = "00001234";
    s.site = "hq";
    s.device = "cam1";
    s.labels = labels;
    s.resolved = resolved;
    s.t = t;
    return s;
}

json chain(std::size_t depth) {  // a route `depth` levels below the root
    json route = json::object();
    for (std::size_t i = 0; i < depth; ++i) route = {{"routes", json::array({route})}};
    return route;
}

json strings(std::size_t n, const std::string& prefix) {
    json out = json::array();
    for (std::size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
    return out;
}

}  // namespace

TEST_CASE("routes: the example tree, continue and the root only as the fallback") {
    const route_tree tree = tree_of(example_config());
    REQUIRE(!tree.empty());
    REQUIRE(tree.receivers().size() == 3);
    CHECK(tree.receivers()[0].name == "facilities");
    CHECK(tree.receivers()[2].webhooks == std::vector<std::string>{"integrator-hook"});
    const label_map perimeter = {{"floor", "1"}, {"zone", "perimeter"}};
    const label_map inside = {{"zone", "lobby"}};

    // At night a high Alert reaches guard-desk, which continues; the Offline route does not
    // match; the account route matches with the zone label and its child (site hq) is the
    // destination with the inherited receiver, not muted on a Monday.
    CHECK(reach(tree, alert("high", MON_23, &perimeter)) == "guard-desk,integrator");
    // Without the label, or with another zone, only guard-desk: the root is a destination
    // only when none of its children matched, and the first one did.
    CHECK(reach(tree, alert("high", MON_23)) == "guard-desk");
    CHECK(reach(tree, alert("critical", MON_23, &inside)) == "guard-desk");
    // By day the first route still matches (matching is not about time), but its
    // active_time_intervals mute it: nothing is delivered, and the root is no fallback.
    CHECK(reach(tree, alert("high", MON_13)) == "");
    CHECK(reach(tree, alert("high", MON_13, &perimeter)) == "integrator");
    // A normal Alert matches no child: the root's receiver.
    CHECK(reach(tree, alert("normal", MON_13)) == "facilities");
    // Another site: the account route matches, its child does not, so it is the destination.
    CHECK(reach(tree, alert("normal", MON_13, &perimeter, "yard")) == "integrator");
    // An absent site matches no value.
    CHECK(reach(tree, alert("normal", MON_13, &perimeter, "")) == "integrator");
    // Saturday night: guard-desk is active; the hq route is muted by the weekend.
    CHECK(reach(tree, alert("high", SAT_23, &perimeter)) == "guard-desk");
    CHECK(reach(tree, alert("normal", SAT_13, &perimeter)) == "");
    // The name is matched as a string: a type this module has never heard of works.
    route_subject tamper = alert("high", MON_23);
    tamper.notif_type = "PossibleTamper";
    CHECK(reach(tree, tamper) == "guard-desk");
    route_subject site = state("SiteOffline", false, MON_13);
    CHECK(reach(tree, site) == "facilities");
}

TEST_CASE("routes: Offline, Online and send_resolved") {
    const route_tree tree = tree_of(example_config());
    const label_map perimeter = {{"zone", "perimeter"}};
    // The Offline route has no continue: the account route after it is not tried.
    CHECK(reach(tree, state("Offline", false, MON_13, &perimeter)) == "facilities");
    // An Online that resolves nothing matches no child here: the root, which sends resolved ones.
    CHECK(reach(tree, state("Online", true, MON_13)) == "facilities");
    // The Online that resolves an Offline follows it, and that route does not send resolved.
    route_subject back = state("Online", true, MON_13);
    back.resolves_type = "Offline";
    CHECK(reach(tree, back) == "");
    back.resolved = false;  // (what a route that sends resolved ones would do)
    CHECK(reach(tree, back) == "facilities");

    json config = example_config();
    config["route"]["routes"][1]["match"]["notifType"] = {"Offline", "Online"};
    const route_tree both = tree_of(config);
    CHECK(reach(both, state("Offline", false, MON_13)) == "facilities");
    CHECK(reach(both, state("Online", true, MON_13)) == "");  // dropped: send_resolved false
    CHECK(reach(both, state("Online", false, MON_13)) == "facilities");  // not a resolution
}

TEST_CASE("routes: no route keeps the recipients, and the root's default receiver") {
    const route_tree none = route_tree::parse(nullptr, nullptr, berlin_intervals());
    CHECK(none.empty());
    CHECK(reach(none, alert("high", MON_23)) == "default");
    // Receivers without a route are still checked and kept.
    const json receivers = json::parse(R"({"a": {"email": ["a@x"]}})");
    CHECK(route_tree::parse(nullptr, &receivers, {}).receivers().size() == 1);
    CHECK(route_tree::parse(nullptr, &receivers, {}).empty());

    const route_tree root_only = tree_of(json::parse(R"({"route": {}})"));
    CHECK(!root_only.empty());
    CHECK(reach(root_only, alert("high", MON_23)) == "default");
    // A child without a receiver inherits the root's: the default; each receiver once.
    const route_tree twice = tree_of(json::parse(R"({
      "receivers": {"a": {"email": ["a@x"]}},
      "route": {"routes": [{"match": {"level": "high"}, "continue": true},
                           {"receiver": "a", "continue": true},
                           {"match": {"device": "cam1"}, "continue": true},
                           {"receiver": "a"}]}})"));
    CHECK(reach(twice, alert("high", MON_23)) == "default,a");
    CHECK(reach(twice, state("Offline", false, MON_23)) == "a,default");
}

TEST_CASE("routes: receiver and send_resolved are inherited, intervals are not") {
    const route_tree tree = tree_of(json::parse(R"({
      "receivers": {"a": {"email": ["a@x"]}, "b": {"webhooks": ["b"]}},
      "route": {"receiver": "a", "send_resolved": false, "routes": [
        {"match": {"account": "00001234"}, "receiver": "b", "send_resolved": true,
         "mute_time_intervals": ["night"],
         "routes": [{"match": {"device": "cam1"}},
                    {"match": {"device": "cam2"}, "send_resolved": false}]},
        {"match": {"account": "00009999"}, "routes": [{"match": {"device": "cam1"}}]}]}})"));
    route_subject s = state("Online", true, MON_23);
    // cam1 under the account route: b (inherited), send_resolved true (inherited), and not
    // muted by its parent's night: mute_time_intervals apply to the node that names them.
    CHECK(reach(tree, s) == "b");
    s.device = "cam2";
    CHECK(reach(tree, s) == "");  // its own send_resolved false
    s.device = "cam3";
    CHECK(reach(tree, s) == "");  // the account route is the destination: muted at night
    s.t = MON_13;
    CHECK(reach(tree, s) == "b");
    s.account = "00009999";
    s.device = "cam1";
    CHECK(reach(tree, s) == "");  // a (inherited) with the root's send_resolved false
    s.resolved = false;
    CHECK(reach(tree, s) == "a");
}

TEST_CASE("routes: labels match by name and value, all matchers must hold") {
    const route_tree tree = tree_of(json::parse(R"({
      "receivers": {"a": {"email": ["a@x"]}},
      "route": {"routes": [{"match": {"region": ["door", "gate"], "level": "high",
                                      "labels": {"zone": "perimeter", "floor": ["1", "2"]}},
                            "receiver": "a"}]}})"));
    const label_map both = {{"floor", "2"}, {"zone", "perimeter"}};
    const label_map zone_only = {{"zone", "perimeter"}};
    const label_map other_floor = {{"floor", "3"}, {"zone", "perimeter"}};
    CHECK(reach(tree, alert("high", MON_13, &both)) == "a");
    CHECK(reach(tree, alert("high", MON_13, &zone_only)) == "default");
    CHECK(reach(tree, alert("high", MON_13, &other_floor)) == "default");
    CHECK(reach(tree, alert("normal", MON_13, &both)) == "default");
    CHECK(reach(tree, alert("high", MON_13)) == "default");
    route_subject no_region = alert("high", MON_13, &both);
    no_region.region = "";
    CHECK(reach(tree, no_region) == "default");
}

TEST_CASE("routes: active and mute time intervals in Europe/Berlin") {
    const route_tree tree = tree_of(json::parse(R"({
      "receivers": {"night-desk": {"email": ["n@x"]}, "weekday": {"email": ["w@x"]}},
      "route": {"routes": [
        {"match": {"level": "high"}, "receiver": "night-desk", "active_time_intervals": ["night"],
         "mute_time_intervals": ["weekend"], "continue": true},
        {"match": {"level": "high"}, "receiver": "weekday",
         "mute_time_intervals": ["weekend", "night", "weekend"]}]}})"));
    CHECK(reach(tree, alert("high", MON_23)) == "night-desk");
    CHECK(reach(tree, alert("high", MON_13)) == "weekday");
    CHECK(reach(tree, alert("high", SAT_23)) == "");  // both muted: the caller counts it muted
    CHECK(reach(tree, alert("high", SAT_13)) == "");
    // 05:59 and 06:00 Berlin on Tuesday (04:59 and 05:00 UTC).
    CHECK(reach(tree, alert("high", JAN04 + 86400 + 4 * 3600 + 59 * 60)) == "night-desk");
    CHECK(reach(tree, alert("high", JAN04 + 86400 + 5 * 3600)) == "weekday");
    // An empty list is the same as none.
    const route_tree empty_lists = tree_of(json::parse(R"({"route": {"routes": [
        {"active_time_intervals": [], "mute_time_intervals": []}]}})"));
    CHECK(reach(empty_lists, alert("high", SAT_23)) == "default");
}

TEST_CASE("routes: every refusal names the member and why") {
    const json r = json::parse(R"({"a": {"email": ["a@x"]}})");
    auto with_route = [&](const char* route) {
        return json{{"receivers", r}, {"route", json::parse(route)}};
    };
    auto with_receivers = [](const char* receivers) {
        return json{{"receivers", json::parse(receivers)}};
    };
    const std::vector<std::pair<json, std::string>> cases = {
        {json{{"route", json::array()}}, "route must be an object"},
        {with_receivers("[]"), "receivers must be an object"},
        {with_receivers(R"({"guard-desk": {"emails": ["a@x"]}})"),
         "receivers.guard-desk has an unknown key 'emails' (known keys: email, webhooks)"},
        {with_receivers(R"({"a": {}})"),
         "receivers.a needs an address in 'email' or a target in 'webhooks'"},
        {with_receivers(R"({"a": {"email": [], "webhooks": []}})"),
         "receivers.a needs an address in 'email' or a target in 'webhooks'"},
        {with_receivers(R"({"a": "a@x"})"), "receivers.a must be an object"},
        {with_receivers(R"({"a": {"email": "a@x"}})"),
         "receivers.a.email must be an array of addresses"},
        {with_receivers(R"({"a": {"email": [""]}})"), "receivers.a.email has an empty address"},
        {with_receivers(R"({"a": {"email": ["a@x\r\nBcc: b@y"]}})"),
         "receivers.a.email has a control character in an address"},
        {with_receivers(R"({"a": {"webhooks": [1]}})"),
         "receivers.a.webhooks must be an array of webhook names"},
        {with_receivers(R"({"": {"email": ["a@x"]}})"),
         "receivers has a name that is empty or longer than 255 bytes"},
        {with_receivers(R"({"a\tb": {"email": ["a@x"]}})"),
         "receivers.a\tb has a control character in its name"},
        {with_route(R"({"match": {}})"),
         "route has 'match', which the root route may not have (as in Alertmanager): the root "
         "matches every notification; give it to a child route"},
        {with_route(R"({"continue": true})"),
         "route has 'continue', which the root route may not have (as in Alertmanager): the "
         "root matches every notification; give it to a child route"},
        {with_route(R"({"mute_time_intervals": ["night"]})"),
         "route has 'mute_time_intervals', which the root route may not have (as in "
         "Alertmanager): the root matches every notification; give it to a child route"},
        {with_route(R"({"active_time_intervals": []})"),
         "route has 'active_time_intervals', which the root route may not have (as in "
         "Alertmanager): the root matches every notification; give it to a child route"},
        {with_route(R"({"group_by": ["x"]})"),
         "route has an unknown key 'group_by' (known keys: receiver, send_resolved, routes)"},
        {with_route(R"({"receiver": "nobody"})"),
         "route.receiver names 'nobody', which is not in receivers"},
        {with_route(R"({"receiver": 1})"), "route.receiver must be the name of a receiver"},
        {with_route(R"({"send_resolved": "no"})"), "route.send_resolved must be true or false"},
        {with_route(R"({"routes": {}})"), "route.routes must be an array of routes"},
        {with_route(R"({"routes": [[]]})"), "route.routes[0] must be an object"},
        {with_route(R"({"routes": [{}, {"recevier": "a"}]})"),
         "route.routes[1] has an unknown key 'recevier' (known keys: match, receiver, continue, "
         "send_resolved, mute_time_intervals, active_time_intervals, routes)"},
        {with_route(R"({"routes": [{"routes": [{"receiver": "b"}]}]})"),
         "route.routes[0].routes[0].receiver names 'b', which is not in receivers"},
        {with_route(R"({"routes": [{"continue": 1}]})"),
         "route.routes[0].continue must be true or false"},
        {with_route(R"({"routes": [{"match": []}]})"), "route.routes[0].match must be an object"},
        {with_route(R"({"routes": [{"match": {"type": "Alert"}}]})"),
         "route.routes[0].match has an unknown key 'type' (known keys: notifType, level, "
         "account, site, device, region, labels)"},
        {with_route(R"({"routes": [{}, {}, {"match": {"level": 3}}]})"),
         "route.routes[2].match.level must be a string or a non-empty array of strings"},
        {with_route(R"({"routes": [{"match": {"level": []}}]})"),
         "route.routes[0].match.level must be a string or a non-empty array of strings"},
        {with_route(R"({"routes": [{"match": {"level": ["high", null]}}]})"),
         "route.routes[0].match.level must be a string or a non-empty array of strings"},
        {with_route(R"({"routes": [{"match": {"site": ""}}]})"),
         "route.routes[0].match.site has an empty string, which matches nothing (an absent "
         "field matches no value)"},
        {with_route(R"({"routes": [{"match": {"labels": ["zone"]}}]})"),
         "route.routes[0].match.labels must be an object: label name -> value(s)"},
        {with_route(R"({"routes": [{"match": {"labels": {"zone": {}}}}]})"),
         "route.routes[0].match.labels.zone must be a string or a non-empty array of strings"},
        {with_route(R"({"routes": [{"match": {"labels": {"": "x"}}}]})"),
         "route.routes[0].match.labels has an empty label name"},
        {with_route(R"({"routes": [{"mute_time_intervals": "night"}]})"),
         "route.routes[0].mute_time_intervals must be an array of at most 64 names of "
         "time_intervals"},
        {with_route(R"({"routes": [{"mute_time_intervals": ["night", 2]}]})"),
         "route.routes[0].mute_time_intervals must be an array of names of time_intervals"},
        {with_route(R"({"routes": [{"active_time_intervals": ["nights"]}]})"),
         "route.routes[0].active_time_intervals names 'nights', which is not in "
         "time_intervals"},
        {with_route(R"({"routes": [{"mute_time_intervals": ["weekends", "night", "holidays"]}]})"),
         "route.routes[0].mute_time_intervals names 'weekends', 'holidays', which are not in "
         "time_intervals"},
    };
    for (const auto& c : cases) {  // not a structured binding: INFO's lambda captures it
        INFO(c.first.dump());
        CHECK(refusal(c.first) == c.second);
    }
}

TEST_CASE("routes: each bound is refused before the work, and the bound itself accepted") {
    const std::string long_name(256, 'x');
    const std::string longest(255, 'x');
    const json r = json::parse(R"({"a": {"email": ["a@x"]}})");

    json receivers = json::object();
    for (int i = 0; i < 1024; ++i) receivers["r" + std::to_string(i)] = r["a"];
    CHECK(refusal(json{{"receivers", receivers}}) == "accepted");
    receivers["r1024"] = r["a"];
    CHECK(refusal(json{{"receivers", receivers}}) == "receivers has more than 1024 receivers");

    json one = {{"email", strings(64, "a@")}, {"webhooks", strings(64, "w")}};
    CHECK(refusal(json{{"receivers", {{"a", one}}}}) == "accepted");
    one["email"].push_back("a@64");
    CHECK(refusal(json{{"receivers", {{"a", one}}}}) ==
          "receivers.a.email has more than 64 addresses");
    one["email"].erase(64);
    one["webhooks"].push_back("w64");
    CHECK(refusal(json{{"receivers", {{"a", one}}}}) ==
          "receivers.a.webhooks has more than 64 webhook names");
    CHECK(refusal(json{{"receivers", {{long_name, r["a"]}}}}) ==
          "receivers has a name that is empty or longer than 255 bytes");
    CHECK(refusal(json{{"receivers", {{"a", {{"email", json::array({long_name})}}}}}}) ==
          "receivers.a.email has an address longer than 255 bytes");
    CHECK(refusal(json{{"receivers", {{longest, {{"email", json::array({longest})}}}}}}) ==
          "accepted");

    json routes = json::array();
    for (int i = 0; i < 4096; ++i) routes.push_back(json::object());
    CHECK(refusal(json{{"route", {{"routes", routes}}}}) == "accepted");
    routes.push_back(json::object());
    CHECK(refusal(json{{"route", {{"routes", routes}}}}) ==
          "route.routes makes more than 4096 routes in all");
    // Counted over the whole tree: 2 at the top, 4095 below the first.
    json spread = json::array({json::object(), json::object()});
    spread[0]["routes"] = json::array();
    for (int i = 0; i < 4095; ++i) spread[0]["routes"].push_back(json::object());
    CHECK(refusal(json{{"route", {{"routes", spread}}}}) ==
          "route.routes[0].routes makes more than 4096 routes in all");

    CHECK(refusal(json{{"route", chain(16)}}) == "accepted");
    std::string deepest = "route";
    for (int i = 0; i < 16; ++i) deepest.append(".routes[0]");
    CHECK(refusal(json{{"route", chain(17)}}) ==
          deepest + ".routes nests routes deeper than 16 levels below the root");

    auto match = [&](const json& m) {
        return json{{"route", {{"routes", json::array({json{{"match", m}}})}}}};
    };
    CHECK(refusal(match({{"level", strings(256, "l")}})) == "accepted");
    CHECK(refusal(match({{"level", strings(257, "l")}})) ==
          "route.routes[0].match.level has more than 256 values");
    CHECK(refusal(match({{"device", long_name}})) ==
          "route.routes[0].match.device has a value longer than 255 bytes");
    json labels = json::object();
    for (int i = 0; i < 64; ++i) labels["l" + std::to_string(i)] = "v";
    CHECK(refusal(match({{"labels", labels}})) == "accepted");
    labels["l64"] = "v";
    CHECK(refusal(match({{"labels", labels}})) ==
          "route.routes[0].match.labels has more than 64 labels");
    CHECK(refusal(match({{"labels", {{long_name, "v"}}}})) ==
          "route.routes[0].match.labels has a label name longer than 255 bytes");
    CHECK(refusal(match({{"labels", {{"zone", strings(257, "z")}}}})) ==
          "route.routes[0].match.labels.zone has more than 256 values");

    json names = json::array();
    for (int i = 0; i < 64; ++i) names.push_back("night");
    const json ok = {{"route", {{"routes", json::array({{{"mute_time_intervals", names}}})}}}};
    CHECK(refusal(ok) == "accepted");
    names.push_back("night");
    const json over = {{"route", {{"routes", json::array({{{"mute_time_intervals", names}}})}}}};
    CHECK(refusal(over) ==
          "route.routes[0].mute_time_intervals must be an array of at most 64 names of "
          "time_intervals");
}
