// The activation engine's scheduling, with no I/O and no clock: which activations wait, which
// are in the window (written, or being written, to the action's stdin), how much of each is
// written, and what goes back to waiting when a process dies. engine.cpp drives it from the
// event loop; tests/unit/engine/activation_queue_test.cpp pins its rules:
//   - admission in arrival order: a request that does not fit the window waits for room, and
//     the ones behind it do not overtake it; an empty window takes any request, however big;
//   - the window holds at most `window_bytes` of requests and `max_depth` of them;
//   - answers go to the head, in order;
//   - a request the process never read goes back to the front of the waiting queue, in order,
//     and is written again up to `max_attempts` times.
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace actionloop {

struct activation_result;  // engine.hpp

/// One activation, from submit to its result.
struct activation {
    using clock = std::chrono::steady_clock;
    std::string line;  // the request, newlines removed (the '\n' is written after it)
    clock::time_point deadline = clock::time_point::max();
    clock::time_point submitted;
    std::function<void(activation_result)> done;
    size_t written = 0;        // bytes of line + '\n' written to the current process
    int attempts = 0;          // writes begun to processes
    bool fresh = true;         // not sent to a fresh process for stale output yet (window of one)
    std::uint64_t log_id = 0;  // JSON log mode: its entry in log_attribution while written
    /// Bytes on the pipe: the line and its '\n'.
    size_t size() const { return line.size() + 1; }
};
using activation_ptr = std::unique_ptr<activation>;

class activation_queue {
public:
    struct limits {
        size_t window_bytes;  // the most unanswered request bytes written
        size_t max_depth;     // the most unanswered requests written
        int max_attempts;     // writes of one request to processes that die before reading it
    };

    explicit activation_queue(limits bounds) : limits_(bounds) {}

    /// A new activation waits behind the others.
    void push(activation_ptr next) { waiting_.push_back(std::move(next)); }

    bool idle() const { return waiting_.empty() && in_flight_.empty(); }
    size_t waiting() const { return waiting_.size(); }
    size_t in_flight() const { return in_flight_.size(); }
    /// The activation the action is serving (the oldest in the window); nullptr when empty.
    activation* head() const { return in_flight_.empty() ? nullptr : in_flight_.front().get(); }

    /// True when the next waiting activation may join the window now. An empty window takes
    /// it whatever its size; a window with requests in it takes it when it fits in bytes and
    /// depth and `more_allowed` (the process is still usable).
    bool next_fits(bool more_allowed) const;
    /// Moves the next waiting activation into the window; its write starts from byte 0.
    activation& admit_next();

    /// The bytes admitted and not written yet, in order, as at most `max` pieces (two per
    /// request: the rest of its line, its '\n'); returns how many pieces.
    size_t unwritten(iovec* pieces, size_t max) const;
    /// True when every request in the window is written whole.
    bool all_written() const { return unwritten_from_ == in_flight_.size(); }
    /// `n` bytes of unwritten() went to the pipe.
    void wrote(size_t n);

    /// The process stopped reading its stdin: the requests not written whole leave the
    /// window. Each goes back to the front of the waiting queue (in order) when it may be
    /// written again; those that used up their attempts are returned, oldest first.
    std::vector<activation_ptr> take_unsent();
    /// The head leaves the window (it has its answer or its failure).
    activation_ptr pop_head();
    /// The head leaves the window and the requests behind it, which never started, go back
    /// to the front of the waiting queue in order (the process is stopped).
    activation_ptr pop_head_requeue_rest();
    /// The head's request was never read by the process: it goes back to the front of the
    /// waiting queue as if never written (not counted as an attempt), marked not fresh.
    void requeue_unread_head();
    /// The first waiting activation leaves the queue (its process could not be started).
    activation_ptr pop_waiting();

    /// Calls f(activation&) for each waiting activation, in order.
    template <class F>
    void for_each_waiting(F&& f) {
        for (auto& a : waiting_) f(*a);
    }

    /// When the oldest activation in either queue was submitted; time_point::max() if none.
    activation::clock::time_point oldest_submitted() const;

private:
    limits limits_;
    std::deque<activation_ptr> waiting_;    // not written yet, in arrival order
    std::deque<activation_ptr> in_flight_;  // written or being written, in order
    size_t unwritten_from_ = 0;             // in_flight_[i >= this] are not written whole
    size_t in_flight_bytes_ = 0;
};

/// A bound on how many are admitted at a time (requests waiting for the action, open
/// connections), on one thread: try_enter() takes a place when there is one, leave() gives it
/// back. `max` 0: no bound. The protocol and HTTP layers answer a refusal (503).
class admission_limit {
public:
    explicit admission_limit(size_t max) : max_(max) {}

    /// Takes a place; false (nothing taken) when all `max` are taken.
    bool try_enter() {
        if (max_ != 0 && count_ >= max_) return false;
        ++count_;
        return true;
    }
    /// Gives back a place taken by try_enter().
    void leave() {
        if (count_ > 0) --count_;
    }
    size_t count() const { return count_; }
    size_t max() const { return max_; }

private:
    size_t max_;
    size_t count_ = 0;
};

}  // namespace actionloop
