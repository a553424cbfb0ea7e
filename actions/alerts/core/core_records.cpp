// core_records.cpp — export and restore of the core's persistent state (device records,
// cooldowns, recent ids) for the state stores.
#include <cmath>
#include <vector>

#include "core/alert_core.hpp"
#include "core/hash.hpp"

namespace alerts {

void alert_core::export_device(std::uint32_t device, record_sink& sink) const {
    const device_slot& d = slots_[device];
    device_record r;
    r.account = account_id(d.account);
    r.device = device_id(device);
    r.state = d.state;
    r.notified = d.notified;
    r.hold_ts = d.hold_ts;
    r.last_ts = d.last_ts;
    r.last_id = d.last_id;
    r.notified_ts = d.notified_ts;
    r.noise = static_cast<std::uint8_t>(d.flags & SLOT_NOISE_BITS);
    auto it = noise_.find(device);
    if (it != noise_.end()) {
        r.reminders_sent = it->second.reminders_sent;
        r.reminder_base = it->second.reminder_base;
        r.changes = it->second.changes.data();
        r.change_count = static_cast<std::uint32_t>(it->second.changes.size());
    }
    group_record group;
    std::vector<group_change_view> changes;
    if (d.flags & SLOT_GROUP) {
        if (auto g = groups_.find(device); g != groups_.end()) {
            group.down = g->second.down;
            group.updates = g->second.updates;
            group.last_sent = g->second.last_sent;
            changes.reserve(g->second.changes.size());
            for (const group_change& c : g->second.changes)
                changes.push_back({c.device, c.ts, c.down});
            group.changes = changes.data();
            group.change_count = static_cast<std::uint32_t>(changes.size());
        }
        r.group = &group;
    }
    sink.on_device(r);
}

void alert_core::export_cooldown(std::uint64_t key, record_sink& sink) const {
    auto it = cooldowns_.find(key);
    if (it == cooldowns_.end()) return;
    cooldown_record r;
    r.account = account_id(slots_[it->second.device].account);
    r.device = device_id(it->second.device);
    r.region = it->second.region;
    r.last_alert = it->second.last_alert;
    sink.on_cooldown(r);
}

void alert_core::export_all(record_sink& sink) const {
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
        const device_slot& d = slots_[i];
        if (d.state != device_state::online || d.notified != device_state::online ||
            (d.flags & SLOT_NOISE_BITS) || noise_.count(i) != 0) {
            export_device(i, sink);
        }
    }
    for (const auto& entry : cooldowns_) export_cooldown(entry.first, sink);
    ids_.for_each([&](std::uint64_t id) { sink.on_id(id); });
}

