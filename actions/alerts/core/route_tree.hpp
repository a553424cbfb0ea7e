// route_tree.hpp — which receivers a notification goes to: Alertmanager's routing tree
// (`route`, `receivers`) over the notification's fields and its device's labels. Pure and
// allocation-free per notification (the caller's output vector is reused); parsed once per
// config. config.hpp includes this header (alert_config holds a route_tree), so it must not
// include config.hpp: parse errors are route_error, which parse_config turns into config_error.
//
// The walk (as Alertmanager's): a notification enters at the root, which matches everything.
// At a node that matched, its children are tried in order; each child that matches is walked
// in turn, and the first one of them without `continue: true` ends the walk of its siblings.
// A node none of whose children matched is a destination: its receiver gets the notification,
// unless the node is muted at the notification's time (`active_time_intervals` given and none
// contains it, or one of `mute_time_intervals` contains it) or the notification is a resolved
// one and the node has `send_resolved: false`.
//
// Inherited from the parent: `receiver` (the root's, when absent, is DEFAULT_RECEIVER: the
// per-device, per-account recipients of the config) and `send_resolved` (default true). NOT
// inherited, as in Alertmanager: `match`, `continue`, `mute_time_intervals` and
// `active_time_intervals` (an interval list applies to the node that names it, only when that
// node is the destination; an empty list is the same as none).
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/time_interval.hpp"

namespace alerts {

/// Thrown by route_tree::parse; what() starts with the member's path ("route.routes[2].match…",
/// "receivers.guard-desk …"), without config.cpp's "config: " prefix.
class route_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

using recipient_list = std::vector<std::string>;  // the same alias as config.hpp's

/// One entry of `receivers`: where a notification routed to it is delivered.
struct receiver_config {
    std::string name;
    recipient_list email;               // addresses
    std::vector<std::string> webhooks;  // webhook target names
};

/// A device's labels, sorted by name, each name once.
using label_map = std::vector<std::pair<std::string, std::string>>;

/// What a route matches on. A field "" is absent: a matcher on it matches no value.
struct route_subject {
    std::string_view notif_type;  // name_of(notif_type): "Alert", "Offline", …
    // A resolving notification's problem ("Offline" for the Online that resolves one, …): a
    // notifType matcher matches either name, so a route of Offlines takes their Onlines too (as
    // Alertmanager's resolved alerts follow their firing ones), and send_resolved decides.
    std::string_view resolves_type;
    std::string_view level;
    std::string_view account;
    std::string_view site;
    std::string_view device;
    std::string_view region;
    const label_map* labels = nullptr;  // nullptr: no labels
    bool resolved = false;              // an Online that resolves an Offline, a SiteOnline, …
    double t = 0;  // the time intervals are tested at (the notification's due time)
};

/// Bounds of a config's routing, each checked before the work it bounds.
constexpr std::size_t MAX_RECEIVERS = 1024;
constexpr std::size_t MAX_RECEIVER_EMAILS = 64;    // addresses of one receiver
constexpr std::size_t MAX_RECEIVER_WEBHOOKS = 64;  // webhook targets of one receiver
constexpr std::size_t MAX_ROUTES = 4096;           // routes in all, the root not counted
constexpr std::size_t MAX_ROUTE_DEPTH = 16;        // the root's children are at depth 1
constexpr std::size_t MAX_MATCH_VALUES = 256;      // values of one matcher
constexpr std::size_t MAX_LABEL_MATCHERS = 64;     // label matchers of one route
constexpr std::size_t MAX_ROUTE_INTERVALS = 64;    // names in one route's interval list
constexpr std::size_t MAX_ROUTE_STRING = 255;      // bytes of any name, value or address

class route_tree {
public:
    /// The receiver index that stands for the config's per-device recipients (no receiver).
    static constexpr std::uint32_t DEFAULT_RECEIVER = 0xFFFFFFFFu;

    /// Parses `route` and `receivers` (either may be absent: nullptr); `intervals` are the
    /// config's named time intervals (the ones a route names are copied). Throws route_error.
    static route_tree parse(const nlohmann::json* route, const nlohmann::json* receivers,
                            const std::vector<time_interval>& intervals);

    /// No `route` in the config: callers keep the per-device recipients.
    bool empty() const { return nodes_.empty(); }
    /// The receivers, sorted by name; route() answers indices into it.
    const std::vector<receiver_config>& receivers() const { return receivers_; }

    /// Clears `out`, then appends the receivers the subject reaches, each once, in the order
    /// reached (DEFAULT_RECEIVER for the config's recipients; an empty tree answers just that).
    /// Returns false when every destination reached was muted or dropped by send_resolved:
    /// `out` is empty then.
    bool route(const route_subject& s, std::vector<std::uint32_t>& out) const;

private:
    // A range of one of the flat vectors below.
    struct slice {
        std::uint32_t first = 0;
        std::uint32_t count = 0;
    };
    static constexpr std::size_t FIELD_COUNT =
        6;  // notifType, level, account, site, device, region
    struct label_matcher {
        std::string name;
        slice values;  // in values_
    };
    // One route; the tree is stored in preorder, so a node's children start right after it and
    // each child's subtree ends at its `end`.
    struct node {
        std::array<slice, FIELD_COUNT> fields;  // in values_; count 0: not matched on
        slice labels;                           // in label_matchers_
        slice mute;                             // in interval_refs_
        slice active;                           // in interval_refs_
        std::uint32_t receiver = DEFAULT_RECEIVER;
        std::uint32_t end = 0;  // one past the last node of its subtree
        bool cont = false;
        bool send_resolved = true;
    };
    struct builder;

    bool matches(const node& n, const route_subject& s) const;
    bool any_value(slice values, std::string_view v) const;
    bool muted(const node& n, double t) const;
    void walk(std::uint32_t index, const route_subject& s, std::vector<std::uint32_t>& out) const;

    std::vector<node> nodes_;
    std::vector<std::string> values_;
    std::vector<label_matcher> label_matchers_;
    std::vector<std::uint32_t> interval_refs_;  // indices in intervals_
    std::vector<time_interval> intervals_;      // the named intervals the routes refer to
    std::vector<receiver_config> receivers_;
};

}  // namespace alerts
