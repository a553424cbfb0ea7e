// SCHED_BATCH while activations overlap: see batch_scheduling.hpp.
#include "engine/batch_scheduling.hpp"

#include <sched.h>

namespace actionloop {

batch_switch::change batch_switch::wrote(size_t in_flight) {
    if (in_flight >= 2) {
        alone_ = 0;
        if (batch_) return change::none;
        batch_ = true;
        return change::to_batch;
    }
    if (!batch_ || ++alone_ < ALONE_WRITES) return change::none;
    batch_ = false;
    alone_ = 0;
    return change::to_normal;
}

bool set_batch_policy(pid_t tid, bool batch) {
    const sched_param none{};
    return ::sched_setscheduler(tid, batch ? SCHED_BATCH : SCHED_OTHER, &none) == 0;
}

}  // namespace actionloop
