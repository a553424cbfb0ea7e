// redis_records.cpp — encoding and decoding of the Redis store's keys and records.
#include "redis/redis_records.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/config.hpp"
#include "core/types.hpp"

namespace alerts {

namespace {

char letter_of(device_state s) {
    switch (s) {
        case device_state::offline:
            return 'f';
        case device_state::internet_offline:
            return 'i';
        case device_state::online:
            break;
    }
    return 'n';
}

bool state_of(char c, device_state& s) {
    switch (c) {
        case 'n':
            s = device_state::online;
            return true;
        case 'f':
            s = device_state::offline;
            return true;
        case 'i':
            s = device_state::internet_offline;
            return true;
        default:
            return false;
    }
}

void append_double(std::string& out, double v) {
    out += ' ';
    append_redis_number(out, v);
}

template <class N>
void append_integer(std::string& out, N v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

std::size_t digits(std::size_t v) {
    std::size_t n = 1;
    while (v >= 10) v /= 10, ++n;
    return n;
}

// A cursor over a record's text; every take_* fails (false) at a malformed field.
struct reader {
    std::string_view s;

    bool space() {
        if (s.empty() || s[0] != ' ') return false;
        s.remove_prefix(1);
        return true;
    }
    std::string_view token() {
        const std::size_t end = s.find(' ');
        std::string_view t = s.substr(0, end);
        s.remove_prefix(t.size());
        return t;
    }
    bool take_double(double& v) {
        const std::string_view t = token();  // "-inf" included
        if (t.empty()) return false;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        return ec == std::errc() && end == t.data() + t.size();
    }
    template <class N>
    bool take_number(N& v, std::string_view t) {
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        return !t.empty() && ec == std::errc() && end == t.data() + t.size();
    }
    bool take_name(std::string_view& name) {
        const std::size_t colon = s.find(':');
        std::size_t len = 0;
        if (colon == std::string_view::npos || !take_number(len, s.substr(0, colon))) return false;
        if (s.size() < colon + 1 + len) return false;
        name = s.substr(colon + 1, len);
        s.remove_prefix(colon + 1 + len);
        return true;
    }
};

// The most changes a group record may hold (the core holds fewer: core_groups.cpp).
constexpr std::uint32_t MAX_RECORD_GROUP_CHANGES = 1U << 16;

// Version 4's group fields: " <down> <updates> <last_sent> <n>" then n times
// " <ts> <d|u> <len>:<device>".
bool take_group(reader& r, group_record& g, std::vector<group_change_view>& changes) {
    std::uint32_t count = 0;
    if (!r.space() || !r.take_number(g.down, r.token()) || !r.space() ||
        !r.take_number(g.updates, r.token()) || !r.space() || !r.take_double(g.last_sent) ||
        !r.space() || !r.take_number(count, r.token()) || count > MAX_RECORD_GROUP_CHANGES) {
        return false;
    }
    changes.clear();
    for (std::uint32_t i = 0; i < count; ++i) {
        group_change_view c;
        if (!r.space() || !r.take_double(c.ts) || !r.space()) return false;
        const std::string_view way = r.token();
        if ((way != "d" && way != "u") || !r.space() || !r.take_name(c.device)) return false;
        c.down = way == "d";
        changes.push_back(c);
    }
    g.changes = changes.data();
    g.change_count = count;
    return true;
}

}  // namespace

std::string redis_device_key(std::string_view prefix, std::string_view account,
                             std::string_view device) {
    std::string key;
    key.reserve(redis_device_key_size(prefix, account, device));
    append_redis_device_key(key, prefix, account, device);
    return key;
}

bool parse_redis_device_key(std::string_view prefix, std::string_view key,
                            std::string_view& account, std::string_view& device) {
    if (key.substr(0, prefix.size()) != prefix) return false;
    reader r{key.substr(prefix.size())};
    if (r.s.substr(0, 2) != "d:") return false;
    r.s.remove_prefix(2);
    // The length as redis_device_key writes it (no leading zero): one key per device.
    if (r.s.size() > 1 && r.s[0] == '0' && r.s[1] != ':') return false;
    if (!r.take_name(account) || r.s.empty() || r.s[0] != ':') return false;
    device = r.s.substr(1);
    return !device.empty();
}

std::string redis_id_key(std::string_view prefix, std::uint64_t id_hash) {
    std::string key;
    append_redis_id_key(key, prefix, id_hash);
    return key;
}

std::size_t redis_device_key_size(std::string_view prefix, std::string_view account,
                                  std::string_view device) {
    return prefix.size() + 2 + digits(account.size()) + 1 + account.size() + 1 + device.size();
}

void append_redis_device_key(std::string& out, std::string_view prefix, std::string_view account,
                             std::string_view device) {
    out.append(prefix).append("d:");
    append_integer(out, account.size());
    out += ':';
    out.append(account);
    out += ':';
    out.append(device);
}

void append_redis_id_key(std::string& out, std::string_view prefix, std::uint64_t id_hash) {
    static constexpr char HEX[] = "0123456789abcdef";
    out.append(prefix).append("i:");
    char buf[16];
    for (int i = 15; i >= 0; --i, id_hash >>= 4) buf[i] = HEX[id_hash & 0xf];
    out.append(buf, sizeof buf);
}

void append_redis_number(std::string& out, double v) {
    char buf[40];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

void redis_value_encoder::on_device(const device_record& r) {
    device_ = "2 ";
    device_ += letter_of(r.state);
    device_ += ' ';
    device_ += letter_of(r.notified);
    append_double(device_, r.hold_ts);
    append_double(device_, r.last_ts);
    device_ += ' ';
    append_integer(device_, r.last_id);
    append_double(device_, r.notified_ts);  // "nan" when unknown
    if (r.noise == 0 && r.change_count == 0 && r.reminders_sent == 0) return;
    // Version 3: the noise rules' fields (only for devices that have some; the others keep
    // the version 2 text that older actions read too).
    device_[0] = '3';
    device_ += ' ';
    append_integer(device_, static_cast<unsigned>(r.noise));
    device_ += ' ';
    append_integer(device_, r.reminders_sent);
    append_double(device_, r.reminder_base);
    const std::uint32_t n = std::min<std::uint32_t>(r.change_count, MAX_FLAP_CHANGES);
    device_ += ' ';
    append_integer(device_, n);
    for (std::uint32_t i = r.change_count - n; i < r.change_count; ++i) {
        append_double(device_, r.changes[i]);
    }
    if (!r.group) return;
    // Version 4: a site's group (docs/alerts.md, "Grouping").
    device_[0] = '4';
    const group_record& g = *r.group;
    device_ += ' ';
    append_integer(device_, g.down);
    device_ += ' ';
    append_integer(device_, g.updates);
    append_double(device_, g.last_sent);
    device_ += ' ';
    append_integer(device_, g.change_count);
    for (std::uint32_t i = 0; i < g.change_count; ++i) {
        append_double(device_, g.changes[i].ts);
        device_ += g.changes[i].down ? " d " : " u ";
        append_integer(device_, g.changes[i].device.size());
        device_ += ':';
        device_.append(g.changes[i].device);
    }
}

void redis_value_encoder::on_cooldown(const cooldown_record& r) {
    append_double(cooldowns_, r.last_alert);
    cooldowns_ += ' ';
    append_integer(cooldowns_, r.region.size());
    cooldowns_ += ':';
    cooldowns_.append(r.region);
}

std::string redis_value_encoder::finish() {
    std::string out = std::move(device_);
    out += cooldowns_;
    device_.clear();
    cooldowns_.clear();
    return out;
}

bool decode_redis_value(std::string_view text, std::string_view account, std::string_view device,
                        record_sink& sink) {
    reader r{text};
    device_record d;
    d.account = account;
    d.device = device;
    // Version 2 adds the announced state's time after the last id, version 3 the noise rules'
    // fields; version 1 (older actions) is read too.
    const std::string_view version = r.token();
    if ((version != "1" && version != "2" && version != "3" && version != "4") || !r.space())
        return false;
    const std::string_view state = r.token();
    if (state.size() != 1 || !state_of(state[0], d.state) || !r.space()) return false;
    const std::string_view notified = r.token();
    if (notified.size() != 1 || !state_of(notified[0], d.notified) || !r.space()) return false;
    if (!r.take_double(d.hold_ts) || !r.space() || !r.take_double(d.last_ts) || !r.space() ||
        !r.take_number(d.last_id, r.token())) {
        return false;
    }
    if (version != "1" && (!r.space() || !r.take_double(d.notified_ts))) return false;
    double changes[MAX_FLAP_CHANGES];
    if (version == "3" || version == "4") {
        unsigned noise = 0;
        std::uint32_t count = 0;
        if (!r.space() || !r.take_number(noise, r.token()) || noise > 255 || !r.space() ||
            !r.take_number(d.reminders_sent, r.token()) || !r.space() ||
            !r.take_double(d.reminder_base) || !r.space() || !r.take_number(count, r.token()) ||
            count > MAX_FLAP_CHANGES) {
            return false;
        }
        d.noise = static_cast<std::uint8_t>(noise);
        for (std::uint32_t i = 0; i < count; ++i) {
            if (!r.space() || !r.take_double(changes[i])) return false;
        }
        d.changes = changes;
        d.change_count = count;
    }
    group_record group;
    std::vector<group_change_view> group_changes;
    if (version == "4") {
        if (!take_group(r, group, group_changes)) return false;
        d.group = &group;
    }
    // Most records have no cooldown, a camera's a few: no heap for those.
    cooldown_record small[4];
    std::size_t n_small = 0;
    std::vector<cooldown_record> cooldowns;
    while (!r.s.empty()) {
        cooldown_record c;
        c.account = account;
        c.device = device;
        if (!r.space() || !r.take_double(c.last_alert) || !r.space() || !r.take_name(c.region)) {
            return false;
        }
        if (n_small < 4)
            small[n_small++] = c;
        else
            cooldowns.push_back(c);
    }
    sink.on_device(d);
    for (std::size_t i = 0; i < n_small; ++i) sink.on_cooldown(small[i]);
    for (const cooldown_record& c : cooldowns) sink.on_cooldown(c);
    return true;
}

}  // namespace alerts
