// recent_ids.hpp — the bounded set of recently applied event ids (idempotence by `id`).
//
// A global FIFO ring of 64-bit id hashes (hash of account, device and id) plus an
// open-addressing index over it; the oldest id is forgotten when the ring is full. Its
// capacity is the config's `recent_ids` (65,536 by default: some 65 batches of 1,000; at most
// MAX_RECENT_IDS, 1,048,576, see config.hpp). Beyond it, a re-delivered event that changed
// its device is still caught per device: it is older than the device's stale horizon, or equal
// to it in time and id (the slot keeps a short id hash); one that changed nothing changes
// nothing again.
#pragma once

#include <cstdint>
#include <vector>

namespace alerts {

class recent_ids {
public:
    explicit recent_ids(std::size_t capacity = 65536) { reset(capacity); }

    /// Forgets everything and sets a new capacity.
    void reset(std::size_t capacity);
    bool contains(std::uint64_t id) const;
    /// Remembers `id` (which must not be present), forgetting the oldest when full.
    void insert(std::uint64_t id);
    /// Forgets every id, in O(size) (reset() costs O(capacity)).
    void clear();

    std::size_t size() const { return count_; }
    std::size_t capacity() const { return ring_.size(); }
    std::size_t memory_bytes() const;

    /// Calls f(id) for every remembered id, oldest first.
    template <class F>
    void for_each(F&& f) const {
        const std::size_t start = (head_ + ring_.size() - count_) % ring_.size();
        for (std::size_t i = 0; i < count_; ++i) f(ring_[(start + i) % ring_.size()]);
    }

private:
    static std::uint64_t key_of(std::uint64_t id) { return id == 0 ? 1 : id; }
    std::size_t home(std::uint64_t key) const { return (key >> 7) & (table_.size() - 1); }
    void erase(std::uint64_t key);

    std::vector<std::uint64_t> ring_;   // insertion order; head_ is the next write
    std::vector<std::uint64_t> table_;  // keys (0 = empty), linear probing
    std::size_t head_ = 0;
    std::size_t count_ = 0;
};

}  // namespace alerts
