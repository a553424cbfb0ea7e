// How many action processes an /init starts (OW_WORKERS, README's settings table), resolved
// at each /init: /init's env OW_WORKERS when it gives one (the action's own wins), else the
// proxy's; a number from 1, or `auto` (the container's CPUs, engine/cgroup_cpu.hpp); unset is
// 1; capped by OW_MAX_WORKERS. Pure: the CPU count is asked for only for `auto`.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace actionloop {

struct worker_count {
    unsigned count = 1;   // the workers to start (when `error` is empty)
    bool capped = false;  // the value asked for more than `max_workers`
    std::string error;    // not empty: the value is not a worker count (names it)
};

/// `proxy_value`: OW_WORKERS as the proxy's environment has it ("": unset); `init_value`:
/// /init's env's OW_WORKERS, when it has one (an empty string counts as not given).
/// `max_workers` (at least 1): OW_MAX_WORKERS. `cpus`: the container's CPUs, for `auto`.
worker_count resolve_worker_count(const std::string& proxy_value,
                                  const std::optional<std::string>& init_value,
                                  unsigned max_workers, const std::function<unsigned()>& cpus);

}  // namespace actionloop
