// recent_ids.cpp — FIFO ring + linear-probing set with backward-shift deletion.
#include "core/recent_ids.hpp"

namespace alerts {

void recent_ids::reset(std::size_t capacity) {
    if (capacity == 0) capacity = 1;
    ring_.assign(capacity, 0);
    std::size_t table = 16;
    while (table < capacity * 2) table *= 2;
    table_.assign(table, 0);
    head_ = 0;
    count_ = 0;
}

bool recent_ids::contains(std::uint64_t id) const {
    const std::uint64_t key = key_of(id);
    const std::size_t mask = table_.size() - 1;
    for (std::size_t pos = home(key);; pos = (pos + 1) & mask) {
        if (table_[pos] == key) return true;
        if (table_[pos] == 0) return false;
    }
}

void recent_ids::insert(std::uint64_t id) {
    const std::uint64_t key = key_of(id);
    if (count_ == ring_.size()) {
        erase(ring_[head_]);
        --count_;
    }
    ring_[head_] = key;
    head_ = (head_ + 1) % ring_.size();
    ++count_;
    const std::size_t mask = table_.size() - 1;
    std::size_t pos = home(key);
    while (table_[pos] != 0) pos = (pos + 1) & mask;
    table_[pos] = key;
}

void recent_ids::clear() {
    for_each([&](std::uint64_t key) { erase(key); });
    head_ = 0;
    count_ = 0;
}

void recent_ids::erase(std::uint64_t key) {
    const std::size_t mask = table_.size() - 1;
    std::size_t pos = home(key);
    while (table_[pos] != key) {
        if (table_[pos] == 0) return;
        pos = (pos + 1) & mask;
    }
    // Backward-shift deletion keeps probe chains intact without tombstones.
    std::size_t hole = pos;
    for (std::size_t next = (hole + 1) & mask; table_[next] != 0; next = (next + 1) & mask) {
        const std::size_t want = home(table_[next]);
        const bool movable =
            hole <= next ? (want <= hole || want > next) : (want <= hole && want > next);
        if (movable) {
            table_[hole] = table_[next];
            hole = next;
        }
    }
    table_[hole] = 0;
}

std::size_t recent_ids::memory_bytes() const {
    return (ring_.capacity() + table_.capacity()) * sizeof(std::uint64_t);
}

}  // namespace alerts
