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
    /// A linked device: names into the config, and alert_core::device_key_hash of them.
    struct linked {
        std::string_view account, device;
        std::uint64_t hash = 0;
    };
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

private:
    struct link_entry {
        std::string_view account, device;
        std::uint32_t first = 0, count = 0;  // in targets_
    };
    void add(const alert_config& config, const account_config& account,
             const device_config& device);

    std::vector<link_entry> entries_;
    std::vector<linked> targets_;
    std::unordered_multimap<std::uint64_t, std::uint32_t> index_;  // key hash -> entries_
};

}  // namespace alerts
