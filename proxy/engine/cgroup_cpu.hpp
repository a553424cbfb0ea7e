// The CPUs the container may use, for OW_WORKERS=auto (host/worker_count.hpp): its cgroup's
// CPU quota, rounded up, and never more than the CPUs the proxy may run on.
//   cgroup v2: cpu.max ("max 100000": none; "150000 100000": 1.5 CPUs, so 2)
//   cgroup v1: cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us
// The parsers are pure; container_cpus() reads the files of a directory given to it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace actionloop {

/// cgroup v2's cpu.max text: the quota in CPUs, rounded up; nullopt for "max" or an
/// unreadable text.
std::optional<unsigned> cpus_of_cpu_max(std::string_view text);
/// cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us texts: the quota in CPUs, rounded up;
/// nullopt for -1 (none) or an unreadable text.
std::optional<unsigned> cpus_of_cfs_quota(std::string_view quota, std::string_view period);

/// The CPUs usable here: the quota found under `cgroup_dir` (its cpu.max; else its
/// cpu.cfs_quota_us; else those of its cpu/ or cpu,cpuacct/ folder, where a v1 container has
/// its own CPU cgroup), at most the CPUs sched_getaffinity allows; those alone when there is
/// no quota. At least 1.
unsigned container_cpus(const std::string& cgroup_dir);

}  // namespace actionloop
