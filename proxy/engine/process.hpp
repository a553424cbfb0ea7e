// Child processes: posix_spawn with an exact fd layout, its own process group (so a whole
// tree can be stopped), a pidfd to notice its exit, and close-on-exec everywhere else.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/cgroup_memory.hpp"

namespace actionloop {

/// An owned file descriptor.
class unique_fd {
public:
    unique_fd() = default;
    explicit unique_fd(int fd) : fd_(fd) {}
    unique_fd(unique_fd&& other) noexcept : fd_(other.release()) {}
    unique_fd& operator=(unique_fd&& other) noexcept;
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd() { reset(); }

    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    int release();
    void reset(int fd = -1);

private:
    int fd_ = -1;
};

/// A pipe whose both ends are close-on-exec (dup2 onto a child fd clears the flag there).
struct pipe_pair {
    unique_fd read_end;
    unique_fd write_end;
};
pipe_pair make_pipe();

struct spawn_request {
    std::vector<std::string> argv;
    std::vector<std::string> env;  // "NAME=value"
    int stdin_fd = -1;             // becomes fd 0 (-1: /dev/null)
    int stdout_fd = 1;             // becomes fd 1
    int stderr_fd = 2;             // becomes fd 2
    int fd3 = -1;                  // becomes fd 3 when >= 0
    std::string cwd;               // the child's working directory ("": the proxy's)
};

/// A running child. Destruction kills its process group and reaps it.
class child_process {
public:
    child_process() = default;
    child_process(child_process&& other) noexcept;
    child_process& operator=(child_process&& other) noexcept;
    ~child_process() { kill(); }

    pid_t pid() const { return pid_; }
    /// Readable (POLLIN) once the child has exited.
    int exit_fd() const { return pidfd_.get(); }
    /// Non-blocking: has it exited? Reaps it if so (or takes the status the reaper thread
    /// kept for it, see reaper.hpp).
    bool exited();
    /// Blocks until it exits; returns the wait status.
    int wait();
    /// SIGKILL to its whole process group, then reaps it; then kill_orphans() (reaper.hpp):
    /// what the process left outside its group dies too. Safe to call twice.
    void kill();
    /// Raw wait status once reaped (see exited()).
    int status() const { return status_; }
    /// "exit status N" / "killed by signal N", like Go's ExitError.
    std::string describe() const;
    /// "killed by signal 11, SIGSEGV" when a signal the proxy did not send (kill()) ended the
    /// process; empty otherwise. A SIGKILL while the memory cgroup (watch_memory_cgroup())
    /// counted a new OOM kill is "the action exceeded its memory limit (N MB)".
    std::string crash_signal() const;
    /// The process's peak resident set in KiB (wait4's ru_maxrss), once reaped; -1 before.
    long peak_rss_kb() const { return peak_rss_kb_; }

private:
    friend child_process spawn(const spawn_request& request);
    std::string oom_kill_verdict() const;
    pid_t pid_ = -1;
    unique_fd pidfd_;
    bool reaped_ = true;
    int status_ = 0;
    bool killed_ = false;  // ended by our kill(), not by itself
    long peak_rss_kb_ = -1;
    std::optional<std::uint64_t> oom_kills_at_start_;  // the cgroup's count at spawn()
    mutable std::optional<std::string> oom_kill_;      // crash_signal()'s verdict, once read
};

/// The memory cgroup whose OOM-kill count names an out-of-memory death (crash_signal()).
/// Set once, before the first spawn (the server's start); none by default.
void watch_memory_cgroup(memory_cgroup cgroup);

/// Starts a child. Throws std::system_error (with the exec errno) when it cannot be started.
child_process spawn(const spawn_request& request);

/// Waits until `fd` is readable/writable (`events`) or `exit_fd` fires or the time is up.
/// Returns the poll revents of `fd`, or 0 on timeout; sets `exited` when exit_fd fired.
/// A negative timeout waits forever.
short wait_fd(int fd, short events, int exit_fd, int timeout_ms, bool& exited);

/// Milliseconds until `deadline` for poll(): rounded up (so a wait never ends early), 0 once
/// it has passed, -1 (forever) for time_point::max().
int poll_timeout(std::chrono::steady_clock::time_point deadline);

void set_nonblocking(int fd);

}  // namespace actionloop
