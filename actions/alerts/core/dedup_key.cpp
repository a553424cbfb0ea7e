// dedup_key.cpp — notification keys (see dedup_key.hpp).
#include "core/dedup_key.hpp"

#include <charconv>
#include <cmath>
#include <cstring>

#include "core/hash.hpp"

namespace alerts {

namespace {

// One 64-bit lane of the key: every part hashed with the lane's seed, chained in order (names
// hashed with their lengths, so no two different tuples chain alike but by a collision).
std::uint64_t lane(std::uint64_t seed, std::string_view account, std::string_view device,
                   notif_type type, std::uint64_t ts_bits, std::string_view region,
                   std::string_view event) {
    std::uint64_t h = hash_bytes(account, seed);
    h = hash_combine(h, hash_bytes(device, seed));
    h = hash_combine(h, static_cast<std::uint64_t>(type) + 1);
    h = hash_combine(h, ts_bits);
    h = hash_combine(h, hash_bytes(region, seed));
    h = hash_combine(h, hash_bytes(event, seed));
    return hash_mix(h ^ seed);
}

void append_hex(std::string& out, std::uint64_t v) {
    static constexpr char HEX[] = "0123456789abcdef";
    char buf[16];
    for (int i = 15; i >= 0; --i, v >>= 4) buf[i] = HEX[v & 0xf];
    out.append(buf, sizeof buf);
}

}  // namespace

notif_key make_notif_key(std::string_view account, std::string_view device, notif_type type,
                         double ts, std::string_view region, std::string_view event) {
    const double t = ts == 0 ? 0.0 : ts;  // -0 and 0 are one time
    std::uint64_t bits = 0;
    std::memcpy(&bits, &t, sizeof bits);
    notif_key k;
    k.type = type;
    k.ts = ts;
    k.hi = lane(0x243f6a8885a308d3ULL, account, device, type, bits, region, event);
    k.lo = lane(0x13198a2e03707344ULL, account, device, type, bits, region, event);
    return k;
}

void append_notif_key(std::string& out, const notif_key& key) {
    out.append(name_of(key.type));
    out += '-';
    const double ms = std::round(key.ts * 1000);
    char buf[32];
    long long whole = 0;
    if (std::isfinite(ms) && std::fabs(ms) < 9e18) whole = static_cast<long long>(ms);
    const auto r = std::to_chars(buf, buf + sizeof buf, whole);
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
    out += '-';
    append_hex(out, key.hi);
    append_hex(out, key.lo);
}

std::string notif_key_text(const notif_key& key) {
    std::string out;
    out.reserve(64);
    append_notif_key(out, key);
    return out;
}

}  // namespace alerts
