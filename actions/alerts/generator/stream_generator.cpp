// stream_generator.cpp — per-device, per-minute event schedules and their serialisation.
#include "generator/stream_generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/hash.hpp"

namespace alerts {

namespace {

enum device_kind { NORMAL, MOTION, FLAPPER, OUTAGE, SLOW_FLAPPER };

constexpr double OUTAGE_CYCLE = 900;     // seconds
constexpr double SLOW_FLAP_CYCLE = 480;  // 6 minutes off, 2 on
constexpr double BRIDGE_CYCLE = 3600;    // 20 minutes without uplink per hour
constexpr std::uint32_t NO_BRIDGE = 0xffffffffU;

std::string format_account(std::uint32_t i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08u", i + 1);
    return buf;
}

std::string format_device(std::uint32_t i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", 0x10000000U + i);
    return buf;
}

// "g" + base-36 sequence number; returns the length written (at most 14).
std::size_t format_id(char* out, std::uint64_t seq) {
    char tmp[16];
    std::size_t n = 0;
    do {
        const auto digit = static_cast<int>(seq % 36);
        tmp[n++] = static_cast<char>(digit < 10 ? '0' + digit : 'a' + digit - 10);
        seq /= 36;
    } while (seq > 0);
    out[0] = 'g';
    for (std::size_t i = 0; i < n; ++i) out[1 + i] = tmp[n - 1 - i];
    return n + 1;
}

}  // namespace

stream_generator::stream_generator(generator_options options)
    : options_(options),
      accounts_(options.accounts ? options.accounts : std::max(1U, options.devices / 100)) {
    for (std::uint32_t a = 0; a < accounts_; ++a) account_names_.push_back(format_account(a));
    for (std::uint32_t d = 0; d < options_.devices; ++d) device_names_.push_back(format_device(d));
}

double stream_generator::rand01(std::uint32_t device, std::uint64_t minute,
                                std::uint64_t salt) const {
    const std::uint64_t h =
        hash_mix(hash_combine(hash_combine(options_.seed, device), hash_combine(minute, salt)));
    return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

int stream_generator::kind_of(std::uint32_t device) const {
    const double r = rand01(device, 0xffffffffULL, 1);
    if (r < options_.outage_fraction) return OUTAGE;
    if (r < options_.outage_fraction + options_.flap_fraction) return FLAPPER;
    if (r < options_.outage_fraction + options_.flap_fraction + options_.motion_fraction) {
        return MOTION;
    }
    if (r < options_.outage_fraction + options_.flap_fraction + options_.motion_fraction +
                options_.slow_flap_fraction) {
        return SLOW_FLAPPER;
    }
    return NORMAL;
}

std::uint32_t stream_generator::group_bridge(std::uint32_t device) const {
    if (options_.bridge_size == 0 || accounts_ == 0) return NO_BRIDGE;
    const std::uint32_t a = device % accounts_;
    const std::uint32_t k = device / accounts_;
    const std::uint32_t group = k / (options_.bridge_size + 1);
    return a + accounts_ * group * (options_.bridge_size + 1);
}

bool stream_generator::bridge_down(std::uint32_t bridge, double t) const {
    if (rand01(bridge, 0, 20) >= options_.bridge_outage_fraction) return false;
    const double offset = BRIDGE_CYCLE * rand01(bridge, 0, 21);
    return std::fmod(t - options_.start + BRIDGE_CYCLE - offset, BRIDGE_CYCLE) < 1200;
}

bool stream_generator::may_change(std::uint32_t device) const {
    const int kind = kind_of(device);
    if (kind == FLAPPER || kind == OUTAGE || kind == SLOW_FLAPPER) return true;
    const std::uint32_t b = group_bridge(device);
    return b != NO_BRIDGE && rand01(b, 0, 20) < options_.bridge_outage_fraction;
}

bool stream_generator::has_motion(std::uint32_t device) const { return kind_of(device) == MOTION; }

double stream_generator::minute_start() const {
    return options_.start + 60.0 * static_cast<double>(minute_);
}

device_state stream_generator::state_at(std::uint32_t device, double t) const {
    const std::uint32_t bridge = group_bridge(device);
    if (bridge == device && bridge_down(bridge, t)) return device_state::internet_offline;
    if (bridge != NO_BRIDGE && bridge != device &&
        bridge_down(bridge, t - 5 * rand01(device, 0, 22)))
        return device_state::offline;  // behind a bridge without uplink
    const int kind = kind_of(device);
    if (kind == SLOW_FLAPPER) {
        const double offset = SLOW_FLAP_CYCLE * rand01(device, 0, 23);
        const double phase =
            std::fmod(t - options_.start + SLOW_FLAP_CYCLE - offset, SLOW_FLAP_CYCLE);
        return phase < 360 ? device_state::offline : device_state::online;
    }
    if (kind == FLAPPER) {
        const auto minute = static_cast<std::uint64_t>((t - options_.start) / 60);
        const double m0 = options_.start + 60.0 * static_cast<double>(minute);
        if (rand01(device, minute, 2) >= 0.5) return device_state::online;
        const double down = m0 + 40 * rand01(device, minute, 3);
        const double up = down + 5 + 15 * rand01(device, minute, 4);
        return t >= down && t < up ? device_state::offline : device_state::online;
    }
    if (kind == OUTAGE) {
        const double offset = OUTAGE_CYCLE * rand01(device, 0, 5);
        const double phase = std::fmod(t - options_.start + OUTAGE_CYCLE - offset, OUTAGE_CYCLE);
        if (phase >= 420) return device_state::online;  // 7 minutes down per cycle
        return rand01(device, 0, 6) < 0.33 ? device_state::internet_offline : device_state::offline;
    }
    return device_state::online;
}

void stream_generator::add_transitions(std::uint32_t device, std::uint64_t minute, double m0) {
    // Status ETags wherever state_at changes inside this minute (sampled every second).
    device_state prev = state_at(device, m0 - 0.5);
    for (int s = 0; s < 60; ++s) {
        const double t = m0 + s + 0.5;
        const device_state now = state_at(device, t);
        if (now == prev) continue;
        gen_etag e;
        e.ts = t;
        e.device = device;
        e.type = etag_type::status;
        e.state = now;
        out_.push_back(e);
        prev = now;
    }
    (void)minute;
}

void stream_generator::add_device_minute(std::uint32_t device, std::uint64_t minute) {
    const double m0 = minute_start();
    const std::size_t before = out_.size();
    const int kind = kind_of(device);
    if (may_change(device)) add_transitions(device, minute, m0);
    const std::size_t used = out_.size() - before + (kind == MOTION ? 1 : 0);
    const std::uint32_t beats =
        options_.rate > used ? options_.rate - static_cast<std::uint32_t>(used) : 1;
    const double phase = rand01(device, 0, 7);
    for (std::uint32_t k = 0; k < beats; ++k) {
        double frac = phase + static_cast<double>(k) / beats;
        frac -= static_cast<double>(static_cast<int>(frac));
        gen_etag e;
        e.ts = m0 + 60 * frac;
        e.device = device;
        e.state = state_at(device, e.ts);
        out_.push_back(e);
    }
    if (kind == MOTION) {
        gen_etag e;
        e.ts = m0 + 60 * rand01(device, minute, 8);
        e.device = device;
        e.type = etag_type::motion;
        e.region = static_cast<std::uint8_t>(3 * rand01(device, minute, 9));
        e.magnitude = static_cast<float>(rand01(device, minute, 10));
        out_.push_back(e);
    }
}

void stream_generator::add_duplicates_and_order() {
    std::sort(out_.begin(), out_.end(), [](const gen_etag& a, const gen_etag& b) {
        return a.ts != b.ts ? a.ts < b.ts : a.device < b.device;
    });
    const std::size_t n = out_.size();
    for (std::size_t i = 0; i < n; ++i) {
        gen_etag& e = out_[i];
        e.seq = next_seq_++;
        e.arrival = e.ts + options_.reorder_window * rand01(e.device, e.seq, 11);
        if (options_.duplicate_rate > 0 && rand01(e.device, e.seq, 12) < options_.duplicate_rate) {
            gen_etag copy = e;
            copy.arrival += 2 * rand01(e.device, e.seq, 13);
            out_.push_back(copy);
        }
    }
    std::stable_sort(out_.begin(), out_.end(),
                     [](const gen_etag& a, const gen_etag& b) { return a.arrival < b.arrival; });
}

const std::vector<gen_etag>& stream_generator::next_minute() {
    out_.clear();
    out_.reserve(static_cast<std::size_t>(options_.devices) * (options_.rate + 1));
    for (std::uint32_t d = 0; d < options_.devices; ++d) add_device_minute(d, minute_);
    add_duplicates_and_order();
    ++minute_;
    return out_;
}

nlohmann::json stream_generator::config() const {
    using json = nlohmann::json;
    json accounts = json::object();
    for (std::uint32_t a = 0; a < accounts_; ++a) {
        char dc[16];
        std::snprintf(dc, sizeof dc, "c%03u", 1 + a % std::max(1U, options_.datacenters));
        accounts[account_names_[a]] = {
            {"datacenter", dc},
            {"recipients", {"ops@a" + account_names_[a] + ".example.com"}},
            {"devices", json::object()}};
    }
    for (std::uint32_t d = 0; d < options_.devices; ++d) {
        if (!has_motion(d)) continue;
        json regions = {
            {"door",
             {{"sensitivity", 0.5},
              {"level", "high"},
              {"cooldown", 60},
              {"recipients", {"guard@a" + account_names_[account_of(d)] + ".example.com"}}}},
            {"yard", {{"sensitivity", 0.7}, {"level", "normal"}, {"cooldown", 30}}},
            {"street", {{"enabled", false}}}};
        json device = {{"name", "Camera " + device_names_[d]}, {"regions", std::move(regions)}};
        if (d % 4 == 0) device["recipients"] = {"cam" + device_names_[d] + "@example.com"};
        accounts[account_names_[account_of(d)]]["devices"][device_names_[d]] = std::move(device);
    }
    if (options_.bridge_size > 0) {  // the topology: every device of a group, with its bridge
        for (std::uint32_t d = 0; d < options_.devices; ++d) {
            const std::uint32_t b = group_bridge(d);
            json& device = accounts[account_names_[account_of(d)]]["devices"][device_names_[d]];
            if (device.is_null()) device = json::object();
            if (b == d) {
                device["name"] = "Bridge " + device_names_[d];
                if (options_.sites) {
                    const std::string site = "site" + device_names_[d];
                    device["site"] = site;
                    accounts[account_names_[account_of(d)]]["sites"][site] = {
                        {"name", "Site of bridge " + device_names_[d]}};
                }
            } else if (b < options_.devices) {
                device["bridge"] = device_names_[b];
            }
        }
    }
    return {{"holds", {{"offline", 300}, {"online", 95}, {"internet_offline", 300}}},
            {"alert_delay_threshold", 300},
            {"accounts", std::move(accounts)}};
}

std::string stream_generator::batch_json(const gen_etag* first, std::size_t n, double now) const {
    std::string out = "{\"etags\":[";
    char buf[256];
    char id[16];
    for (std::size_t i = 0; i < n; ++i) {
        const gen_etag& e = first[i];
        id[format_id(id, e.seq)] = '\0';
        int len =
            std::snprintf(buf, sizeof buf,
                          "%s{\"id\":\"%s\",\"account\":\"%s\",\"device\":\"%s\",\"type\":\"%s\","
                          "\"ts\":%.3f",
                          i ? "," : "", id, account_names_[account_of(e.device)].c_str(),
                          device_names_[e.device].c_str(), name_of(e.type).data(), e.ts);
        out.append(buf, static_cast<std::size_t>(len));
        if (e.type == etag_type::motion) {
            len = std::snprintf(buf, sizeof buf, ",\"region\":\"%s\",\"magnitude\":%.3f}",
                                REGIONS[e.region], static_cast<double>(e.magnitude));
        } else {
            len = std::snprintf(buf, sizeof buf, ",\"state\":\"%s\"}", name_of(e.state).data());
        }
        out.append(buf, static_cast<std::size_t>(len));
    }
    std::snprintf(buf, sizeof buf, "],\"now\":%.3f}", now);
    return out + buf;
}

void stream_generator::to_etags(const gen_etag* first, std::size_t n, std::vector<etag>& out,
                                std::vector<char>& id_text) const {
    id_text.assign(n * 16, '\0');
    out.clear();
    for (std::size_t i = 0; i < n; ++i) {
        const gen_etag& g = first[i];
        etag e;
        char* id = id_text.data() + i * 16;
        e.id = std::string_view(id, format_id(id, g.seq));
        e.account = account_names_[account_of(g.device)];
        e.device = device_names_[g.device];
        e.type = g.type;
        e.state = g.state;
        e.ts = g.ts;
        if (g.type == etag_type::motion) {
            e.region = REGIONS[g.region];
            e.magnitude = g.magnitude;
        }
        out.push_back(e);
    }
}

}  // namespace alerts
