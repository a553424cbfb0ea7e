// The FIFO activation lock: mutual exclusion and arrival order.
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "activation_queue.hpp"

using actionloop::activation_queue;

TEST_CASE("activation_queue serves waiters in arrival order") {
    activation_queue queue;
    queue.lock();
    std::vector<int> order;
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
        threads.emplace_back([&, i] {
            std::lock_guard<activation_queue> turn(queue);
            order.push_back(i);
        });
        // The next thread starts only once this one is queued (bounded polling).
        auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (queue.waiting() != static_cast<size_t>(i + 1) &&
               std::chrono::steady_clock::now() < give_up) {
            std::this_thread::yield();
        }
        REQUIRE(queue.waiting() == static_cast<size_t>(i + 1));
    }
    queue.unlock();
    for (auto& t : threads) t.join();
    CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("activation_queue excludes: counters stay consistent under contention") {
    activation_queue queue;
    long counter = 0;
    int inside = 0;
    bool overlapped = false;
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 2000; ++i) {
                std::lock_guard<activation_queue> turn(queue);
                if (++inside != 1) overlapped = true;
                ++counter;
                --inside;
            }
        });
    }
    for (auto& t : threads) t.join();
    CHECK_FALSE(overlapped);
    CHECK(counter == 16000);
}
