// stream_generator.hpp — a realistic, deterministic ETag stream for N devices across accounts
// (docs/alerts.md, "Actions"): `rate` ETags per device per minute (13 by default, as measured in
// the seed), mostly heartbeats reporting the current state, plus motion on cameras with motion
// regions, short offline flaps on flaky devices (shorter than the hold: nothing to send), and
// real outages (offline or internet_offline for minutes: Offline then Online). Optional
// duplicates (same id delivered twice) and reordering (arrival jittered after the event time).
// Everything derives from --seed, device and minute, so runs are reproducible.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/etag.hpp"

namespace alerts {

struct generator_options {
    std::uint32_t devices = 1000;
    std::uint32_t accounts = 0;     // 0: one account per 100 devices
    std::uint32_t datacenters = 1;  // accounts spread over c001, c002, …
    std::uint64_t seed = 1;
    double start = 1764460800;       // time of the first minute
    std::uint32_t rate = 13;         // ETags per device per minute
    double motion_fraction = 0.2;    // cameras with motion regions
    double flap_fraction = 0.02;     // flaky devices: a short offline spell most minutes
    double outage_fraction = 0.002;  // devices offline for 6–9 minutes every 15 minutes
    double duplicate_rate = 0;       // probability that an ETag is delivered twice
    double reorder_window = 0;       // seconds of arrival jitter (0: arrival = event time)
    // The noise rules' situations (docs/alerts.md, "Behaviour"); all off by default.
    double slow_flap_fraction = 0;  // devices off 6 minutes, on 2, all the time
    // Topology: each account's devices in groups of one bridge and bridge_size cameras behind
    // it (0: no bridges); a bridge_outage_fraction of the bridges lose their uplink 20 minutes
    // every hour, and their cameras go offline with them (within 5 s) and come back with them.
    std::uint32_t bridge_size = 0;
    // Each bridge's group is a site (docs/alerts.md, "Sites and schedules"), armed always: the
    // bridge names it, its cameras take it.
    bool sites = false;
    double bridge_outage_fraction = 0;
};

/// One generated ETag, compact; names are derived from the indices.
struct gen_etag {
    double ts = 0;          // event time
    double arrival = 0;     // when the consumer sees it
    std::uint64_t seq = 0;  // id number (the id is "g<seq>")
    std::uint32_t device = 0;
    float magnitude = 0;
    etag_type type = etag_type::heartbeat;
    device_state state = device_state::online;
    std::uint8_t region = 0;  // index in REGIONS
};

class stream_generator {
public:
    static constexpr const char* REGIONS[3] = {"door", "yard", "street"};

    explicit stream_generator(generator_options options);

    /// The ETags of the next minute, in arrival order.
    const std::vector<gen_etag>& next_minute();
    /// Start time of the minute the next call to next_minute() produces.
    double minute_start() const;

    std::uint32_t account_of(std::uint32_t device) const {
        return accounts_ == 0 ? 0 : device % accounts_;
    }
    bool has_motion(std::uint32_t device) const;

    /// The config matching the stream (accounts, data centers, motion regions).
    nlohmann::json config() const;
    /// One activation value: {"etags": [...], "now": now}, as compact JSON text.
    std::string batch_json(const gen_etag* first, std::size_t n, double now) const;
    /// Core ETags for [first, first + n); ids are written into `id_text` (kept alive by caller).
    void to_etags(const gen_etag* first, std::size_t n, std::vector<etag>& out,
                  std::vector<char>& id_text) const;

private:
    double rand01(std::uint32_t device, std::uint64_t minute, std::uint64_t salt) const;
    int kind_of(std::uint32_t device) const;
    void add_device_minute(std::uint32_t device, std::uint64_t minute);
    void add_transitions(std::uint32_t device, std::uint64_t minute, double m0);
    device_state state_at(std::uint32_t device, double t) const;
    /// The device's bridge, or the device itself when it is a bridge, or UINT32_MAX.
    std::uint32_t group_bridge(std::uint32_t device) const;
    bool bridge_down(std::uint32_t bridge, double t) const;
    bool may_change(std::uint32_t device) const;
    void add_duplicates_and_order();

    generator_options options_;
    std::uint32_t accounts_;
    std::vector<std::string> account_names_;
    std::vector<std::string> device_names_;
    std::uint64_t minute_ = 0;
    std::uint64_t next_seq_ = 1;
    std::vector<gen_etag> out_;
};

}  // namespace alerts
