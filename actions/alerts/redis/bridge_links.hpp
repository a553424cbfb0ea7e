// bridge_links.hpp — the devices a device's decisions read besides its own record, from the
// config: a camera's bridge, a bridge's cameras, and the group of its site when its account
// groups (core_groups.cpp: kept as a device) — the Redis store reads and compares them with it
// (redis_store_read.cpp, "Bridges").
//
// Built once per config; empty for a config without bridges, and then nothing is looked up.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/config.hpp"

namespace alerts {

class bridge_links {
public:
    /// A linked device: names into the config, alert_core::device_key_hash of them, and its
    /// index in the config's devices (NO_CONFIG for a site's group, which is no config device).
    struct linked {
        std::string_view account, device;
        std::uint64_t hash = 0;
        std::uint32_t cfg = NO_CONFIG;
    };
    static constexpr std::uint32_t NO_CONFIG = 0xffffffffU;
    /// The linked devices of one device, in the config's order (its bridge, then its cameras).
    struct range {
        const linked* first = nullptr;
        const linked* last = nullptr;
        const linked* begin() const { return first; }
        const linked* end() const { return last; }
    };

    /// Replaces the links by those of `config`.
    void build(const alert_config& config);
    bool empty() const { return entries_.empty(); }
    /// The bridge and cameras of (account, device), whose key hash is `h` (none: empty).
    range of(std::string_view account, std::string_view device, std::uint64_t h) const;
    /// The same for the config's device `cfg` (an index into its devices): no hashing, no names
    /// compared, for a device the core has seen (alert_core::device_slot::cfg).
    range of_config(std::uint32_t cfg) const {
        if (cfg >= by_config_.size() || by_config_[cfg] == NO_CONFIG) return {};
        const link_entry& e = entries_[by_config_[cfg]];
        return {targets_.data() + e.first, targets_.data() + e.first + e.count};
    }

private:
    struct link_entry {
        std::string_view account, device;
        std::uint32_t first = 0, count = 0;  // in targets_
    };
    void add(const alert_config& config, const account_config& account, std::size_t device);

    std::vector<link_entry> entries_;
    std::vector<linked> targets_;
    std::unordered_multimap<std::uint64_t, std::uint32_t> index_;  // key hash -> entries_
    std::vector<std::uint32_t> by_config_;  // config device index -> entries_ (or NO_CONFIG)
};

}  // namespace alerts
