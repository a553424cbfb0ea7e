// route_tree.cpp — parsing the routing tree and walking it (route_tree.hpp).
#include "core/route_tree.hpp"

#include <algorithm>
#include <initializer_list>

namespace alerts {

namespace {

using json = nlohmann::json;

// The matcher keys, in the order of route_tree::node::fields, and the subject's members.
constexpr std::array<const char*, 6> FIELD_KEYS = {"notifType", "level",  "account",
                                                   "site",      "device", "region"};
constexpr std::array<std::string_view route_subject::*, 6> FIELD_MEMBERS = {
    &route_subject::notif_type, &route_subject::level,  &route_subject::account,
    &route_subject::site,       &route_subject::device, &route_subject::region};

// The root matches every notification and is never a sibling, so Alertmanager refuses these
// on it; a config that sets them means something the tree would not do.
constexpr std::array<const char*, 4> ROOT_REFUSED = {"match", "continue", "mute_time_intervals",
                                                     "active_time_intervals"};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw route_error(path + " " + what);
}

std::string member_path(const std::string& path, std::string_view part, std::string_view name = {},
                        std::string_view tail = {}) {
    std::string out = path;
    out.append(part).append(name).append(tail);
    return out;
}

std::string index_path(const std::string& path, std::string_view part, std::size_t i) {
    return member_path(path, part, "[" + std::to_string(i), "]");
}

// A misspelt key would otherwise be ignored silently (and a route match more than meant).
void check_keys(const json& j, const std::string& path, std::initializer_list<const char*> known) {
    for (const auto& item : j.items()) {
        const bool found =
            std::any_of(known.begin(), known.end(), [&](const char* k) { return item.key() == k; });
        if (found) continue;
        std::string list;
        for (const char* k : known) list.append(list.empty() ? "" : ", ").append(k);
        fail(path, "has an unknown key '" + item.key() + "' (known keys: " + list + ")");
    }
}

bool has_control(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7f;
    });
}

// "a value", "an address": `noun` with its article, for the errors.
std::string with_article(std::string_view noun) {
    const bool vowel =
        !noun.empty() && std::string_view("aeiou").find(noun[0]) != std::string_view::npos;
    std::string out = vowel ? "an " : "a ";
    out.append(noun);
    return out;
}

// A name, address or value: 1 to MAX_ROUTE_STRING bytes; `noun` says which, for the error.
void check_string(const std::string& s, const std::string& path, std::string_view noun) {
    if (s.empty()) fail(path, "has an empty " + std::string(noun));
    if (s.size() > MAX_ROUTE_STRING) {
        fail(path, "has " + with_article(noun) + " longer than " +
                       std::to_string(MAX_ROUTE_STRING) + " bytes");
    }
}

bool get_bool(const json& j, const char* key, bool fallback, const std::string& path) {
    const auto it = j.find(key);
    if (it == j.end()) return fallback;
    if (!it->is_boolean()) fail(member_path(path, ".", key), "must be true or false");
    return it->get<bool>();
}

}  // namespace

// The parse's state: the tree being filled, the routes counted so far, and the config's
// intervals by name.
struct route_tree::builder {
    static constexpr std::uint32_t NO_INTERVAL = 0xFFFFFFFFu;

    route_tree tree;
    const std::vector<time_interval>& intervals;
    std::vector<std::uint32_t> by_name;  // indices in `intervals`, sorted by name
    std::vector<std::uint32_t> copied;   // config interval -> index in tree.intervals_
    std::size_t routes = 0;

    explicit builder(const std::vector<time_interval>& config_intervals)
        : intervals(config_intervals), copied(config_intervals.size(), NO_INTERVAL) {
        by_name.reserve(intervals.size());
        for (std::size_t i = 0; i < intervals.size(); ++i) {
            by_name.push_back(static_cast<std::uint32_t>(i));
        }
        std::sort(by_name.begin(), by_name.end(), [&](std::uint32_t a, std::uint32_t b) {
            return intervals[a].name < intervals[b].name;
        });
    }

    // ---- receivers ----

