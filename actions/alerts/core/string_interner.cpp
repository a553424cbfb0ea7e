// string_interner.cpp — the open-addressing table behind the device and account indices.
#include "core/string_interner.hpp"

namespace alerts {

namespace {

std::uint64_t entry_of(std::uint32_t hash, std::uint32_t index) {
    return (static_cast<std::uint64_t>(hash) << 32) | (index + 1U);
}

}  // namespace

std::uint32_t string_interner::find(std::string_view key, std::uint64_t hash) const {
    if (table_.empty()) return npos;
    const auto h32 = static_cast<std::uint32_t>(hash);
    const std::size_t mask = table_.size() - 1;
    for (std::size_t pos = probe_start(h32);; pos = (pos + 1) & mask) {
        const std::uint64_t entry = table_[pos];
        if (entry == 0) return npos;
        if (static_cast<std::uint32_t>(entry >> 32) != h32) continue;
        const auto i = static_cast<std::uint32_t>(entry) - 1;
        if (this->key(i) == key) return i;
    }
}

std::uint32_t string_interner::insert(std::string_view key, std::uint64_t hash) {
    if ((hashes_.size() + 1) * 2 > table_.size()) grow();
    const auto h32 = static_cast<std::uint32_t>(hash);
    const auto index = static_cast<std::uint32_t>(hashes_.size());
    arena_.append(key);
    offsets_.push_back(static_cast<std::uint32_t>(arena_.size()));
    hashes_.push_back(h32);
    const std::size_t mask = table_.size() - 1;
    std::size_t pos = probe_start(h32);
    while (table_[pos] != 0) pos = (pos + 1) & mask;
    table_[pos] = entry_of(h32, index);
    return index;
}

void string_interner::grow() {
    const std::size_t capacity = table_.empty() ? 64 : table_.size() * 2;
    table_.assign(capacity, 0);
    const std::size_t mask = capacity - 1;
    for (std::uint32_t i = 0; i < hashes_.size(); ++i) {
        std::size_t pos = probe_start(hashes_[i]);
        while (table_[pos] != 0) pos = (pos + 1) & mask;
        table_[pos] = entry_of(hashes_[i], i);
    }
}

std::size_t string_interner::memory_bytes() const {
    return table_.capacity() * sizeof(std::uint64_t) + offsets_.capacity() * sizeof(std::uint32_t) +
           hashes_.capacity() * sizeof(std::uint32_t) + arena_.capacity();
}

}  // namespace alerts
