// hash.hpp — a small, fast, stable 64-bit hash for short keys (ids, device and account names).
//
// Stable across processes and builds (unlike std::hash), because hashes of ids and device keys
// are written to the on-disk state and compared after a restart.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace alerts {

/// Final avalanche of a 64-bit value (the murmur3 / splitmix finaliser).
inline std::uint64_t hash_mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/// Hash of a byte string, 8 bytes at a time; a seed lets callers derive independent hashes.
inline std::uint64_t hash_bytes(std::string_view s, std::uint64_t seed = 0x9e3779b97f4a7c15ULL) {
    std::uint64_t h = seed ^ (s.size() * 0x100000001b3ULL);
    const char* p = s.data();
    std::size_t n = s.size();
    while (n >= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        h = hash_mix(h ^ w) * 0x9fb21c651e98df25ULL;
        p += 8;
        n -= 8;
    }
    if (n > 0) {
        std::uint64_t w = 0;
        std::memcpy(&w, p, n);
        h = hash_mix(h ^ w ^ (static_cast<std::uint64_t>(n) << 56));
    }
    return hash_mix(h);
}

/// Combines two hashes (order matters).
inline std::uint64_t hash_combine(std::uint64_t a, std::uint64_t b) {
    return hash_mix(a * 0x9e3779b97f4a7c15ULL + b);
}

}  // namespace alerts
