// The notifications' routing tree (core/route_tree.hpp): route_tree::parse of a config's
// `route` and `receivers`, then route() of a few subjects. An input is a JSON object
// {"route":…, "receivers":…, "time_intervals":…, "subjects":[…]}: the intervals as the config
// names them (one that does not parse is left out), the subjects' fields as route_subject's
// ({"notifType", "level", "account", "site", "device", "region": strings, "labels": {name:
// value}, "resolved": bool, "t": number}); four more subjects are drawn from the input's bytes
// and the strings its routes match on. Invariants: only route_error escapes parse, its text
// starting with the member's path; route() answers each receiver once, an index of receivers()
// or DEFAULT_RECEIVER, false exactly when it answers none; a copy of the tree answers the same;
// and the answer is the one of a plain recursive walk of the JSON itself (Alertmanager's
// semantics written out again, the reference).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/route_tree.hpp"
#include "core/time_interval.hpp"
#include "fuzz_check.hpp"

namespace {

using alerts::route_subject;
using alerts::route_tree;
using alerts::time_interval;
using nlohmann::json;

constexpr std::size_t MAX_FUZZ_INTERVALS = 16;
constexpr std::size_t MAX_JSON_SUBJECTS = 8;
constexpr std::size_t DRAWN_SUBJECTS = 4;
constexpr std::size_t MAX_CANDIDATES = 64;

constexpr std::string_view FIELD_KEYS[] = {"notifType", "level",  "account",
                                           "site",      "device", "region"};
constexpr std::string_view route_subject::*FIELD_MEMBERS[] = {
    &route_subject::notif_type, &route_subject::level,  &route_subject::account,
    &route_subject::site,       &route_subject::device, &route_subject::region};
constexpr std::string_view TYPES[] = {"Alert",           "Offline",         "Online",
                                      "InternetOffline", "FlappingStarted", "FlappingStopped",
                                      "StillOffline",    "PossibleTamper",  "SiteOffline",
                                      "SiteChanged",     "SiteOnline"};

const json* member(const json& j, const char* key) {
    const auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
}

// A subject and the strings its views point into.
struct owned_subject {
    std::string fields[6];
    alerts::label_map labels;
    bool has_labels = false;
    bool resolved = false;
    double t = 0;

