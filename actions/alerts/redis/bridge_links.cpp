// bridge_links.cpp — see bridge_links.hpp.
#include "redis/bridge_links.hpp"

#include "core/alert_core.hpp"

namespace alerts {

void bridge_links::build(const alert_config& config) {
    entries_.clear();
    targets_.clear();
    index_.clear();
    by_config_.assign(config.devices.size(), NO_CONFIG);
    for (const account_config& a : config.accounts) {
        for (const auto& entry : a.devices) {
            const device_config& d = config.devices[entry.second];
            if (d.bridge_cfg >= 0 || !d.members.empty() || (d.site >= 0 && a.grouping.enabled))
                add(config, a, entry.second);
        }
    }
    if (entries_.empty()) by_config_ = {};  // a config without links keeps no table either
}

// One device of a bridge group (a bridge, a camera behind one): its bridge, its cameras; and a
// device of a site whose account groups: the site's group.
void bridge_links::add(const alert_config& config, const account_config& account,
                       std::size_t index) {
    const device_config& device = config.devices[index];
    link_entry e{account.id, device.id, static_cast<std::uint32_t>(targets_.size()), 0};
    auto target = [&](std::size_t k) {
        const std::string& id = config.devices[k].id;
        targets_.push_back({account.id, id, alert_core::device_key_hash(account.id, id),
                            static_cast<std::uint32_t>(k)});
    };
    if (device.bridge_cfg >= 0) target(static_cast<std::size_t>(device.bridge_cfg));
    for (std::uint32_t m : device.members) target(m);
    if (device.site >= 0 && account.grouping.enabled) {  // its site's group (core_groups.cpp)
        const std::string& id = config.sites[static_cast<std::size_t>(device.site)].group_id;
        targets_.push_back({account.id, id, alert_core::device_key_hash(account.id, id)});
    }
    e.count = static_cast<std::uint32_t>(targets_.size()) - e.first;
    index_.emplace(alert_core::device_key_hash(account.id, device.id),
                   static_cast<std::uint32_t>(entries_.size()));
    by_config_[index] = static_cast<std::uint32_t>(entries_.size());
    entries_.push_back(e);
}

bridge_links::range bridge_links::of(std::string_view account, std::string_view device,
                                     std::uint64_t h) const {
    auto [lo, hi] = index_.equal_range(h);
    for (; lo != hi; ++lo) {
        const link_entry& e = entries_[lo->second];
        if (e.account == account && e.device == device) {
            return {targets_.data() + e.first, targets_.data() + e.first + e.count};
        }
    }
    return {};
}

}  // namespace alerts
