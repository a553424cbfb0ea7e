// core_groups.cpp — the rules of docs/alerts.md, "Grouping": with grouping on for its account, a
// camera of a site whose Offline (or InternetOffline) is due joins its site's group instead of
// being announced by itself. The group's first member opens it; `group_wait` seconds later one
// SiteOffline names every camera down; later outages and returns go out together, as a
// SiteChanged, at most once per `group_interval`; the last camera back closes the group with a
// SiteOnline at once (it `resolves` the SiteOffline). A group that closes before its SiteOffline
// went out sends nothing (as a hold that ends early does).
//
// A group is kept as a device slot of its own (id "\x01" + the site's id, SLOT_GROUP), so every
// store keeps it, times it (redis_store's due set) and compares it as it does a device's; its
// state beyond the slot is a site_group (exported in device_record::group). Its slot: `hold_ts`
// is when it opened (its first member's Offline was due), `state` and `notified` are offline
// from its SiteOffline to its SiteOnline, `notified_ts` is then hold_ts. A camera announced
// down through its group carries SLOT_GROUPED; its return leaves the group.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/alert_core.hpp"
#include "core/hash.hpp"

namespace alerts {

namespace {

// The changes a group holds before it announces them early (its record is rewritten with every
// change: a bound on its size, and on each notification's list).
constexpr std::size_t MAX_GROUP_CHANGES = 1000;

bool is_sent(const device_slot& g) { return g.notified != device_state::online; }

}  // namespace

const device_config* alert_core::device_cfg_of(std::uint32_t account,
                                               std::string_view device) const {
    const std::int32_t acfg = accounts_[account].cfg;
    if (acfg < 0) return nullptr;
    const account_config& a = config_->accounts[static_cast<std::size_t>(acfg)];
    auto it = a.devices.find(std::string(device));
    return it == a.devices.end() ? nullptr : &config_->devices[it->second];
}

// The group slot of the device's site when its account groups (interned on first use);
// string_interner::npos when the device has no site or its account does not group.
std::uint32_t alert_core::group_of(std::uint32_t device) {
    const device_slot& d = slots_[device];
    const std::int32_t acfg = accounts_[d.account].cfg;
    if (acfg < 0 || !config_->accounts[static_cast<std::size_t>(acfg)].grouping.enabled) {
        return string_interner::npos;
    }
    const site_config* site = site_of(device);
    if (!site) return string_interner::npos;
    const std::uint32_t account = d.account;
    const std::string id = group_device_id(site->id);
    const std::uint64_t h = device_key_hash(account_id(account), id);
    const std::uint32_t g = intern_device(account, id, h);
    slots_[g].flags |= SLOT_GROUP;
    return g;
}

// The grouping of the group's account; nullptr when the account no longer groups or the site
// left the config.
const group_config* alert_core::group_cfg(std::uint32_t group) const {
    const std::int32_t acfg = accounts_[slots_[group].account].cfg;
    if (acfg < 0) return nullptr;
    const group_config& cfg = config_->accounts[static_cast<std::size_t>(acfg)].grouping;
    return cfg.enabled && group_site(group) ? &cfg : nullptr;
}

const site_config* alert_core::group_site(std::uint32_t group) const {
    const std::int32_t acfg = accounts_[slots_[group].account].cfg;
    if (acfg < 0) return nullptr;
    const account_config& a = config_->accounts[static_cast<std::size_t>(acfg)];
    auto it = a.sites.find(std::string(device_id(group).substr(1)));
    return it == a.sites.end() ? nullptr : &config_->sites[it->second];
}

// A change not yet announced: a camera that comes back before its outage was announced (or
// goes down again before its return was) cancels out.
void alert_core::note_group_change(site_group& g, std::string_view device, double ts, bool down) {
    auto it = std::find_if(g.changes.begin(), g.changes.end(),
                           [&](const group_change& c) { return c.device == device; });
    if (it != g.changes.end() && it->down != down) {
        g.changes.erase(it);
        return;
    }
    if (it != g.changes.end()) return;
    g.changes.push_back(group_change{std::string(device), ts, down});
}

// The camera's outage is due at `due_ts`: it joins its site's group (true), or it has none.
bool alert_core::join_group(std::uint32_t device, double due_ts) {
    const std::uint32_t g = group_of(device);
    if (g == string_interner::npos) return false;
    // Too many changes to hold (its record is rewritten with each): announced now, in more
    // notifications, each with a bounded list.
    if (auto full = groups_.find(g);
        full != groups_.end() && full->second.changes.size() >= MAX_GROUP_CHANGES) {
        flush_group(g, due_ts);
    }
    device_slot& gs = slots_[g];
    site_group& group = groups_[g];
    if (group.down == 0 && !is_sent(gs)) gs.hold_ts = due_ts;  // it opens the group
    ++group.down;
    // Listed since it went down (settle() made that its announced state's time).
    note_group_change(group, device_id(device), slots_[device].notified_ts, true);
    slots_[device].flags |= SLOT_GROUPED;
    if (options_.explain) {
        const site_config* site = site_of(device);
        explain(device, notif_for(slots_[device].state), "grouped", slots_[device].hold_ts,
                site->id,
                is_sent(gs) ? "announced with the next change of site '" + site->id + "'"
                            : "announced in the SiteOffline of site '" + site->id + "'");
    }
    schedule(g);
    mark_dirty(g);
    return true;
}

// The camera, announced down through its group, is back at `due_ts`: false when that group is
// gone (a config change: grouping off, the camera moved), and then its Online goes alone.
bool alert_core::leave_group(std::uint32_t device, double due_ts) {
    slots_[device].flags &= static_cast<std::uint8_t>(~SLOT_GROUPED);
    const std::uint32_t g = group_of(device);
    if (g == string_interner::npos) return false;
    auto it = groups_.find(g);
    if (it == groups_.end() || it->second.down == 0) return false;
    if (it->second.changes.size() >= MAX_GROUP_CHANGES) flush_group(g, due_ts);  // see join_group
    site_group& group = it->second;
    --group.down;
    note_group_change(group, device_id(device), slots_[device].notified_ts, false);
    if (group.down == 0) {
        if (is_sent(slots_[g])) {
            emit_group(g, group, notif_type::site_online, due_ts);  // the site is back
        }
        close_group(g);
        return true;
    }
    schedule(g);
    mark_dirty(g);
    return true;
}

double alert_core::group_due(std::uint32_t group) const {
    auto it = groups_.find(group);
    if (it == groups_.end()) return std::numeric_limits<double>::infinity();
    const site_group& g = it->second;
    const device_slot& gs = slots_[group];
    const group_config* cfg = group_cfg(group);
    if (!cfg) return 0;  // no longer grouped: dropped at once (flush_group)
    double due = std::numeric_limits<double>::infinity();
    if (!is_sent(gs)) {
        if (g.down > 0) due = gs.hold_ts + cfg->wait;
    } else if (!g.changes.empty()) {
        due = g.last_sent + cfg->interval;
    }
    return due;
}

// Whatever of the group is due: its SiteOffline, or the changes since its last notification;
// `at`: when, if not its due time (an early flush).
void alert_core::flush_group(std::uint32_t group, double at) {
    auto it = groups_.find(group);
    if (it == groups_.end()) return;
    site_group& g = it->second;
    if (!group_cfg(group)) {  // no longer grouped: its cameras' returns go out one by one
        close_group(group);
        return;
    }
    const double due = std::isnan(at) ? group_due(group) : at;
    device_slot& gs = slots_[group];
    if (!is_sent(gs)) {
        gs.state = gs.notified = device_state::offline;
        gs.notified_ts = gs.hold_ts;
        emit_group(group, g, notif_type::site_offline, due);
    } else if (!g.changes.empty()) {
        ++g.updates;
        emit_group(group, g, notif_type::site_changed, due);
    }
    g.last_sent = due;
    g.changes.clear();
    schedule(group);
    mark_dirty(group);
}

void alert_core::emit_group(std::uint32_t group, site_group& g, notif_type type, double due_ts) {
    const device_slot& gs = slots_[group];
    notification n;
    n.type = type;
    n.device = group;
    n.site = group_site(group);
    n.recipients = &recipients_for(group, nullptr);
    n.event_ts = gs.hold_ts;  // when the group opened: every notification of it names it
    n.due_ts = due_ts;
    n.down = g.down;
    n.listed_at = static_cast<std::uint32_t>(result_.listed.size());
    n.listed = static_cast<std::uint32_t>(g.changes.size());
    // In time order, then by id: the order the changes came in depends on the store (which
    // devices it had loaded, in which order their timers were pushed), this one does not.
    std::sort(g.changes.begin(), g.changes.end(), [](const group_change& a, const group_change& b) {
        return a.ts != b.ts ? a.ts < b.ts : a.device < b.device;
    });
    for (const group_change& c : g.changes) result_.listed.push_back({c.device, c.ts, c.down});
    const notif_key opened = make_notif_key(account_id(gs.account), device_id(group),
                                            notif_type::site_offline, gs.hold_ts);
    if (type != notif_type::site_offline) {
        n.thread = opened;
        n.has_thread = true;
    }
    if (type == notif_type::site_online) {
        n.resolves = opened;
        n.has_resolves = true;
    }
    if (type == notif_type::site_changed) {
        n.reminder = g.updates;
        emit(n, std::to_string(g.updates));  // each update its own dedupKey
        return;
    }
    emit(n);
}

// Back to a closed group: its next member opens a new one (with a new SiteOffline).
void alert_core::close_group(std::uint32_t group) {
    groups_.erase(group);
    device_slot& gs = slots_[group];
    gs.state = gs.notified = device_state::online;
    gs.hold_ts = 0;
    gs.notified_ts = std::numeric_limits<double>::quiet_NaN();
    schedule(group);
    mark_dirty(group);
}

}  // namespace alerts
