// A FIFO lock: activations on the one action process are served strictly in arrival order
// (a plain std::mutex lets a late request overtake waiting ones). The lock is handed to the
// next waiter directly and only that waiter is woken: with 64 connections queued, waking
// them all on every activation would spend the CPU the action needs.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

namespace actionloop {

class activation_queue {
public:
    void lock() {
        std::unique_lock<std::mutex> guard(mutex_);
        if (!busy_) {
            busy_ = true;
            return;
        }
        waiter self;
        waiters_.push_back(&self);
        self.wake.wait(guard, [&] { return self.turn; });
    }

    void unlock() {
        std::lock_guard<std::mutex> guard(mutex_);
        if (waiters_.empty()) {
            busy_ = false;
            return;
        }
        waiter* next = waiters_.front();
        waiters_.pop_front();
        next->turn = true;  // busy_ stays true: ownership passes to `next`
        next->wake.notify_one();
    }

    /// Activations waiting for their turn (for tests and diagnostics).
    size_t waiting() {
        std::lock_guard<std::mutex> guard(mutex_);
        return waiters_.size();
    }

private:
    struct waiter {
        std::condition_variable wake;
        bool turn = false;
    };
    std::mutex mutex_;
    std::deque<waiter*> waiters_;
    bool busy_ = false;
};

}  // namespace actionloop
