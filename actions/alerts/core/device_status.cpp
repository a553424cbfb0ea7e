// device_status.cpp — see device_status.hpp.
#include "core/device_status.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace alerts {

bool device_notable(const device_slot& d) {
    if (d.flags & SLOT_GROUP) return false;  // a site's group, not a device (core_groups.cpp)
    return d.notified != device_state::online || hold_pending(d) ||
           (d.flags & (SLOT_FLAPPING | SLOT_SILENCED | SLOT_INHIBITED)) != 0;
}

std::string device_status_json(const alert_core& core, std::uint32_t device) {
    const device_slot& d = core.slot(device);
    nlohmann::json j = {{"account", core.account_id(d.account)},
                        {"device", core.device_id(device)},
                        {"state", name_of(d.state)},
                        {"announced", name_of(d.notified)}};
    const device_config* cfg = core.device_cfg(device);
    if (cfg && !cfg->name.empty()) j["name"] = cfg->name;
    if (cfg && !cfg->bridge.empty()) j["bridge"] = cfg->bridge;
    if (const site_config* site = cfg ? core.config()->site_of(*cfg) : nullptr)
        j["site"] = site->id;
    if (d.flags & SLOT_TAMPER) j["tamper"] = true;
    const bool down = d.notified != device_state::online;
    if (down && !std::isnan(d.notified_ts)) {
        j["since"] = d.notified_ts;
    } else {
        j["since"] = d.hold_ts;
    }
    if (hold_pending(d) && !(d.flags & SLOT_FLAPPING)) {
        j["pending"] = true;
        j["holdSince"] = d.hold_ts;
    }
    if (d.flags & SLOT_FLAPPING) j["flapping"] = true;
    if (d.flags & SLOT_INHIBITED) j["inhibited"] = true;
    if (d.flags & SLOT_GROUPED) j["grouped"] = true;  // announced in its site's group
    if (d.flags & SLOT_SILENCED) {
        j["silenced"] = true;
        const std::string by = core.held_by(device);
        if (!by.empty()) j["heldBy"] = by;
    }
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // ids: any bytes
}

std::string held_back_json(const alert_core& core, const held_back& h) {
    nlohmann::json j = {{"ts", h.ts},
                        {"eventTs", h.event_ts},
                        {"account", core.account_id(core.slot(h.device).account)},
                        {"device", core.device_id(h.device)},
                        {"notifType", name_of(h.type)},
                        {"rule", h.rule},
                        {"detail", h.detail}};
    if (!h.by.empty()) j["by"] = h.by;
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // ids: any bytes
}

}  // namespace alerts
