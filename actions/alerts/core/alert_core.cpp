// alert_core.cpp — configuration binding and the activation pipeline of the decision core:
// resolve -> sort by (device, ts) -> apply -> mature due timers -> stats.
#include "core/alert_core.hpp"

#include <algorithm>
#include <cstring>

#include "core/hash.hpp"

namespace alerts {

namespace {

// Device keys are the 4-byte account index followed by the device id.
std::string_view device_key(char (&buf)[4 + MAX_NAME_LENGTH], std::uint32_t account,
                            std::string_view device) {
    std::memcpy(buf, &account, 4);
    std::memcpy(buf + 4, device.data(), device.size());
    return std::string_view(buf, 4 + device.size());
}

}  // namespace

alert_core::alert_core(core_options options) : options_(std::move(options)) {}

std::uint64_t alert_core::device_key_hash(std::string_view account, std::string_view device) {
    return hash_combine(hash_bytes(account), hash_bytes(device));
}

std::uint64_t alert_core::id_hash(std::uint64_t device_key_hash, std::string_view id) {
    return hash_combine(device_key_hash, hash_bytes(id, 0x51ed270b27d5a3c1ULL));
}

void alert_core::set_config(std::shared_ptr<const alert_config> config) {
    if (!config) return;
    if (config_ && config_->fingerprint == config->fingerprint) return;
    if (!config_ || config_->recent_ids != config->recent_ids) {
        ids_.reset(config->recent_ids);  // losing recent ids here is safe: see recent_ids.hpp
    }
    config_ = std::move(config);
    bind_accounts();
    bind_devices();
    rebuild_timers();  // holds, windows, bridges and reminders may all have moved
}

void alert_core::bind_accounts() {
    for (auto& a : accounts_) a.cfg = -1;
    for (std::size_t i = 0; i < config_->accounts.size(); ++i) {
        const account_config& ac = config_->accounts[i];
        const std::uint64_t h = hash_bytes(ac.id);
        std::uint32_t index = account_names_.find(ac.id, h);
        if (index == string_interner::npos) {
            index = account_names_.insert(ac.id, h);
            accounts_.push_back(account_entry{h, -1, false});
        }
        accounts_[index].cfg = static_cast<std::int32_t>(i);
        accounts_[index].foreign =
            !options_.datacenter.empty() && ac.datacenter != options_.datacenter;
    }
}

void alert_core::bind_devices() {
    cfg_devices_.assign(config_->devices.size(), string_interner::npos);
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
        device_slot& d = slots_[i];
        d.cfg = -1;
        const std::int32_t acfg = accounts_[d.account].cfg;
        if (acfg < 0) continue;
        const auto& devices = config_->accounts[static_cast<std::size_t>(acfg)].devices;
        auto it = devices.find(std::string(device_id(i)));
        if (it == devices.end()) continue;
        d.cfg = static_cast<std::int32_t>(it->second);
        cfg_devices_[it->second] = i;
    }
}

void alert_core::rebuild_timers() {
    timers_.clear();
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
        const device_slot& d = slots_[i];
        if (hold_pending(d) || (d.flags & SLOT_NOISE_BITS)) schedule(i);
    }
}

const device_config* alert_core::device_cfg(std::uint32_t device) const {
    const std::int32_t cfg = slots_[device].cfg;
    return cfg < 0 ? nullptr : &config_->devices[static_cast<std::size_t>(cfg)];
}

std::uint32_t alert_core::intern_device(std::uint32_t account, std::string_view device,
                                        std::uint64_t h) {
    char buf[4 + MAX_NAME_LENGTH];
    const std::string_view key = device_key(buf, account, device);
    std::uint32_t index = device_keys_.find(key, h);
    if (index != string_interner::npos) return index;
    index = device_keys_.insert(key, h);
    device_slot d;
    d.account = account;
    const std::int32_t acfg = accounts_[account].cfg;
    if (acfg >= 0) {
        const auto& devices = config_->accounts[static_cast<std::size_t>(acfg)].devices;
        auto it = devices.find(std::string(device));
        if (it != devices.end()) {
            d.cfg = static_cast<std::int32_t>(it->second);
            cfg_devices_[it->second] = index;
        }
    }
    // Grown by half, not doubled: on average a quarter of the capacity unused instead of half
    // (the slots are most of a device's memory; the copies cost little against a batch).
    if (slots_.size() == slots_.capacity()) slots_.reserve(slots_.size() + slots_.size() / 2 + 16);
    slots_.push_back(d);
    return index;
}

