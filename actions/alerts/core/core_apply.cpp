// core_apply.cpp — the rules of docs/alerts.md, "Behaviour", applied to one device at a time:
// duplicates and stale events, hold timers, state changes and flaps, motion with region
// sensitivity and per-region cooldown, and recipient fallback region -> device -> account.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/alert_core.hpp"
#include "core/hash.hpp"

namespace alerts {

namespace {

std::uint32_t short_id(std::uint64_t id) { return static_cast<std::uint32_t>(id) | 1U; }

}  // namespace

bool alert_core::is_duplicate(const device_slot& d, const etag& e, const work_item& w) const {
    if (w.id == 0) return false;
    if (ids_.contains(w.id)) return true;
    // Forgotten by the ring (or lost with a restart without a state dir): the device's last
    // applied event, if it is this one, still tells.
    return e.ts == d.last_ts && d.last_id == short_id(w.id);
}

void alert_core::apply(const etag& e, const work_item& w) {
    if (slots_[w.device].last_ts > now_ + options_.trusted_future) distrust_future(w.device, e.ts);
    device_slot& d = slots_[w.device];
    if (is_duplicate(d, e, w)) {
        ++result_.stats.duplicates;
        return;
    }
    if (e.ts < d.last_ts) {
        ++result_.stats.stale;
        return;
    }
    mature_if_due(w.device, e.ts);
    const bool effect =
        e.type == etag_type::motion ? apply_motion(w.device, e) : apply_state(w.device, e);
    if (w.id != 0) ids_.insert(w.id);
    // The stale horizon moves with every status and every event that changed the device, not
    // with same-state heartbeats or ignored motion (most of the stream, which leaves nothing
    // to persist): so every store — one process, a state dir, Redis shared by many
    // containers — decides staleness alike (docs/alerts.md, "Behaviour").
    if (!effect && e.type != etag_type::status) return;
    device_slot& after = slots_[w.device];
    after.last_ts = e.ts;
    if (w.id != 0) {
        after.last_id = short_id(w.id);
        changes_.ids.push_back(w.id);
    }
    mark_dirty(w.device);
}

// The device's stale horizon lies beyond now + trusted_future: an ETag from the future was
// applied before ALERT_MAX_FUTURE_SECONDS rejected such ETags, and every later ETag of the
// device would be stale for good. Its times from then are dropped: no horizon (this ETag is
// applied), a hold or flapping that began then begins at this ETag, and the flap detector
// forgets the changes it counted then. The repaired record is stored with this batch.
void alert_core::distrust_future(std::uint32_t device, double ts) {
    const double limit = now_ + options_.trusted_future;
    device_slot& d = slots_[device];
    d.last_ts = -std::numeric_limits<double>::infinity();
    d.last_id = 0;
    if (d.hold_ts > limit) d.hold_ts = ts;
    if (auto it = noise_.find(device); it != noise_.end()) {
        std::vector<double>& c = it->second.changes;
        c.erase(std::remove_if(c.begin(), c.end(), [&](double t) { return t > limit; }), c.end());
    }
    schedule(device);
    mark_dirty(device);
}

void alert_core::mark_dirty(std::uint32_t device) {
    device_slot& d = slots_[device];
    if (d.flags & SLOT_DIRTY) return;
    d.flags |= SLOT_DIRTY;
    changes_.devices.push_back(device);
}

bool alert_core::apply_state(std::uint32_t device, const etag& e) {
    device_slot& d = slots_[device];
    if (e.state == d.state) {
        ++result_.stats.ignored;  // the hot path: a same-state heartbeat
        return false;
    }
    const bool was_pending = counts_pending(d);
    const device_state before = d.state;
    if (d.flags & SLOT_FLAPPING) {
        // Flapping: the state is tracked, no hold runs (docs/alerts.md, "Flapping").
        d.state = e.state;
        d.hold_ts = e.ts;  // when the current state began
        ++result_.stats.flapping;
        if (options_.explain)
            explain(device, notif_for(e.state), "flapping", e.ts, {},
                    "the device is flapping: no state notification until it is stable");
    } else {
        const double held_since = d.hold_ts;
        const bool held_elsewhere = (d.flags & (SLOT_SILENCED | SLOT_INHIBITED)) != 0;
        if (observe_state(d, e.state, e.ts) == state_effect::flap && !held_elsewhere) {
            // Back to the announced state before the hold ended: nothing was sent.
            if (options_.explain)
                explain(device, notif_for(before), "hold", held_since, {},
                        std::string("back ") + std::string(name_of(e.state)) + " after " +
                            std::to_string(static_cast<long long>(e.ts - held_since)) +
                            " s, inside the " +
                            std::to_string(static_cast<long long>(config_->holds.of(before))) +
                            " s hold");
        }
        d.flags &= static_cast<std::uint8_t>(~(SLOT_SILENCED | SLOT_INHIBITED));
        // Reminders follow a device that stays down; back up (observed), they stop.
        if (e.state == device_state::online) d.flags &= static_cast<std::uint8_t>(~SLOT_REMIND);
    }
    note_change(device, e.ts);
    // Gone right after motion while armed: announced now, instead of after the hold.
    if (tampered(device, e, before)) emit_state(device, e.ts, true);
    const bool now_pending = counts_pending(slots_[device]);
    if (was_pending != now_pending) {
        if (now_pending)
            ++pending_;
        else
            --pending_;
    }
    schedule(device);
    const device_config* cfg = device_cfg(device);
    if (cfg && !cfg->members.empty() &&
        (before == device_state::online) != (e.state == device_state::online)) {
        reschedule_members(device);  // a bridge went down or came back
    }
    mark_dirty(device);
    return true;
}

void alert_core::mature_if_due(std::uint32_t device, double t) {
    const device_slot& d = slots_[device];
    if (hold_pending(d) || (d.flags & SLOT_NOISE_BITS)) {
        if (next_due(device) <= t) service(device, t);
    }
}

void alert_core::mature_due_timers() {
    while (!timers_.empty() && timers_.top().due <= now_) {
        const hold_timer t = timers_.top();
        timers_.pop();
        if (slots_[t.device].hold_gen != t.gen) continue;  // rescheduled since
        service(t.device, now_);
    }
}

void alert_core::emit_state(std::uint32_t device, double due_ts, bool tamper) {
    device_slot& d = slots_[device];
    const device_state was = d.notified;
    const double was_ts = d.notified_ts;
    notification n;
    n.due_ts = due_ts;
    n.event_ts = d.hold_ts;
    const notif_type was_as = announced_as(d);
    const bool grouped = (d.flags & SLOT_GROUPED) != 0;
    n.type = settle(d);
    n.device = device;
    d.flags &=
        static_cast<std::uint8_t>(~(SLOT_SILENCED | SLOT_INHIBITED | SLOT_REMIND | SLOT_TAMPER));
    mark_dirty(device);
    // Its site's group announces it (core_groups.cpp): the outage, a change between two down
    // states (nothing new to say), the return. A tamper bypasses the group.
    if (!tamper && n.type != notif_type::online && (grouped || join_group(device, due_ts))) {
        const device_config* cfg = device_cfg(device);
        if (!grouped && cfg && !cfg->members.empty()) inhibit_members(device, n);
        return;
    }
    if (grouped && n.type == notif_type::online && leave_group(device, due_ts)) return;
    n.recipients = &recipients_for(device, nullptr);
    if (tamper) {
        n.type = notif_type::possible_tamper;
        n.motion_ts = last_motion(device);
        slots_[device].flags |= SLOT_TAMPER;  // its reminders and its Online refer to it
    }
    // An Online names the Offline/InternetOffline it ends (unknown only for a device whose
    // record an older version wrote while this hold was pending, or whose outage its site's
    // group announced before a config change took the group away).
    if (n.type == notif_type::online && was != device_state::online && !std::isnan(was_ts) &&
        !grouped) {
        n.resolves =
            make_notif_key(account_id(slots_[device].account), device_id(device), was_as, was_ts);
        n.has_resolves = true;
        n.thread = n.resolves;
        n.has_thread = true;
    }
    if (n.type != notif_type::online) {
        if (!config_->reminders.empty()) {
            noise_entry& ne = noise_[device];
            ne.reminder_base = now_;
            ne.reminders_sent = 0;
            slots_[device].flags |= SLOT_REMIND;
        }
        const device_config* cfg = device_cfg(device);
        if (cfg && !cfg->members.empty()) inhibit_members(device, n);
    }
    emit(n);
}

bool alert_core::apply_motion(std::uint32_t device, const etag& e) {
    const device_config* cfg = device_cfg(device);
    const region_config* region = cfg ? cfg->find_region(e.region) : nullptr;
    if (!region || !region->enabled || !(e.magnitude >= region->sensitivity)) {
        ++result_.stats.ignored;
        return false;
    }
    if (const site_config* site = site_of(device)) {
        // Its time is kept for tamper detection, even when nothing is sent.
        const bool kept = config_->tamper.enabled && note_motion(device, e.ts);
        if (disarmed(device, *site, e.ts, *region)) return kept;
    }
    if (may_silence() && silenced_until(device, e.ts, notif_type::alert, region) > e.ts) {
        ++result_.stats.silenced;  // inside a window or a silence: not sent, not deferred
        if (options_.explain) explain_silence(device, notif_type::alert, e.ts, e.ts, region);
        return false;
    }
    if (!cooled_down(device, *region, e.ts)) {
        ++result_.stats.suppressed;
        return false;
    }
    notification n;
    n.type = notif_type::alert;
    n.device = device;
    n.region = region;
    n.recipients = &recipients_for(device, region);
    n.event_ts = e.ts;
    n.due_ts = e.ts;
    emit(n, e.id);
    return true;
}

bool alert_core::cooled_down(std::uint32_t device, const region_config& region, double ts) {
    if (region.cooldown <= 0) return true;
    const std::uint64_t key = hash_combine(device, hash_bytes(region.name));
    auto [it, inserted] = cooldowns_.try_emplace(key);
    // A last alert beyond now + trusted_future is one from the future (see distrust_future).
    if (!inserted && ts - it->second.last_alert < region.cooldown &&
        it->second.last_alert <= now_ + options_.trusted_future) {
        return false;
    }
    if (inserted) {
        it->second.device = device;
        it->second.region = region.name;
    }
    it->second.last_alert = ts;
    changes_.cooldowns.push_back(key);
    return true;
}

const recipient_list& alert_core::recipients_for(std::uint32_t device,
                                                 const region_config* region) const {
    if (region && !region->recipients.empty()) return region->recipients;
    const device_config* cfg = device_cfg(device);
    if (cfg && !cfg->recipients.empty()) return cfg->recipients;
    const std::int32_t acfg = accounts_[slots_[device].account].cfg;
    static const recipient_list NO_RECIPIENTS;
    return acfg < 0 ? NO_RECIPIENTS : config_->accounts[static_cast<std::size_t>(acfg)].recipients;
}

void alert_core::emit(notification n, std::string_view event_id) {
    n.account = slots_[n.device].account;
    n.key =
        make_notif_key(account_id(n.account), device_id(n.device), n.type, n.event_ts,
                       n.region ? std::string_view(n.region->name) : std::string_view(), event_id);
    n.publish_ts = now_;
    n.delay = now_ - n.due_ts;
    n.late = n.delay > config_->alert_delay_threshold;
    if (!n.has_thread &&
        (n.type == notif_type::offline || n.type == notif_type::internet_offline ||
         n.type == notif_type::possible_tamper || n.type == notif_type::site_offline)) {
        n.thread = n.key;  // an outage's first notification opens its thread
        n.has_thread = true;
    }
    if (!config_->routes.empty() && !route(n)) return;  // muted, or not sent resolved
    result_.notifications.push_back(n);
}

}  // namespace alerts