    // `email` or `webhooks`: at most `most` strings; `what` names one, `whats` several.
    static std::vector<std::string> parse_targets(const json& j, const char* key, std::size_t most,
                                                  const std::string& path, const char* what,
                                                  const char* whats) {
        std::vector<std::string> out;
        const auto it = j.find(key);
        if (it == j.end()) return out;
        const std::string at = member_path(path, ".", key);
        if (!it->is_array()) fail(at, std::string("must be an array of ") + whats);
        if (it->size() > most) fail(at, "has more than " + std::to_string(most) + " " + whats);
        for (const json& item : *it) {
            if (!item.is_string()) fail(at, std::string("must be an array of ") + whats);
            out.push_back(item.get<std::string>());
            check_string(out.back(), at, what);
            // An e-mail header or a log line must not be split by what a config says.
            if (has_control(out.back()))
                fail(at, "has a control character in " + with_article(what));
        }
        return out;
    }

    void parse_receivers(const json& j) {
        if (!j.is_object()) fail("receivers", "must be an object");
        if (j.size() > MAX_RECEIVERS) {
            fail("receivers", "has more than " + std::to_string(MAX_RECEIVERS) + " receivers");
        }
        tree.receivers_.reserve(j.size());
        for (const auto& [name, rj] : j.items()) {
            if (name.empty() || name.size() > MAX_ROUTE_STRING) {
                fail("receivers", "has a name that is empty or longer than " +
                                      std::to_string(MAX_ROUTE_STRING) + " bytes");
            }
            const std::string path = member_path("receivers.", name);
            if (has_control(name)) fail(path, "has a control character in its name");
            if (!rj.is_object()) fail(path, "must be an object");
            check_keys(rj, path, {"email", "webhooks"});
            receiver_config r;
            r.name = name;
            r.email = parse_targets(rj, "email", MAX_RECEIVER_EMAILS, path, "address", "addresses");
            r.webhooks = parse_targets(rj, "webhooks", MAX_RECEIVER_WEBHOOKS, path, "webhook name",
                                       "webhook names");
            if (r.email.empty() && r.webhooks.empty()) {
                fail(path, "needs an address in 'email' or a target in 'webhooks'");
            }
            tree.receivers_.push_back(std::move(r));
        }
        // nlohmann's objects iterate in key order: receivers_ is sorted by name already.
    }

    std::uint32_t receiver_index(const json& j, const std::string& path) const {
        if (!j.is_string()) fail(path, "must be the name of a receiver");
        const std::string name = j.get<std::string>();
        const auto& rs = tree.receivers_;
        const auto it = std::lower_bound(
            rs.begin(), rs.end(), name,
            [](const receiver_config& r, const std::string& n) { return r.name < n; });
        if (it == rs.end() || it->name != name) {
            fail(path,
                 "names '" + name.substr(0, MAX_ROUTE_STRING) + "', which is not in receivers");
        }
        return static_cast<std::uint32_t>(it - rs.begin());
    }

    // ---- matchers ----

    // A string or a non-empty array of strings, appended to values_.
    slice parse_values(const json& j, const std::string& path) {
        static const char* const SHAPE = "must be a string or a non-empty array of strings";
        slice out{static_cast<std::uint32_t>(tree.values_.size()), 0};
        if (j.is_string()) {
            tree.values_.push_back(j.get<std::string>());
        } else {
            if (!j.is_array() || j.empty()) fail(path, SHAPE);
            if (j.size() > MAX_MATCH_VALUES) {
                fail(path, "has more than " + std::to_string(MAX_MATCH_VALUES) + " values");
            }
            for (const json& v : j) {
                if (!v.is_string()) fail(path, SHAPE);
                tree.values_.push_back(v.get<std::string>());
            }
        }
        for (std::size_t i = out.first; i < tree.values_.size(); ++i) {
            // "" is how a subject says a field is absent: a value "" would match nothing.
            if (tree.values_[i].empty()) {
                fail(path, "has an empty string, which matches nothing (an absent field "
                           "matches no value)");
            }
            check_string(tree.values_[i], path, "value");
        }
        out.count = static_cast<std::uint32_t>(tree.values_.size() - out.first);
        return out;
    }

    void parse_labels(const json& j, const std::string& path, node& n) {
        if (!j.is_object()) fail(path, "must be an object: label name -> value(s)");
        if (j.size() > MAX_LABEL_MATCHERS) {
            fail(path, "has more than " + std::to_string(MAX_LABEL_MATCHERS) + " labels");
        }
        n.labels.first = static_cast<std::uint32_t>(tree.label_matchers_.size());
        for (const auto& [name, values] : j.items()) {
            check_string(name, path, "label name");
            label_matcher m;
            m.name = name;
            m.values = parse_values(values, member_path(path, ".", name));
            tree.label_matchers_.push_back(std::move(m));
        }
        n.labels.count = static_cast<std::uint32_t>(j.size());
    }

