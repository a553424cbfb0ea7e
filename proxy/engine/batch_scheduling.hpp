// SCHED_BATCH while activations overlap (OW_SCHED_BATCH, README; the figures in
// docs/BENCH.md).
//
// A woken SCHED_BATCH task does not preempt the task running. Under the default policy the
// proxy's writev to the action's stdin hands the core to the action at once, in the middle of
// the loop turn: the action serves the one or two requests written so far and blocks again,
// and the proxy resumes. With the action (and the loop thread) under SCHED_BATCH, the action
// runs once the loop sleeps, and serves together every request the turn has written: fewer
// switches and pipe reads per activation when several callers overlap (1.18x /runs per second
// at 8 callers), but the lone caller's request waits for the loop to sleep (0.96x).
//
// So by default (adaptive) the engine switches: to SCHED_BATCH when a write leaves two or more
// activations in flight, back to the default policy after a run of writes that each left one.
// The decision (batch_switch) is pure; set_batch_policy applies it to one thread.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace actionloop {

class batch_switch {
public:
    /// Writes in a row, each leaving one activation in flight, after which the overlap is
    /// over: long enough that a short lull under load does not switch back and forth, short
    /// enough that a lone caller pays it for a few milliseconds at most.
    static constexpr unsigned ALONE_WRITES = 64;

    enum class change { none, to_batch, to_normal };

    /// A write to the action's stdin went out; `in_flight` activations (written, not answered)
    /// are in the window now. Says whether the policy changes.
    change wrote(size_t in_flight);
    /// True while the action runs under SCHED_BATCH.
    bool batch() const { return batch_; }

private:
    bool batch_ = false;
    unsigned alone_ = 0;  // writes in a row that left one activation in flight
};

/// Puts thread `tid` (0: the calling thread; a process's pid: its main thread) under
/// SCHED_BATCH (`batch`) or SCHED_OTHER. False, with errno, when refused or gone.
bool set_batch_policy(pid_t tid, bool batch);

}  // namespace actionloop
