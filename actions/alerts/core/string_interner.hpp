// string_interner.hpp — maps short byte strings to dense indices 0, 1, 2, … with little
// overhead: keys live back to back in one arena, the hash table is a flat vector of indices
// (open addressing, linear probing, load <= 1/2) whose entries carry the key's hash, so a probe
// touches the arena only on a hash match. About 8 bytes + key + 16–32 bytes of table per key,
// against ~70 bytes for a std::unordered_map<std::string, uint32_t> node.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace alerts {

class string_interner {
public:
    static constexpr std::uint32_t npos = 0xffffffffU;

    /// Index of `key` (whose hash is `hash`), or npos.
    std::uint32_t find(std::string_view key, std::uint64_t hash) const;
    /// Adds `key`, which must not be present yet, and returns its index.
    std::uint32_t insert(std::string_view key, std::uint64_t hash);

    std::string_view key(std::uint32_t i) const {
        return std::string_view(arena_).substr(offsets_[i], offsets_[i + 1] - offsets_[i]);
    }
    std::uint32_t size() const { return static_cast<std::uint32_t>(hashes_.size()); }
    /// Bytes held (capacities), for the memory figures.
    std::size_t memory_bytes() const;

private:
    void grow();
    std::size_t probe_start(std::uint32_t hash) const { return hash & (table_.size() - 1); }

    // (hash << 32) | (index + 1); 0 = empty
    std::vector<std::uint64_t> table_;
    std::vector<std::uint32_t> offsets_ = {0};  // key i is arena_[offsets_[i], offsets_[i+1])
    std::vector<std::uint32_t> hashes_;         // low 32 bits of each key's hash, for regrowth
    std::string arena_;
};

}  // namespace alerts