    void parse_match(const json& j, const std::string& path, node& n) {
        if (!j.is_object()) fail(path, "must be an object");
        check_keys(j, path,
                   {"notifType", "level", "account", "site", "device", "region", "labels"});
        for (std::size_t f = 0; f < FIELD_COUNT; ++f) {
            const auto it = j.find(FIELD_KEYS[f]);
            if (it != j.end())
                n.fields[f] = parse_values(*it, member_path(path, ".", FIELD_KEYS[f]));
        }
        if (const auto it = j.find("labels"); it != j.end()) {
            parse_labels(*it, member_path(path, ".labels"), n);
        }
    }

    // ---- time intervals ----

    // The tree's index of the config's interval called `name`, copying it on first use;
    // NO_INTERVAL when there is no such interval.
    std::uint32_t interval_index(const std::string& name) {
        const auto it = std::lower_bound(
            by_name.begin(), by_name.end(), name,
            [&](std::uint32_t i, const std::string& n) { return intervals[i].name < n; });
        if (it == by_name.end() || intervals[*it].name != name) return NO_INTERVAL;
        std::uint32_t& copy = copied[*it];
        if (copy == NO_INTERVAL) {
            copy = static_cast<std::uint32_t>(tree.intervals_.size());
            tree.intervals_.push_back(intervals[*it]);
        }
        return copy;
    }

    slice parse_interval_names(const json& j, const char* key, const std::string& route_path) {
        slice out{static_cast<std::uint32_t>(tree.interval_refs_.size()), 0};
        const auto it = j.find(key);
        if (it == j.end()) return out;
        const std::string path = member_path(route_path, ".", key);
        if (!it->is_array() || it->size() > MAX_ROUTE_INTERVALS) {
            fail(path, "must be an array of at most " + std::to_string(MAX_ROUTE_INTERVALS) +
                           " names of time_intervals");
        }
        std::string unknown;  // every unknown name, so that one edit fixes them all
        std::size_t unknowns = 0;
        for (const json& name : *it) {
            if (!name.is_string()) fail(path, "must be an array of names of time_intervals");
            const std::string& text = name.get_ref<const std::string&>();
            check_string(text, path, "name");
            const std::uint32_t index = interval_index(text);
            if (index == NO_INTERVAL) {
                unknown.append(unknown.empty() ? "'" : ", '").append(text).append("'");
                ++unknowns;
                continue;
            }
            const auto begin = tree.interval_refs_.begin() + out.first;
            if (std::find(begin, tree.interval_refs_.end(), index) == tree.interval_refs_.end()) {
                tree.interval_refs_.push_back(index);
            }
        }
        if (unknowns > 0) {
            fail(path, "names " + unknown + (unknowns == 1 ? ", which is" : ", which are") +
                           " not in time_intervals");
        }
        out.count = static_cast<std::uint32_t>(tree.interval_refs_.size() - out.first);
        return out;
    }

    // ---- routes ----

    // `j`'s child routes, appended in preorder after their parent; `depth` is the parent's.
    void parse_children(const json& j, const std::string& path, const node& parent,
                        std::size_t depth) {
        const auto it = j.find("routes");
        if (it == j.end()) return;
        const std::string at = member_path(path, ".routes");
        if (!it->is_array()) fail(at, "must be an array of routes");
        if (it->empty()) return;
        if (depth + 1 > MAX_ROUTE_DEPTH) {
            fail(at, "nests routes deeper than " + std::to_string(MAX_ROUTE_DEPTH) +
                         " levels below the root");
        }
        if (it->size() > MAX_ROUTES - routes) {
            fail(at, "makes more than " + std::to_string(MAX_ROUTES) + " routes in all");
        }
        routes += it->size();
        const std::uint32_t receiver = parent.receiver;  // `parent` moves as nodes_ grows
        const bool send_resolved = parent.send_resolved;
        for (std::size_t i = 0; i < it->size(); ++i) {
            parse_route((*it)[i], index_path(path, ".routes", i), receiver, send_resolved,
                        depth + 1);
        }
    }

