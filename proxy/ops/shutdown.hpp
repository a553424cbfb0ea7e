// Graceful shutdown (docs/DEPLOY.md, "Shutdown"): the first SIGTERM puts the proxy in drain
// mode. New /init and /run get 503 (the invoker reschedules them elsewhere), /health turns
// 503, the activations already accepted finish and their answers are written; then the
// action and everything it started are killed and the proxy exits 0. The drain is capped by
// OW_SHUTDOWN_TIMEOUT_MS. A second SIGTERM, or any SIGINT, stops at once as before: the
// children are killed and the proxy dies of the signal.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace actionloop {

/// Counts the activations in flight (accepted, answer not yet written) and says whether the
/// proxy is draining. enter()/leave() are two atomic operations, no lock, unless a drain is
/// waiting for the last one.
class drain_state {
public:
    /// Called when an /init or /run arrives: true (counted) unless the proxy is draining.
    bool enter();
    /// Called once per successful enter(), after the answer is written (or the client left).
    void leave();

    bool draining() const { return draining_.load(); }
    int in_flight() const { return in_flight_.load(std::memory_order_relaxed); }

    /// Starts the drain: enter() refuses from now on.
    void begin_drain() { draining_.store(true); }
    /// Waits until no activation is in flight, or `cap` has passed. True when idle.
    bool wait_idle(std::chrono::milliseconds cap);

private:
    std::atomic<bool> draining_{false};
    std::atomic<int> in_flight_{0};
    std::mutex idle_mutex_;  // only for wait_idle's wake-up, only while draining
    std::condition_variable idle_;
};

/// Holds one activation's place in a drain_state (move-only): leave() on destruction.
class in_flight_ticket {
public:
    explicit in_flight_ticket(drain_state& state) : state_(&state) {}
    in_flight_ticket(in_flight_ticket&& other) noexcept : state_(other.state_) {
        other.state_ = nullptr;
    }
    in_flight_ticket(const in_flight_ticket&) = delete;
    in_flight_ticket& operator=(const in_flight_ticket&) = delete;
    in_flight_ticket& operator=(in_flight_ticket&&) = delete;
    ~in_flight_ticket() {
        if (state_ != nullptr) state_->leave();
    }

private:
    drain_state* state_;
};

/// Called once the drain has no activation in flight, with the time left of the cap, before
/// the children are killed: the action's on_shutdown (action_host::shutdown_action). It
/// returns within that time.
using before_stop = std::function<void(std::chrono::milliseconds time_left)>;

/// Takes SIGTERM and SIGINT on a thread of their own (blocked in every other thread: call
/// before any thread exists; children get a clean mask from spawn()). First SIGTERM: drain
/// `state` (at most `cap`), then, when it emptied in time, `idle` (if set) with what is left
/// of `cap`, kill every child, exit 0. SIGINT, or SIGTERM during the drain: kill every child
/// and die of the signal (exit 128+N where it cannot kill: pid 1).
void handle_stop_signals(drain_state& state, std::chrono::milliseconds cap, before_stop idle = {});

}  // namespace actionloop
