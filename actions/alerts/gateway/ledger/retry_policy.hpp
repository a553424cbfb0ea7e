// retry_policy.hpp — how often and how soon a failed delivery is tried again (pure).
#pragma once

#include <algorithm>
#include <chrono>

namespace alerts::gateway {

struct retry_policy {
    int max_attempts = 6;
    std::chrono::milliseconds first_wait{500};
    std::chrono::milliseconds longest_wait{30000};

    /// The wait after `attempts` failed attempts: first_wait, doubled each time, capped.
    std::chrono::milliseconds wait_after(int attempts) const {
        auto wait = first_wait;
        for (int done = 1; done < attempts && wait < longest_wait; ++done) wait *= 2;
        return std::min(wait, longest_wait);
    }
    bool attempts_left(int attempts) const { return attempts < max_attempts; }
};

}  // namespace alerts::gateway