    void parse_route(const json& j, const std::string& path, std::uint32_t receiver,
                     bool send_resolved, std::size_t depth) {
        if (!j.is_object()) fail(path, "must be an object");
        check_keys(j, path,
                   {"match", "receiver", "continue", "send_resolved", "mute_time_intervals",
                    "active_time_intervals", "routes"});
        node n;
        if (const auto it = j.find("match"); it != j.end()) {
            parse_match(*it, member_path(path, ".match"), n);
        }
        const auto r = j.find("receiver");
        n.receiver = r == j.end() ? receiver : receiver_index(*r, member_path(path, ".receiver"));
        n.send_resolved = get_bool(j, "send_resolved", send_resolved, path);
        n.cont = get_bool(j, "continue", false, path);
        n.mute = parse_interval_names(j, "mute_time_intervals", path);
        n.active = parse_interval_names(j, "active_time_intervals", path);
        add(j, path, n, depth);
    }

    // Appends `n`, then its subtree, and closes its range.
    void add(const json& j, const std::string& path, const node& n, std::size_t depth) {
        const std::size_t index = tree.nodes_.size();
        tree.nodes_.push_back(n);
        parse_children(j, path, n, depth);
        tree.nodes_[index].end = static_cast<std::uint32_t>(tree.nodes_.size());
    }

    void parse_root(const json& j) {
        if (!j.is_object()) fail("route", "must be an object");
        for (const char* key : ROOT_REFUSED) {
            if (j.contains(key)) {
                fail("route", std::string("has '") + key +
                                  "', which the root route may not have (as in Alertmanager): "
                                  "the root matches every notification; give it to a child route");
            }
        }
        check_keys(j, "route", {"receiver", "send_resolved", "routes"});
        node root;
        const auto r = j.find("receiver");
        root.receiver = r == j.end() ? DEFAULT_RECEIVER : receiver_index(*r, "route.receiver");
        root.send_resolved = get_bool(j, "send_resolved", true, "route");
        add(j, "route", root, 0);
    }
};

route_tree route_tree::parse(const nlohmann::json* route, const nlohmann::json* receivers,
                             const std::vector<time_interval>& intervals) {
    builder b(intervals);
    if (receivers) b.parse_receivers(*receivers);  // first: routes name them
    if (route) b.parse_root(*route);
    return std::move(b.tree);
}

bool route_tree::any_value(slice values, std::string_view v) const {
    if (v.empty()) return false;  // absent: matches no value
    const auto begin = values_.begin() + values.first;
    return std::find(begin, begin + values.count, v) != begin + values.count;
}

bool route_tree::matches(const node& n, const route_subject& s) const {
    for (std::size_t f = 0; f < FIELD_COUNT; ++f) {
        if (n.fields[f].count == 0 || any_value(n.fields[f], s.*FIELD_MEMBERS[f])) continue;
        if (f == 0 && any_value(n.fields[0], s.resolves_type)) continue;  // its problem's type
        return false;
    }
    for (std::uint32_t i = 0; i < n.labels.count; ++i) {
        const label_matcher& m = label_matchers_[n.labels.first + i];
        if (!s.labels) return false;
        const auto it = std::lower_bound(s.labels->begin(), s.labels->end(), m.name,
                                         [](const std::pair<std::string, std::string>& l,
                                            const std::string& name) { return l.first < name; });
        if (it == s.labels->end() || it->first != m.name || !any_value(m.values, it->second)) {
            return false;
        }
    }
    return true;
}

bool route_tree::muted(const node& n, double t) const {
    const auto in = [&](slice refs) {
        for (std::uint32_t i = 0; i < refs.count; ++i) {
            if (intervals_[interval_refs_[refs.first + i]].contains(t)) return true;
        }
        return false;
    };
    return (n.active.count > 0 && !in(n.active)) || in(n.mute);
}

void route_tree::walk(std::uint32_t index, const route_subject& s,
                      std::vector<std::uint32_t>& out) const {
    const node& n = nodes_[index];
    bool matched_child = false;
    for (std::uint32_t c = index + 1; c < n.end; c = nodes_[c].end) {
        if (!matches(nodes_[c], s)) continue;
        matched_child = true;
        walk(c, s, out);
        if (!nodes_[c].cont) break;
    }
    if (matched_child) return;
    // A destination. Muted or not sending resolved: reached, but nothing is delivered.
    if ((s.resolved && !n.send_resolved) || muted(n, s.t)) return;
    if (std::find(out.begin(), out.end(), n.receiver) == out.end()) out.push_back(n.receiver);
}

bool route_tree::route(const route_subject& s, std::vector<std::uint32_t>& out) const {
    out.clear();
    if (nodes_.empty()) {
        out.push_back(DEFAULT_RECEIVER);
        return true;
    }
    walk(0, s, out);  // recursion at most MAX_ROUTE_DEPTH + 1 deep
    return !out.empty();
}

}  // namespace alerts