    route_subject view() const {
        route_subject s;
        for (std::size_t f = 0; f < 6; ++f) s.*FIELD_MEMBERS[f] = fields[f];
        s.labels = has_labels ? &labels : nullptr;
        s.resolved = resolved;
        s.t = t;
        return s;
    }
};

std::vector<time_interval> parse_intervals(const json& value) {
    std::vector<time_interval> out;
    const json* j = member(value, "time_intervals");
    if (!j || !j->is_object()) return out;
    for (const auto& [name, spec] : j->items()) {
        if (out.size() == MAX_FUZZ_INTERVALS) break;
        try {
            out.push_back(alerts::parse_time_interval(name, spec));
        } catch (const alerts::time_interval_error&) {
        }
    }
    return out;
}

owned_subject subject_of(const json& j) {
    owned_subject s;
    if (!j.is_object()) return s;
    for (std::size_t f = 0; f < 6; ++f) {
        const auto it = j.find(FIELD_KEYS[f]);
        if (it != j.end() && it->is_string()) s.fields[f] = it->get<std::string>();
    }
    if (const auto it = j.find("labels"); it != j.end() && it->is_object()) {
        s.has_labels = true;
        for (const auto& [name, v] : it->items()) {  // in key order: sorted, each name once
            if (v.is_string()) s.labels.emplace_back(name, v.get<std::string>());
        }
    }
    if (const auto it = j.find("resolved"); it != j.end() && it->is_boolean()) s.resolved = *it;
    if (const auto it = j.find("t"); it != j.end() && it->is_number()) s.t = it->get<double>();
    return s;
}

// The strings the (valid) routes match on, so that drawn subjects match some of them.
void collect(const json& route, std::vector<std::string>& out) {
    const auto add = [&](const json& values) {
        if (values.is_string() && out.size() < MAX_CANDIDATES)
            out.push_back(values.get<std::string>());
        if (!values.is_array()) return;
        for (const json& v : values) {
            if (out.size() < MAX_CANDIDATES && v.is_string()) out.push_back(v.get<std::string>());
        }
    };
    if (const json* m = member(route, "match")) {
        for (const auto& [key, values] : m->items()) {
            if (key != "labels") {
                add(values);
                continue;
            }
            for (const auto& [name, label_values] : values.items()) {
                if (out.size() < MAX_CANDIDATES) out.push_back(name);
                add(label_values);
            }
        }
    }
    if (const json* routes = member(route, "routes")) {
        for (const json& child : *routes) collect(child, out);
    }
}

// A small deterministic generator seeded with the input (FNV-1a, then xorshift).
struct draw {
    std::uint64_t state = 1469598103934665603ULL;
    explicit draw(std::string_view bytes) {
        for (const char c : bytes)
            state = (state ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
        if (state == 0) state = 1;
    }
    std::uint64_t next() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
};

owned_subject drawn_subject(draw& d, const std::vector<std::string>& candidates) {
    const auto pick = [&]() -> std::string {
        const std::size_t i = d.below(candidates.size() + 1);
        return i == candidates.size() ? std::string() : candidates[i];
    };
    owned_subject s;
    s.fields[0] = d.below(2) == 0 ? std::string(TYPES[d.below(std::size(TYPES))]) : pick();
    for (std::size_t f = 1; f < 6; ++f) s.fields[f] = pick();
    s.has_labels = d.below(4) != 0;
    for (std::size_t n = d.below(4); n > 0; --n) s.labels.emplace_back(pick(), pick());
    std::sort(s.labels.begin(), s.labels.end());
    s.labels.erase(std::unique(s.labels.begin(), s.labels.end(),
                               [](const auto& a, const auto& b) { return a.first == b.first; }),
                   s.labels.end());
    s.resolved = d.below(2) == 0;
    // 2027 (with its daylight-saving changes), rarely something odd.
    s.t = d.below(16) == 0 ? -1e300
                           : 1798761600.0 + static_cast<double>(d.below(std::size_t{366} * 86400));
    return s;
}

// ---- the reference: Alertmanager's walk over the JSON the tree was parsed from ----

struct reference {
    const std::vector<time_interval>& intervals;

    static bool any_of(const json& values, std::string_view v) {
        if (v.empty()) return false;
        if (values.is_string()) return values.get_ref<const std::string&>() == v;
        return std::any_of(values.begin(), values.end(),
                           [&](const json& x) { return x.get_ref<const std::string&>() == v; });
    }

    static bool matches(const json& route, const route_subject& s) {
        const json* m = member(route, "match");
        if (!m) return true;
        for (std::size_t f = 0; f < 6; ++f) {
            const json* values = member(*m, std::string(FIELD_KEYS[f]).c_str());
            if (values && !any_of(*values, s.*FIELD_MEMBERS[f])) return false;
        }
        const json* labels = member(*m, "labels");
        if (!labels) return true;
        for (const auto& item : labels->items()) {
            if (!s.labels) return false;
            const std::string& name = item.key();
            const auto it = std::find_if(s.labels->begin(), s.labels->end(),
                                         [&](const auto& l) { return l.first == name; });
            if (it == s.labels->end() || !any_of(item.value(), it->second)) return false;
        }
        return true;
    }

    bool any_contains(const json& names, double t) const {
        for (const json& name : names) {
            for (const time_interval& ti : intervals) {
                if (ti.name == name.get_ref<const std::string&>() && ti.contains(t)) return true;
            }
        }
        return false;
    }

