// core_sites.cpp — the rules of docs/alerts.md, "Sites and schedules" and "Tamper": a site's
// motion is announced only while it is armed, and a camera of an armed site that goes offline
// right after its last motion is announced at once, as PossibleTamper.
#include <string>

#include "core/alert_core.hpp"
#include "core/hash.hpp"

namespace alerts {

namespace {

// A device's last motion is kept as a cooldown entry under this name (so every store keeps it
// with the device's cooldowns, already); no config region can have it (config.cpp).
constexpr std::string_view MOTION_ENTRY = "\x01motion";

// The entry's key in the cooldown table (hash_combine(device, hash of the name), as
// cooled_down() keys a region's), the name's hash taken once.
std::uint64_t motion_key(std::uint32_t device) {
    static const std::uint64_t NAME_HASH = hash_bytes(MOTION_ENTRY);
    return hash_combine(device, NAME_HASH);
}

}  // namespace

const site_config* alert_core::site_of(std::uint32_t device) const {
    const device_config* cfg = device_cfg(device);
    return cfg ? config_->site_of(*cfg) : nullptr;
}

bool alert_core::disarmed(std::uint32_t device, const site_config& site, double ts,
                          const region_config& region) {
    if (config_->armed(site, ts)) return false;
    ++result_.stats.silenced;  // a schedule's quiet hours: not sent, not deferred
    if (options_.explain) {
        explain(device, notif_type::alert, "disarmed", ts, site.id,
                "motion in region '" + region.name + "' while site '" + site.id +
                    "' is disarmed by its schedule");
    }
    return true;
}

bool alert_core::note_motion(std::uint32_t device, double ts) {
    const std::uint64_t key = motion_key(device);
    auto [it, inserted] = cooldowns_.try_emplace(key);
    if (inserted) {
        it->second.device = device;
        it->second.region = std::string(MOTION_ENTRY);
    } else if (it->second.last_alert >= ts) {
        return false;
    }
    it->second.last_alert = ts;
    changes_.cooldowns.push_back(key);
    return true;
}

double alert_core::last_motion(std::uint32_t device) const {
    auto it = cooldowns_.find(motion_key(device));
    return it == cooldowns_.end() ? -1 : it->second.last_alert;
}

// A camera that was up and announced up goes down (offline, or its internet) at most
// tamper.window seconds after its last motion, while its site is armed, not flapping and not
// silenced for PossibleTamper.
bool alert_core::tampered(std::uint32_t device, const etag& e, device_state before) {
    if (!config_->tamper.enabled || e.state == device_state::online ||
        before != device_state::online) {
        return false;
    }
    const device_slot& d = slots_[device];
    if (d.notified != device_state::online || (d.flags & SLOT_FLAPPING)) return false;
    const site_config* site = site_of(device);
    if (!site || !config_->armed(*site, e.ts)) return false;
    const double motion = last_motion(device);
    if (motion < 0 || motion > e.ts || e.ts - motion > config_->tamper.window) return false;
    if (may_silence() && silenced_until(device, e.ts, notif_type::possible_tamper) > e.ts) {
        if (options_.explain) explain_silence(device, notif_type::possible_tamper, e.ts, e.ts);
        return false;  // the Offline's hold goes on as usual
    }
    return true;
}

}  // namespace alerts
