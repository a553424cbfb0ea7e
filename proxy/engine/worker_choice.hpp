// Which worker of the pool (OW_WORKERS) the next activation goes to: pure, tested on its own
// (tests/unit/engine/worker_choice_test.cpp); host/action_host.cpp calls it for every /run.
#pragma once

#include <cstddef>
#include <vector>

namespace actionloop {

/// One worker's activations, as its engine counts them.
struct worker_load {
    std::size_t in_flight = 0;  // written to its process, not answered yet
    std::size_t waiting = 0;    // submitted, not written yet (waiting for the window, a restart)
};

/// The index of the worker that gets the next activation: an idle one (nothing in flight or
/// waiting) when there is one, else the one with the fewest queued (in flight + waiting); a
/// tie goes to the lowest index. So with as many activations as workers, each has one, and
/// pipelining within a worker only starts when all are busy. `loads` is not empty.
std::size_t choose_worker(const std::vector<worker_load>& loads);

}  // namespace actionloop