    void walk(const json& route, std::string receiver, bool send_resolved, const route_subject& s,
              std::vector<std::string>& out) const {
        if (const json* r = member(route, "receiver")) receiver = r->get<std::string>();
        if (const json* sr = member(route, "send_resolved")) send_resolved = sr->get<bool>();
        bool matched = false;
        if (const json* routes = member(route, "routes")) {
            for (const json& child : *routes) {
                if (!matches(child, s)) continue;
                matched = true;
                walk(child, receiver, send_resolved, s, out);
                const json* cont = member(child, "continue");
                if (!cont || !cont->get<bool>()) break;
            }
        }
        if (matched || (s.resolved && !send_resolved)) return;
        const json* active = member(route, "active_time_intervals");
        if (active && !active->empty() && !any_contains(*active, s.t)) return;
        const json* mute = member(route, "mute_time_intervals");
        if (mute && any_contains(*mute, s.t)) return;
        if (std::find(out.begin(), out.end(), receiver) == out.end()) out.push_back(receiver);
    }
};

// Routes `s` through the tree and its copy, checks the answer's invariants, and compares it
// with the reference's walk of `route` ("" stands for DEFAULT_RECEIVER).
void check_route(const route_tree& tree, const route_tree& copy, const json* route,
                 const std::vector<time_interval>& intervals, const route_subject& s,
                 std::vector<std::uint32_t>& out) {
    const bool delivered = tree.route(s, out);
    FUZZ_CHECK(delivered == !out.empty());
    std::vector<std::string> names;
    for (std::size_t i = 0; i < out.size(); ++i) {
        FUZZ_CHECK(out[i] == route_tree::DEFAULT_RECEIVER || out[i] < tree.receivers().size());
        FUZZ_CHECK(std::find(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(i), out[i]) ==
                   out.begin() + static_cast<std::ptrdiff_t>(i));
        names.push_back(out[i] == route_tree::DEFAULT_RECEIVER ? std::string()
                                                               : tree.receivers()[out[i]].name);
    }
    std::vector<std::uint32_t> again;
    FUZZ_CHECK(copy.route(s, again) == delivered && again == out);
    std::vector<std::string> expected;
    if (route) {
        reference{intervals}.walk(*route, std::string(), true, s, expected);
    } else {
        expected.emplace_back();  // no route: the config's recipients
    }
    FUZZ_CHECK(names == expected);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const json value = json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (!value.is_object()) return 0;
    const std::vector<time_interval> intervals = parse_intervals(value);
    const json* route = member(value, "route");
    route_tree tree;
    try {
        tree = route_tree::parse(route, member(value, "receivers"), intervals);
    } catch (const alerts::route_error& e) {
        const std::string_view what = e.what();
        FUZZ_CHECK(what.rfind("route", 0) == 0 || what.rfind("receivers", 0) == 0);
        return 0;
    }
    FUZZ_CHECK(tree.empty() == (route == nullptr));
    const auto& receivers = tree.receivers();
    FUZZ_CHECK(receivers.size() <= alerts::MAX_RECEIVERS);
    for (std::size_t i = 0; i + 1 < receivers.size(); ++i) {
        FUZZ_CHECK(receivers[i].name < receivers[i + 1].name);
    }
    const route_tree copy = tree;

    std::vector<owned_subject> subjects;
    if (const json* list = member(value, "subjects"); list && list->is_array()) {
        for (const json& j : *list) {
            if (subjects.size() == MAX_JSON_SUBJECTS) break;
            subjects.push_back(subject_of(j));
        }
    }
    std::vector<std::string> candidates;
    if (route) collect(*route, candidates);
    draw d(bytes);
    for (std::size_t i = 0; i < DRAWN_SUBJECTS; ++i)
        subjects.push_back(drawn_subject(d, candidates));

    std::vector<std::uint32_t> out;
    for (const owned_subject& s : subjects)
        check_route(tree, copy, route, intervals, s.view(), out);
    return 0;
}
