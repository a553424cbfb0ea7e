// core_noise.cpp — the noise rules of docs/alerts.md: flap detection, bridges (inhibition),
// maintenance windows and reminders.
//
// A device's timed work — its hold maturing, its flapping ending, its next reminder — is one
// due time, next_due(); service() does whatever is due by a time, one step at a time, and
// schedules the device again. Every store sees the same due time (redis_store keeps it in its
// due set), so the rules decide alike in memory, in a state dir and in Redis. A device that
// never changes state has no noise entry and none of the SLOT_FLAPPING.. bits: the hot path
// (a same-state heartbeat) never gets here.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>

#include "core/alert_core.hpp"
#include "core/utc_time.hpp"

namespace alerts {

namespace {

constexpr double NEVER = std::numeric_limits<double>::infinity();
constexpr std::uint32_t NPOS = string_interner::npos;

bool down(device_state s) { return s != device_state::online; }

constexpr std::uint8_t clear_bits(std::uint8_t flags, std::uint8_t bits) {
    return static_cast<std::uint8_t>(flags & ~bits);
}

}  // namespace

bool alert_core::counts_pending(const device_slot& d) {
    return hold_pending(d) && !(d.flags & SLOT_FLAPPING);
}

void alert_core::schedule(std::uint32_t device) {
    device_slot& d = slots_[device];
    ++d.hold_gen;  // older timers of the device are stale now
    const double due = next_due(device);
    const std::uint8_t group = (d.flags & SLOT_GROUP) ? 1 : 0;
    if (due < NEVER) timers_.push({due, device, d.hold_gen, group});
}

double alert_core::next_due(std::uint32_t device) const {
    const device_slot& d = slots_[device];
    if (d.flags & SLOT_GROUP) return group_due(device);
    if (d.flags & SLOT_FLAPPING) return flap_end(device);
    double due = NEVER;
    if (hold_pending(d)) due = hold_next(device);
    if (d.flags & SLOT_REMIND) due = std::min(due, reminder_due(device));
    return due;
}

double alert_core::flap_end(std::uint32_t device) const {
    auto it = noise_.find(device);
    const double last = it == noise_.end() || it->second.changes.empty()
                            ? slots_[device].hold_ts
                            : it->second.changes.back();
    return last + config_->flapping.quiet;
}

double alert_core::reminder_due(std::uint32_t device) const {
    auto it = noise_.find(device);
    if (it == noise_.end() || it->second.reminders_sent >= config_->reminders.size()) return NEVER;
    return it->second.reminder_base + config_->reminders[it->second.reminders_sent];
}

double alert_core::hold_next(std::uint32_t device) const {
    const device_slot& d = slots_[device];
    const double h = hold_due(d, config_->holds);
    double due = h;
    if (d.flags & SLOT_INHIBITED) {
        const std::uint32_t b = bridge_of(device);
        if (b != NPOS) {
            const device_slot& bs = slots_[b];
            if (down(bs.state)) return NEVER;  // waits for its bridge to come back
            // The bridge came back when its (pending or sent) Online's state began.
            const double back =
                hold_pending(bs) || std::isnan(bs.notified_ts) ? bs.hold_ts : bs.notified_ts;
            due = std::max(h, back + config_->holds.offline);
        }
    } else if (down(d.state)) {
        const std::uint32_t b = waits_on_bridge(device);
        // Its bridge is going down too: the camera's Offline waits for the bridge's.
        if (b != NPOS && !down(slots_[b].notified)) due = std::max(h, next_due(b));
    }
    if (d.flags & SLOT_SILENCED) {
        due = std::max(due, silenced_until(device, due, notif_for(d.state)));
    }
    return due;
}

bool alert_core::may_silence() const {
    return config_->has_maintenance || (silences_ && !silences_->silences.empty());
}

// The end of the windows and silences that hold back a notification of `type` (and `region`,
// for motion) of the device at `t`: `t` when none does. Windows and silences that overlap or
// touch chain up.
double alert_core::silenced_until(std::uint32_t device, double t, notif_type type,
                                  const region_config* region, std::string_view* by) const {
    if (!may_silence()) return t;
    const std::int32_t acfg = accounts_[slots_[device].account].cfg;
    const std::vector<maintenance_window>* windows = nullptr;
    if (config_->has_maintenance && acfg >= 0) {
        windows = &config_->accounts[static_cast<std::size_t>(acfg)].maintenance;
    }
    const bool any_silence = silences_ && !silences_->silences.empty();
    if ((!windows || windows->empty()) && !any_silence) return t;
    const std::string_view id = device_id(device);
    silence_subject subject;
    if (any_silence) {
        const device_config* cfg = device_cfg(device);
        subject.account = account_id(slots_[device].account);
        subject.device = id;
        subject.bridge = cfg ? std::string_view(cfg->bridge) : std::string_view();
        if (const site_config* site = cfg ? config_->site_of(*cfg) : nullptr)
            subject.site = site->id;
        subject.region = region ? std::string_view(region->name) : std::string_view();
        subject.type = type;
        subject.down = down(slots_[device].state);
    }
    double end = t;
    for (bool moved = true; moved;) {
        moved = false;
        if (windows) {
            for (const maintenance_window& w : *windows) {
                if (w.from <= end && end < w.until && (w.device.empty() || w.device == id)) {
                    if (by && end == t) *by = "maintenance";
                    end = w.until;
                    moved = true;
                }
            }
        }
        if (any_silence) {
            for (const silence& s : silences_->silences) {
                if (s.starts_at <= end && end < s.end() && silence_matches(s, subject)) {
                    if (by && end == t) *by = s.id;
                    end = s.end();
                    moved = true;
                }
            }
        }
    }
    return end;
}

bool alert_core::silenced_at(std::uint32_t device, double t, notif_type type) {
    if (!may_silence() || silenced_until(device, t, type) <= t) return false;
    ++result_.stats.silenced;
    if (options_.explain) explain_silence(device, type, t, t);
    return true;
}

void alert_core::explain(std::uint32_t device, notif_type type, const char* rule, double event_ts,
                         std::string by, std::string detail) {
    held_back h;
    h.device = device;
    h.type = type;
    h.rule = rule;
    h.ts = now_;
    h.event_ts = event_ts;
    h.by = std::move(by);
    h.detail = std::move(detail);
    result_.held.push_back(std::move(h));
}

// Which window or silence holds a notification back at `t`, and until when, in words.
void alert_core::explain_silence(std::uint32_t device, notif_type type, double t, double event_ts,
                                 const region_config* region) {
    std::string_view by;
    const double until = silenced_until(device, t, type, region, &by);
    const bool window = by == "maintenance";
    std::string detail = window ? "inside a maintenance window" : "silenced";
    if (until < NEVER) {
        detail += " until " + utc_time(until, "%Y-%m-%dT%H:%M:%SZ");
    } else {
        detail += " until the device is back online";
    }
    explain(device, type, window ? "maintenance" : "silence", event_ts,
            window ? std::string() : std::string(by), std::move(detail));
}

std::string alert_core::held_by(std::uint32_t device) const {
    const device_slot& d = slots_[device];
    if (!(d.flags & SLOT_SILENCED) || !may_silence()) return {};
    std::string_view by;
    const double due = hold_due(d, config_->holds);
    (void)silenced_until(device, std::max(due, now_), notif_for(d.state), nullptr, &by);
    return std::string(by);
}

// An until-resolved silence ends when this batch saw its device online (docs/alerts.md,
// "Silences"): listed for the store, which ends it where every container sees it.
void alert_core::note_resolved_silences() {
    std::vector<std::uint32_t> seen;
    bool listed = false;
    for (const silence& s : silences_->silences) {
        if (!s.until_resolved || !s.active_at(now_)) continue;
        if (!listed) {
            batch_devices(seen);
            std::sort(seen.begin(), seen.end());
            listed = true;
        }
        const std::uint32_t d = find_device(s.match.account, s.match.device);
        if (d == NPOS || !std::binary_search(seen.begin(), seen.end(), d)) continue;
        if (!down(slots_[d].state)) result_.resolved_silences.push_back(s.id);
    }
}

void alert_core::set_silences(std::shared_ptr<const silence_set> silences) {
    silences_ = std::move(silences);
    if (!config_) return;
    // Devices held back to the end of a silence that may have moved: their due times again.
    for (std::uint32_t d = 0; d < slots_.size(); ++d) {
        if (slots_[d].flags & SLOT_SILENCED) schedule(d);
    }
}

std::uint32_t alert_core::bridge_of(std::uint32_t device) const {
    const device_config* cfg = device_cfg(device);
    if (!cfg || cfg->bridge_cfg < 0) return NPOS;
    return configured_device(static_cast<std::uint32_t>(cfg->bridge_cfg));  // same account
}

// The bridge a down device's Offline defers to: down, not flapping, and gone down no later than
// bridge_grace seconds after the device did.
std::uint32_t alert_core::waits_on_bridge(std::uint32_t device) const {
    const std::uint32_t b = bridge_of(device);
    if (b == NPOS) return NPOS;
    const device_slot& bs = slots_[b];
    if (!down(bs.state) || (bs.flags & SLOT_FLAPPING)) return NPOS;
    const double since =
        down(bs.notified) && !std::isnan(bs.notified_ts) ? bs.notified_ts : bs.hold_ts;
    if (slots_[device].hold_ts < since - config_->bridge_grace) return NPOS;
    return b;
}

void alert_core::service(std::uint32_t device, double t, int depth) {
    int steps = 0;
    while (next_due(device) <= t) {
        if (++steps > 64 || !step(device, t, depth)) return;  // (never: each step progresses)
    }
    schedule(device);
}

bool alert_core::step(std::uint32_t device, double t, int depth) {
    device_slot& d = slots_[device];
    mark_dirty(device);
    if (d.flags & SLOT_GROUP) {
        flush_group(device);
        return true;
    }
    if (d.flags & SLOT_FLAPPING) {
        const double end = flap_end(device);
        if (end > t) return false;
        d.flags = clear_bits(d.flags, SLOT_FLAPPING);
        if (hold_pending(d)) ++pending_;  // its hold runs again (and has mostly passed)
        if (!silenced_at(device, end, notif_type::flapping_stopped)) {
            notification n;
            n.type = notif_type::flapping_stopped;
            n.device = device;
            n.recipients = &recipients_for(device, nullptr);
            n.event_ts = end - config_->flapping.quiet;  // the last change
            n.due_ts = end;
            n.state = d.state;
            emit(n);
        }
        return true;
    }
    const double reminder = (d.flags & SLOT_REMIND) ? reminder_due(device) : NEVER;
    const double hold = hold_pending(d) ? hold_next(device) : NEVER;
    if (std::min(reminder, hold) > t) return false;
    if (reminder <= hold) {
        noise_entry& ne = noise_[device];
        const std::uint32_t k = ++ne.reminders_sent;
        if (k >= config_->reminders.size()) {
            d.flags = clear_bits(d.flags, SLOT_REMIND);
            if (options_.explain)
                explain(device, notif_type::still_offline, "reminders", reminder, {},
                        "the last of " + std::to_string(config_->reminders.size()) +
                            " reminders: none after it while the device stays down");
        }
        if (!silenced_at(device, reminder, notif_type::still_offline)) {
            notification n;
            n.type = notif_type::still_offline;
            n.device = device;
            n.recipients = &recipients_for(device, nullptr);
            n.event_ts = std::isnan(d.notified_ts) ? d.hold_ts : d.notified_ts;
            n.due_ts = reminder;
            n.reminder = k;
            // Its thread is the outage's: the key of the Offline it reminds of.
            n.thread = make_notif_key(account_id(d.account), device_id(device), announced_as(d),
                                      n.event_ts);
            n.has_thread = true;
            emit(n, std::to_string(k));  // each reminder its own dedupKey
        }
        return true;
    }
    if (!(d.flags & SLOT_INHIBITED) && down(d.state)) {
        const std::uint32_t b = waits_on_bridge(device);
        if (b != NPOS) {
            if (down(slots_[b].notified)) {  // the bridge's Offline went out: this one is in it
                inhibit(device);
                return true;
            }
            // The bridge's own Offline is due too: it goes first, and inhibits this one.
            if (depth == 0) service(b, t, 1);
            return true;
        }
    }
    const double h = hold;
    if (!(d.flags & SLOT_INHIBITED)) {
        const double w = silenced_until(device, h, notif_for(d.state));
        if (w > t) {  // inside a maintenance window: held back to its end
            d.flags |= SLOT_SILENCED;
            ++result_.stats.silenced;
            if (options_.explain) explain_silence(device, notif_for(d.state), h, d.hold_ts);
            return true;
        }
    }
    emit_state(device, h);
    --pending_;
    return true;
}

void alert_core::note_change(std::uint32_t device, double ts) {
    const flapping_config& f = config_->flapping;
    device_slot& d = slots_[device];
    if (!f.enabled && !(d.flags & SLOT_FLAPPING)) return;
    noise_entry& ne = noise_[device];
    // Grown as changes come (not reserved for f.changes): most devices that change at all
    // change once or twice, and their entry is swept when they are idle again.
    std::vector<double>& c = ne.changes;
    if (c.size() >= f.changes) {
        c.erase(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(c.size() - f.changes + 1));
    }
    c.push_back(ts);
    if (!(d.flags & SLOT_FLAPPING) && f.enabled && c.size() >= f.changes &&
        ts - c[c.size() - f.changes] <= f.window) {
        start_flapping(device, ts);
    }
}

void alert_core::start_flapping(std::uint32_t device, double ts) {
    device_slot& d = slots_[device];
    d.flags = clear_bits(d.flags, SLOT_SILENCED | SLOT_INHIBITED | SLOT_REMIND) | SLOT_FLAPPING;
    d.hold_ts = ts;  // its pending hold is dropped; the state is tracked from here
    if (silenced_at(device, ts, notif_type::flapping_started)) return;
    notification n;
    n.type = notif_type::flapping_started;
    n.device = device;
    n.recipients = &recipients_for(device, nullptr);
    n.event_ts = ts;
    n.due_ts = ts;
    emit(n);
}

void alert_core::inhibit(std::uint32_t device) {
    device_slot& d = slots_[device];
    d.flags = clear_bits(d.flags, SLOT_SILENCED) | SLOT_INHIBITED;
    ++result_.stats.inhibited;
    if (options_.explain) {
        const device_config* cfg = device_cfg(device);
        const std::string bridge = cfg ? cfg->bridge : std::string();
        explain(device, notif_for(d.state), "bridge", d.hold_ts, bridge,
                "its bridge " + bridge + " is down: the bridge's notification covers it");
    }
    mark_dirty(device);
}

void alert_core::inhibit_members(std::uint32_t bridge, notification& n) {
    const device_config* cfg = device_cfg(bridge);
    const device_slot& b = slots_[bridge];
    n.has_affected = true;
    n.affected_at = static_cast<std::uint32_t>(result_.affected.size());
    for (std::uint32_t m : cfg->members) {
        const std::uint32_t member = configured_device(m);
        if (member == NPOS) continue;  // never seen: online
        const device_slot& md = slots_[member];
        if (!down(md.state) || !hold_pending(md) || (md.flags & (SLOT_FLAPPING | SLOT_INHIBITED)) ||
            md.hold_ts < b.hold_ts - config_->bridge_grace) {
            continue;
        }
        inhibit(member);
        schedule(member);
        result_.affected.push_back(member);
    }
    n.affected = static_cast<std::uint32_t>(result_.affected.size()) - n.affected_at;
}

// Drops the noise entries of devices whose changes are long past (twice the flapping window:
// an ETag that late is stale anyway in practice) and that are neither flapping nor reminded
// of: a device that changed state once costs nothing once it is idle again. Amortised: runs
// when the table has doubled since the last sweep, and once per flapping window of `now`.
void alert_core::sweep_noise() {
    const double horizon = now_ - 2 * config_->flapping.window;
    for (auto it = noise_.begin(); it != noise_.end();) {
        const device_slot& d = slots_[it->first];
        const bool idle = !(d.flags & (SLOT_FLAPPING | SLOT_REMIND)) &&
                          (it->second.changes.empty() || it->second.changes.back() < horizon);
        it = idle ? noise_.erase(it) : std::next(it);
    }
    sweep_at_ = std::max<std::size_t>(4096, 2 * noise_.size());
    swept_ = now_;
}

void alert_core::reschedule_members(std::uint32_t bridge) {
    const device_config* cfg = device_cfg(bridge);
    for (std::uint32_t m : cfg->members) {
        const std::uint32_t member = configured_device(m);
        if (member != NPOS && hold_pending(slots_[member])) schedule(member);
    }
}

}  // namespace alerts
