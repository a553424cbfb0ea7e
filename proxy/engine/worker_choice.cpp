// The dispatch rule of the worker pool (worker_choice.hpp). An idle worker has the fewest
// queued (none), so one linear pass for the least loaded, first found on a tie, is the rule.
#include "engine/worker_choice.hpp"

namespace actionloop {

std::size_t choose_worker(const std::vector<worker_load>& loads) {
    std::size_t chosen = 0;
    std::size_t fewest = static_cast<std::size_t>(-1);
    for (std::size_t i = 0; i < loads.size(); ++i) {
        const std::size_t queued = loads[i].in_flight + loads[i].waiting;
        if (queued >= fewest) continue;
        chosen = i;
        fewest = queued;
        if (queued == 0) break;  // idle: no one beats it, and it is the lowest idle index
    }
    return chosen;
}

}  // namespace actionloop