std::uint32_t alert_core::find_device(std::string_view account, std::string_view device) const {
    return find_device(account, device, device_key_hash(account, device));
}

std::uint32_t alert_core::find_device(std::string_view account, std::string_view device,
                                      std::uint64_t h) const {
    const std::uint32_t a = account_names_.find(account, hash_bytes(account));
    if (a == string_interner::npos || device.size() > MAX_NAME_LENGTH) return string_interner::npos;
    char buf[4 + MAX_NAME_LENGTH];
    return device_keys_.find(device_key(buf, a, device), h);
}

bool alert_core::accepts(etag_type t) const {
    return t == etag_type::motion ? options_.motion : options_.state;
}

void alert_core::resolve(const std::vector<etag>& batch) {
    batch_stats& st = result_.stats;
    work_.clear();
    for (std::uint32_t pos = 0; pos < batch.size(); ++pos) {
        const etag& e = batch[pos];
        if (e.type == etag_type::heartbeat) ++st.heartbeats;
        if (!accepts(e.type)) {
            ++st.ignored;
            continue;
        }
        const std::uint64_t ah = hash_bytes(e.account);
        const std::uint32_t a = account_names_.find(e.account, ah);
        if (a == string_interner::npos || accounts_[a].cfg < 0) {
            ++st.unknown;
            continue;
        }
        if (accounts_[a].foreign) {
            ++st.foreign;
            continue;
        }
        if (is_group_id(e.device)) {  // a site's group (etag_fields refuses it already)
            ++st.rejected;
            continue;
        }
        const std::uint64_t dh = hash_combine(ah, hash_bytes(e.device));
        const std::uint32_t device = intern_device(a, e.device, dh);
        const std::uint64_t id = e.id.empty() ? 0 : id_hash(dh, e.id);
        work_.push_back(work_item{e.ts, device, pos, id});
    }
    std::sort(work_.begin(), work_.end(), [](const work_item& x, const work_item& y) {
        if (x.device != y.device) return x.device < y.device;
        if (x.ts != y.ts) return x.ts < y.ts;
        return x.pos < y.pos;
    });
}

const batch_result& alert_core::process(const std::vector<etag>& batch, double now) {
    if (!config_) throw config_error("config: none installed");
    for (std::uint32_t d : changes_.devices)
        slots_[d].flags &= static_cast<std::uint8_t>(~SLOT_DIRTY);
    changes_.devices.clear();
    changes_.cooldowns.clear();
    changes_.ids.clear();
    result_.notifications.clear();
    result_.affected.clear();
    result_.listed.clear();
    result_.lists.clear();
    result_.resolved_silences.clear();
    result_.held.clear();
    result_.stats = batch_stats{};
    result_.stats.etags = batch.size();
    now_ = now;

    resolve(batch);
    for (const work_item& w : work_) apply(batch[w.pos], w);
    mature_due_timers();
    if (!noise_.empty() &&
        (noise_.size() >= sweep_at_ || now_ - swept_ > config_->flapping.window)) {
        sweep_noise();
    }
    if (silences_) note_resolved_silences();
    finish_stats();
    return result_;
}

void alert_core::finish_stats() {
    batch_stats& st = result_.stats;
    st.pending = pending_;
    st.devices = slots_.size();
    delays_.clear();
    for (const notification& n : result_.notifications) {
        delays_.push_back(n.delay);
        if (n.late) ++st.late;
    }
    if (delays_.empty()) return;
    st.alert_delay.max = *std::max_element(delays_.begin(), delays_.end());
    auto mid = delays_.begin() + static_cast<std::ptrdiff_t>((delays_.size() - 1) / 2);
    std::nth_element(delays_.begin(), mid, delays_.end());
    st.alert_delay.p50 = *mid;
}

std::size_t alert_core::memory_bytes() const {
    return account_names_.memory_bytes() + accounts_.capacity() * sizeof(account_entry) +
           device_keys_.memory_bytes() + slots_.capacity() * sizeof(device_slot) +
           timers_.memory_bytes() + ids_.memory_bytes() +
           cooldowns_.size() * (sizeof(cooldown_entry) + 32) +
           cooldowns_.bucket_count() * sizeof(void*) +
           noise_.size() * (sizeof(noise_entry) + 32 +
                            (config_ ? config_->flapping.changes : 0) * sizeof(double)) +
           noise_.bucket_count() * sizeof(void*) + groups_.size() * (sizeof(site_group) + 32) +
           groups_.bucket_count() * sizeof(void*);
}

}  // namespace alerts
