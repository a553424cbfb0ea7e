// A FIFO lock: activations on the one action process are served strictly in arrival order
// (a plain std::mutex lets a late request overtake waiting ones).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace actionloop {

class activation_queue {
public:
    void lock() {
        std::unique_lock<std::mutex> guard(mutex_);
        uint64_t ticket = next_++;
        turn_.wait(guard, [&] { return serving_ == ticket; });
    }
    void unlock() {
        {
            std::lock_guard<std::mutex> guard(mutex_);
            ++serving_;
        }
        turn_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable turn_;
    uint64_t next_ = 0;
    uint64_t serving_ = 0;
};

}  // namespace actionloop
