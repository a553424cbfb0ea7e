// The pool's dispatch rule (engine/worker_choice.hpp): idle first, then the fewest queued,
// ties to the lowest index.
#include <doctest/doctest.h>

#include <vector>

#include "engine/worker_choice.hpp"

using actionloop::choose_worker;
using actionloop::worker_load;

TEST_CASE("worker_choice: one worker gets everything") {
    CHECK(choose_worker({{0, 0}}) == 0);
    CHECK(choose_worker({{5, 9}}) == 0);
}

TEST_CASE("worker_choice: an idle worker wins, the lowest index among the idle") {
    CHECK(choose_worker({{0, 0}, {0, 0}, {0, 0}}) == 0);
    CHECK(choose_worker({{1, 0}, {0, 0}, {0, 0}}) == 1);
    CHECK(choose_worker({{1, 0}, {2, 0}, {0, 0}, {0, 0}}) == 2);
}

TEST_CASE("worker_choice: a worker with one waiting (not written yet) is not idle") {
    CHECK(choose_worker({{0, 1}, {0, 0}}) == 1);
    CHECK(choose_worker({{0, 1}, {1, 0}, {0, 0}}) == 2);
}

TEST_CASE("worker_choice: all busy: the fewest queued (in flight + waiting), ties lowest") {
    CHECK(choose_worker({{3, 0}, {1, 1}, {1, 0}}) == 2);
    CHECK(choose_worker({{2, 0}, {1, 1}, {1, 1}}) == 0);
    CHECK(choose_worker({{2, 2}, {2, 2}, {3, 0}, {2, 1}}) == 2);
    CHECK(choose_worker({{2, 2}, {1, 2}, {3, 0}, {2, 1}}) == 1);
    CHECK(choose_worker({{4, 0}, {1, 0}, {1, 0}}) == 1);
}

TEST_CASE("worker_choice: successive activations spread over the workers, then pipeline") {
    std::vector<worker_load> loads(4);
    std::vector<std::size_t> order;
    for (int i = 0; i < 8; ++i) {
        const std::size_t chosen = choose_worker(loads);
        order.push_back(chosen);
        ++loads[chosen].in_flight;
    }
    CHECK(order == std::vector<std::size_t>{0, 1, 2, 3, 0, 1, 2, 3});
    loads[2].in_flight = 0;  // worker 2 answered both of its own
    CHECK(choose_worker(loads) == 2);
}
