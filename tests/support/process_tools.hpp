// Child processes for the integration suites: spawn with an explicit environment, run a
// command to completion, and inspect /proc (children, liveness) for leak checks.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace support {

/// An explicit process environment: name → value.
using env_map = std::map<std::string, std::string>;

/// Where a spawned process reads and writes, and what it sees.
struct spawn_spec {
    std::vector<std::string> argv;
    env_map env;
    std::filesystem::path cwd;
    std::filesystem::path stdin_file;   // empty: /dev/null
    std::filesystem::path stdout_file;  // truncated, then written by the child
    std::filesystem::path stderr_file;
};

/// Starts a process in its own process group. Throws std::runtime_error when fork fails.
/// The child gets only fds 0, 1 and 2. The pid is tracked until reap() or kill_and_reap().
pid_t spawn_process(const spawn_spec& spec);

/// Non-blocking: true (and the exit status in `status`) once the process has ended.
bool try_reap(pid_t pid, int& status);

/// SIGTERM, up to `grace` for the exit, then SIGKILL; always reaps. Returns the wait status.
int terminate_and_reap(pid_t pid, std::chrono::milliseconds grace);

/// Makes this test process the reaper of orphaned descendants (PR_SET_CHILD_SUBREAPER), so
/// leftovers of killed actions can be found and ended by kill_orphans().
void become_subreaper();

/// Kills and reaps every child of this test process that is not tracked by spawn_process.
void kill_orphans();

/// The result of run_command.
struct command_result {
    int exit_code = -1;  // -1 when killed by a signal or timed out
    bool timed_out = false;
    std::string out;
    std::string err;
};

/// Runs `argv` to completion with `stdin_data` on stdin; captures stdout and stderr.
command_result run_command(const std::vector<std::string>& argv, const std::string& stdin_data,
                           const env_map& env, const std::filesystem::path& cwd,
                           std::chrono::milliseconds timeout = std::chrono::seconds(120));

/// Live (not zombie) direct children of `parent`, read from /proc.
std::vector<pid_t> child_pids(pid_t parent);

/// Direct children of `parent` that are zombies (exited, not reaped): read from
/// /proc/<parent>/task/*/children and each child's /proc/<pid>/stat state 'Z'.
std::vector<pid_t> zombie_children(pid_t parent);

/// Every live descendant of `root` (children, grandchildren, …).
std::vector<pid_t> descendant_pids(pid_t root);

/// True while `pid` exists and is not a zombie.
bool process_alive(pid_t pid);

/// A base environment: PATH from the test process (when set).
env_map path_only_env();

}  // namespace support
