// timer_heap.hpp — pending holds ordered by due time, so that a tick costs O(due · log n)
// instead of a scan over all devices. Cancelled holds are not removed: an entry carries the
// device's hold generation and is discarded on pop when it no longer matches.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace alerts {

struct hold_timer {
    double due = 0;
    std::uint32_t device = 0;
    std::uint8_t gen = 0;    // device_slot::hold_gen when pushed
    std::uint8_t group = 0;  // 1: a site's group, served after the devices due at the same time
};

class timer_heap {
public:
    void push(hold_timer t) {
        heap_.push_back(t);
        std::push_heap(heap_.begin(), heap_.end(), later);
    }
    const hold_timer& top() const { return heap_.front(); }
    void pop() {
        std::pop_heap(heap_.begin(), heap_.end(), later);
        heap_.pop_back();
    }
    bool empty() const { return heap_.empty(); }
    std::size_t size() const { return heap_.size(); }
    void clear() { heap_.clear(); }
    std::size_t memory_bytes() const { return heap_.capacity() * sizeof(hold_timer); }

private:
    // Devices before groups at the same time: a camera whose Offline is due when its group's
    // SiteOffline is is in it, in every store (whatever order its timers were pushed in).
    static bool later(const hold_timer& a, const hold_timer& b) {
        return a.due > b.due || (a.due == b.due && a.group > b.group);
    }
    std::vector<hold_timer> heap_;
};

}  // namespace alerts
