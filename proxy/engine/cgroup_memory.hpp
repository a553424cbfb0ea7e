// The memory cgroup the action runs in, read to name an out-of-memory kill: when the action
// dies of a SIGKILL the proxy did not send and the cgroup's OOM-kill count went up meanwhile,
// the kernel's OOM killer ended it (process.hpp, crash_signal()). Pure reads of files, no
// state: the directory is OW_CGROUP_DIR, else the one /proc/self/cgroup names.
//   cgroup v2: memory.events ("oom_kill N"), memory.max ("max" or bytes)
//   cgroup v1: memory.oom_control ("oom_kill N", kernels >= 4.13), else memory.failcnt (how
//              often the limit was hit); memory.limit_in_bytes (a huge value: no limit)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace actionloop {

class memory_cgroup {
public:
    /// No cgroup: every read answers nullopt.
    memory_cgroup() = default;
    /// The cgroup directory `dir` (v2 or v1, told apart by the files it holds).
    explicit memory_cgroup(std::string dir) : dir_(std::move(dir)) {}

    /// The memory cgroup this process is in: `proc_self_cgroup` is the text of
    /// /proc/self/cgroup, `mount_root` where the hierarchies are mounted (/sys/fs/cgroup).
    /// A v1 memory line ("N:memory:/path", also with other controllers) wins over the v2 line
    /// ("0::/path"); the path under the mount is used when it exists, else the mount itself
    /// (a container's own cgroup mounted as its root). Empty: none found.
    static std::string find_dir(std::string_view proc_self_cgroup, const std::string& mount_root);
    /// OW_CGROUP_DIR when not empty, else find_dir() on this process's /proc/self/cgroup.
    static memory_cgroup of_this_process(const std::string& configured_dir);

    const std::string& dir() const { return dir_; }
    /// How many processes the OOM killer ended in this cgroup (v1 without oom_kill: how often
    /// the limit was hit); nullopt when no such file can be read.
    std::optional<std::uint64_t> oom_kills() const;
    /// The memory limit in bytes; nullopt when there is none ("max", v1's huge default) or
    /// it cannot be read.
    std::optional<std::uint64_t> limit_bytes() const;

private:
    std::string dir_;
};

/// "the action exceeded its memory limit (256 MB)" (without the parenthesis when the limit
/// is unknown): the text an OOM kill is reported with.
std::string memory_limit_text(std::optional<std::uint64_t> limit_bytes);

}  // namespace actionloop