std::uint32_t alert_core::restore_device(const device_record& r) {
    if (!config_) throw config_error("config: none installed");
    const std::uint32_t a = account_names_.find(r.account, hash_bytes(r.account));
    if (a == string_interner::npos || accounts_[a].cfg < 0) {
        return string_interner::npos;  // account left the config
    }
    if (r.device.empty() || r.device.size() > MAX_NAME_LENGTH) return string_interner::npos;
    const std::uint32_t device = intern_device(a, r.device, device_key_hash(r.account, r.device));
    device_slot& d = slots_[device];
    if (counts_pending(d)) --pending_;
    d.state = r.state;
    d.notified = r.notified;
    d.hold_ts = r.hold_ts;
    d.last_ts = r.last_ts;
    d.last_id = r.last_id;
    // An older version's record has no announced time: with no hold pending it is hold_ts (the
    // hold that announced the state started then); with one pending it is lost (its Online
    // then carries no `resolves`).
    d.notified_ts = std::isnan(r.notified_ts) && r.state == r.notified ? r.hold_ts : r.notified_ts;
    // A group's bit only on a group's key, a member's only on a device's (a key the store did not
    // write cannot make a device a group).
    const std::uint8_t kinds = is_group_id(r.device) ? SLOT_GROUP : SLOT_GROUPED;
    const std::uint8_t noise = static_cast<std::uint8_t>(
        (r.noise & SLOT_NOISE_BITS & ~(SLOT_GROUP | SLOT_GROUPED)) | (r.noise & kinds));
    d.flags = static_cast<std::uint8_t>((d.flags & ~SLOT_NOISE_BITS) | noise);
    if (r.change_count > 0 || r.reminders_sent > 0 || (r.noise & SLOT_REMIND)) {
        noise_entry& ne = noise_[device];
        ne.changes.assign(r.changes, r.changes + r.change_count);
        ne.reminders_sent = r.reminders_sent;
        ne.reminder_base = r.reminder_base;
    } else {
        noise_.erase(device);
    }
    if (r.group && (d.flags & SLOT_GROUP) && r.group->down > 0) {
        site_group& g = groups_[device];
        g.down = r.group->down;
        g.updates = r.group->updates;
        g.last_sent = r.group->last_sent;
        g.changes.clear();
        for (std::uint32_t i = 0; i < r.group->change_count; ++i) {
            const group_change_view& c = r.group->changes[i];
            g.changes.push_back(group_change{std::string(c.device), c.ts, c.down});
        }
    } else {
        groups_.erase(device);
    }
    if (counts_pending(d)) ++pending_;
    schedule(device);
    // The due times of the cameras behind a bridge depend on the bridge's record, which may
    // be restored after theirs.
    const device_config* cfg = device_cfg(device);
    if (cfg && !cfg->members.empty()) reschedule_members(device);
    return device;
}

void alert_core::restore_cooldown(const cooldown_record& r) {
    const std::uint32_t device = find_device(r.account, r.device);
    std::uint32_t index = device;
    if (index == string_interner::npos) {
        const std::uint32_t a = account_names_.find(r.account, hash_bytes(r.account));
        if (a == string_interner::npos || accounts_[a].cfg < 0) return;
        if (r.device.empty() || r.device.size() > MAX_NAME_LENGTH) return;
        index = intern_device(a, r.device, device_key_hash(r.account, r.device));
    }
    const std::uint64_t key = hash_combine(index, hash_bytes(r.region));
    cooldown_entry& c = cooldowns_[key];
    c.device = index;
    c.region = std::string(r.region);
    c.last_alert = r.last_alert;
}

void alert_core::restore_id(std::uint64_t id_hash) {
    if (!ids_.contains(id_hash)) ids_.insert(id_hash);
}

void alert_core::forget(const std::vector<std::uint32_t>& devices) {
    for (std::uint32_t i : devices) {
        if (i >= slots_.size()) continue;
        device_slot& d = slots_[i];
        device_slot blank;
        blank.account = d.account;
        blank.cfg = d.cfg;
        blank.hold_gen = static_cast<std::uint8_t>(d.hold_gen + 1);
        blank.flags = static_cast<std::uint8_t>(
            d.flags & SLOT_DIRTY);  // DIRTY is cleared by the next process()
        d = blank;
    }
    timers_.clear();
    cooldowns_.clear();
    noise_.clear();
    groups_.clear();
    ids_.clear();
    pending_ = 0;
}

void alert_core::export_cooldowns_of(std::uint32_t device, record_sink& sink) const {
    for (const auto& entry : cooldowns_) {
        if (entry.second.device == device) export_cooldown(entry.first, sink);
    }
}

void alert_core::batch_devices(std::vector<std::uint32_t>& out) const {
    // work_ is sorted by device: one entry per run.
    for (std::size_t i = 0; i < work_.size(); ++i) {
        if (i == 0 || work_[i].device != work_[i - 1].device) out.push_back(work_[i].device);
    }
}

std::uint32_t alert_core::cooldown_device(std::uint64_t key) const {
    auto it = cooldowns_.find(key);
    return it == cooldowns_.end() ? string_interner::npos : it->second.device;
}

}  // namespace alerts
