// record_codec.cpp — encoding and decoding of checksummed record frames.
#include "core/record_codec.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/config.hpp"
#include "core/hash.hpp"

namespace alerts {

namespace {

constexpr std::uint32_t MAGIC = 0x314a4c41;  // "ALJ1"
constexpr std::size_t HEADER = 4 + 4 + 8 + 8;

template <class T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_name(std::string& out, std::string_view s) {
    const std::size_t n = s.size() > 255 ? 255 : s.size();
    out += static_cast<char>(static_cast<unsigned char>(n));
    out.append(s.data(), n);
}

// Reads fields out of a payload; any overrun marks it bad.
class record_reader {
public:
    explicit record_reader(std::string_view data) : data_(data) {}
    template <class T>
    T get() {
        T v{};
        if (data_.size() < sizeof v) return fail(v);
        std::memcpy(&v, data_.data(), sizeof v);
        data_.remove_prefix(sizeof v);
        return v;
    }
    std::string_view name() {
        const auto n = get<std::uint8_t>();
        if (data_.size() < n) return fail(std::string_view());
        std::string_view s = data_.substr(0, n);
        data_.remove_prefix(n);
        return s;
    }
    device_state state() {
        const auto v = get<std::uint8_t>();
        if (v > 2) ok_ = false;
        return static_cast<device_state>(v);
    }
    bool ok() const { return ok_; }
    bool done() const { return data_.empty(); }

private:
    template <class T>
    T fail(T v) {
        ok_ = false;
        data_ = {};
        return v;
    }
    std::string_view data_;
    bool ok_ = true;
};

// The most changes a group record may hold (the core holds fewer: core_groups.cpp).
constexpr std::uint32_t MAX_RECORD_GROUP_CHANGES = 1U << 16;

// A group's fields after the device's ('S' records): down updates last_sent n, then n changes
// (name ts down).
bool read_group(record_reader& in, group_record& g, std::vector<group_change_view>& changes) {
    g.down = in.get<std::uint32_t>();
    g.updates = in.get<std::uint32_t>();
    g.last_sent = in.get<double>();
    const auto n = in.get<std::uint32_t>();
    if (!in.ok() || n > MAX_RECORD_GROUP_CHANGES) return false;
    changes.clear();
    for (std::uint32_t i = 0; i < n && in.ok(); ++i) {
        group_change_view c;
        c.device = in.name();
        c.ts = in.get<double>();
        c.down = in.get<std::uint8_t>() != 0;
        changes.push_back(c);
    }
    g.changes = changes.data();
    g.change_count = static_cast<std::uint32_t>(changes.size());
    return in.ok();
}

bool replay_record(record_reader& in, record_sink& sink) {
    const auto tag = in.get<char>();
    if (tag == 'D' || tag == 'E' || tag == 'G' || tag == 'S') {
        device_record r;
        r.account = in.name();
        r.device = in.name();
        r.state = in.state();
        r.notified = in.state();
        r.hold_ts = in.get<double>();
        r.last_ts = in.get<double>();
        r.last_id = in.get<std::uint32_t>();
        if (tag != 'D') r.notified_ts = in.get<double>();
        double changes[MAX_FLAP_CHANGES];
        group_record group;
        std::vector<group_change_view> group_changes;
        if (tag == 'G' || tag == 'S') {
            r.noise = in.get<std::uint8_t>();
            r.reminders_sent = in.get<std::uint32_t>();
            r.reminder_base = in.get<double>();
            r.change_count = in.get<std::uint8_t>();
            if (r.change_count > MAX_FLAP_CHANGES) return false;
            for (std::uint32_t i = 0; i < r.change_count; ++i) changes[i] = in.get<double>();
            r.changes = changes;
        }
        if (tag == 'S') {
            if (!read_group(in, group, group_changes)) return false;
            r.group = &group;
        }
        if (in.ok()) sink.on_device(r);
    } else if (tag == 'C') {
        cooldown_record r;
        r.account = in.name();
        r.device = in.name();
        r.region = in.name();
        r.last_alert = in.get<double>();
        if (in.ok()) sink.on_cooldown(r);
    } else if (tag == 'I') {
        const auto id = in.get<std::uint64_t>();
        if (in.ok()) sink.on_id(id);
    } else {
        return false;
    }
    return in.ok();
}

}  // namespace

void frame_encoder::on_device(const device_record& r) {
    const std::size_t start = payload_.size();
    payload_ += 'E';
    put_name(payload_, r.account);
    put_name(payload_, r.device);
    put(payload_, static_cast<std::uint8_t>(r.state));
    put(payload_, static_cast<std::uint8_t>(r.notified));
    put(payload_, r.hold_ts);
    put(payload_, r.last_ts);
    put(payload_, r.last_id);
    put(payload_, r.notified_ts);
    if (r.noise == 0 && r.change_count == 0 && r.reminders_sent == 0 && !r.group) return;
    payload_[start] = r.group ? 'S' : 'G';  // the noise rules' fields follow (and a group's)
    put(payload_, r.noise);
    put(payload_, r.reminders_sent);
    put(payload_, r.reminder_base);
    const std::uint32_t n = std::min<std::uint32_t>(r.change_count, MAX_FLAP_CHANGES);
    put(payload_, static_cast<std::uint8_t>(n));
    for (std::uint32_t i = r.change_count - n; i < r.change_count; ++i) put(payload_, r.changes[i]);
    if (!r.group) return;
    const group_record& g = *r.group;
    put(payload_, g.down);
    put(payload_, g.updates);
    put(payload_, g.last_sent);
    put(payload_, g.change_count);
    for (std::uint32_t i = 0; i < g.change_count; ++i) {
        put_name(payload_, g.changes[i].device);
        put(payload_, g.changes[i].ts);
        put(payload_, static_cast<std::uint8_t>(g.changes[i].down ? 1 : 0));
    }
}

void frame_encoder::on_cooldown(const cooldown_record& r) {
    payload_ += 'C';
    put_name(payload_, r.account);
    put_name(payload_, r.device);
    put_name(payload_, r.region);
    put(payload_, r.last_alert);
}

void frame_encoder::on_id(std::uint64_t id_hash) {
    payload_ += 'I';
    put(payload_, id_hash);
}

std::string frame_encoder::finish(std::uint64_t seq) {
    std::string frame;
    frame.reserve(HEADER + payload_.size());
    put(frame, MAGIC);
    put(frame, static_cast<std::uint32_t>(payload_.size()));
    put(frame, seq);
    put(frame, hash_bytes(payload_));
    frame += payload_;
    payload_.clear();
    return frame;
}

decode_result decode_frames(std::string_view data, std::uint64_t after_seq, record_sink& sink) {
    decode_result out;
    while (data.size() >= HEADER) {
        record_reader head(data.substr(0, HEADER));
        const auto magic = head.get<std::uint32_t>();
        const auto length = head.get<std::uint32_t>();
        const auto seq = head.get<std::uint64_t>();
        const auto sum = head.get<std::uint64_t>();
        if (magic != MAGIC || data.size() - HEADER < length) break;
        const std::string_view payload = data.substr(HEADER, length);
        if (hash_bytes(payload) != sum) break;
        if (seq > after_seq) {
            record_reader in(payload);
            while (!in.done() && replay_record(in, sink)) {
            }
        }
        data.remove_prefix(HEADER + length);
        out.valid_bytes += HEADER + length;
        out.last_seq = seq;
        ++out.frames;
    }
    return out;
}

}  // namespace alerts
