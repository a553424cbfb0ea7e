// The proxy's children, all of them: the ones it runs itself (spawned by spawn(), owned by a
// child_process: the action, a compiler run) and the ones it inherits as a child subreaper
// (PR_SET_CHILD_SUBREAPER): descendants of an action or compiler whose parent died, e.g. a
// process the action started in a session of its own (setsid), out of reach of the kill of
// the action's process group.
//
// Once start_reaper() has run (the server does, before it serves):
//  - a reaper thread reaps every child as soon as it exits: a crashed action is not left a
//    zombie until the next /run. An owned child's wait status is kept for its child_process
//    (exited(), wait(), describe() see it as if they had reaped it themselves); an orphan's
//    is dropped. When an owned child exits, the orphans it left are killed at once;
//  - child_process::kill() (the action stopped or replaced, a compiler run ended) kills and
//    reaps every orphan: every child that is not an owned, running child_process.
// Without start_reaper() (proxy -compile, tests linking the library) nothing is killed
// beyond a child_process's own process group, and child_process reaps its child itself.
#pragma once

#include <sys/types.h>

#include <functional>

namespace actionloop {

/// Makes this process a child subreaper and starts the reaper thread. Idempotent.
void start_reaper();

/// Kills (SIGKILL to the process, and to its process group when it leads one) and reaps
/// every child of this process that is not a running child_process, repeatedly, until none
/// is left (the children of a killed orphan are re-parented here in turn). A no-op before
/// start_reaper(). Thread-safe; called by child_process::kill().
void kill_orphans();

/// For shutdown: the same for every child, child_process ones included.
void kill_all_children();
/// True once kill_all_children() has run (the proxy is stopping): a SIGKILL is then ours.
bool all_children_killed();

namespace owned_children {

/// Runs `start` (which creates a child and returns its pid, or -1) with the registry locked,
/// then registers the pid as owned: the reaper thread can never take it for an orphan.
pid_t spawn_registered(const std::function<pid_t()>& start);

/// Non-blocking: true once `pid` has exited and been reaped (by this call or by the reaper
/// thread), with its wait status in `status` and its peak resident set in `max_rss_kb`
/// (wait4's ru_maxrss; -1 when unknown); the pid is then forgotten.
bool try_collect(pid_t pid, int& status, long& max_rss_kb);

}  // namespace owned_children

}  // namespace actionloop
