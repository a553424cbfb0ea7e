// posix_spawn-based child processes with pidfds.
#include "engine/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include "engine/reaper.hpp"

namespace actionloop {

namespace {

memory_cgroup& watched_cgroup() {
    static memory_cgroup cgroup;
    return cgroup;
}

// The kernel's PF_EXITING flag, in /proc/PID/stat's 9th field: the process has begun to exit
// (and is not a zombie yet).
bool exiting(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[1024];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    const char* field = std::strrchr(buf, ')');  // after "pid (comm)": comm may hold anything
    if (field == nullptr) return false;
    for (int i = 0; i < 7 && field != nullptr; ++i) field = std::strchr(field + 1, ' ');
    if (field == nullptr) return false;
    constexpr unsigned long PF_EXITING = 0x4;
    return (std::strtoul(field + 1, nullptr, 10) & PF_EXITING) != 0;
}

}  // namespace

void watch_memory_cgroup(memory_cgroup cgroup) { watched_cgroup() = std::move(cgroup); }

unique_fd& unique_fd::operator=(unique_fd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
}

int unique_fd::release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
}

void unique_fd::reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

pipe_pair make_pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        throw std::system_error(errno, std::generic_category(), "pipe");
    return {unique_fd(fds[0]), unique_fd(fds[1])};
}

void set_nonblocking(int fd) {
    int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

child_process::child_process(child_process&& other) noexcept
    : pid_(other.pid_),
      pidfd_(std::move(other.pidfd_)),
      reaped_(other.reaped_),
      status_(other.status_),
      killed_(other.killed_),
      peak_rss_kb_(other.peak_rss_kb_),
      oom_kills_at_start_(other.oom_kills_at_start_),
      oom_kill_(std::move(other.oom_kill_)) {
    other.pid_ = -1;
    other.reaped_ = true;
}

child_process& child_process::operator=(child_process&& other) noexcept {
    if (this != &other) {
        kill();
        pid_ = other.pid_;
        pidfd_ = std::move(other.pidfd_);
        reaped_ = other.reaped_;
        status_ = other.status_;
        killed_ = other.killed_;
        peak_rss_kb_ = other.peak_rss_kb_;
        oom_kills_at_start_ = other.oom_kills_at_start_;
        oom_kill_ = std::move(other.oom_kill_);
        other.pid_ = -1;
        other.reaped_ = true;
    }
    return *this;
}

// Reaping goes through the registry of owned children (reaper.hpp): with the reaper thread
// running, it may have reaped this child already and kept its status for us.
bool child_process::exited() {
    if (reaped_) return true;
    if (owned_children::try_collect(pid_, status_, peak_rss_kb_)) reaped_ = true;
    return reaped_;
}

int child_process::wait() {
    while (!exited()) {
        if (pidfd_) {
            pollfd exit{pidfd_.get(), POLLIN, 0};
            ::poll(&exit, 1, -1);  // readable once it has exited (reaped or not)
        } else {
            ::usleep(1000);
        }
    }
    return status_;
}

void child_process::kill() {
    if (pid_ <= 0) return;
    if (!exited()) {
        // A process already on its way out (its fd 3 closed first) dies of its own signal,
        // which must not pass for ours: an OOM kill is a SIGKILL too.
        killed_ = !exiting(pid_);
        ::kill(-pid_, SIGKILL);  // the whole group: children that kept our pipes die too
        ::kill(pid_, SIGKILL);
        wait();
    } else {
        ::kill(-pid_, SIGKILL);  // leftovers of an exited leader
    }
    pid_ = -1;
    pidfd_.reset();
    kill_orphans();  // what left the group (setsid) and was re-parented to us (see reaper.hpp)
}

std::string child_process::describe() const {
    if (WIFSIGNALED(status_)) {
        const int sig = WTERMSIG(status_);
        const char* name = ::sigabbrev_np(sig);
        std::string text = "killed by signal " + std::to_string(sig) +
                           (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
        const std::string crash = crash_signal();
        if (crash.rfind("killed by signal", 0) != 0 && !crash.empty()) text += ": " + crash;
        return text;
    }
    return "exit status " + std::to_string(WEXITSTATUS(status_));
}

std::string child_process::crash_signal() const {
    if (!WIFSIGNALED(status_)) return {};
    const int sig = WTERMSIG(status_);
    // Our SIGKILL; another signal came first even when we also sent one (it was exiting).
    if (sig == SIGKILL && (killed_ || all_children_killed())) return {};
    if (sig == SIGKILL && oom_kills_at_start_) {
        if (!oom_kill_) oom_kill_ = oom_kill_verdict();
        if (!oom_kill_->empty()) return *oom_kill_;
    }
    const char* name = ::sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (name != nullptr ? std::string(", SIG") + name : std::string());
}

// A SIGKILL we did not send: the OOM killer's when the cgroup counted a kill since the spawn.
// The kernel counts it right after it sends the signal; the count gets 5 ms to show up.
std::string child_process::oom_kill_verdict() const {
    const memory_cgroup& cgroup = watched_cgroup();
    for (int tries = 0; tries < 5; ++tries) {
        const auto kills = cgroup.oom_kills();
        if (!kills) return {};
        if (*kills > *oom_kills_at_start_) return memory_limit_text(cgroup.limit_bytes());
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return {};
}

namespace {

struct spawn_attributes {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    spawn_attributes() {
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attr);
    }
    ~spawn_attributes() {
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
    }
};

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

void setup_fds(const spawn_request& request, posix_spawn_file_actions_t& actions) {
    if (request.stdin_fd >= 0) {
        posix_spawn_file_actions_adddup2(&actions, request.stdin_fd, 0);
    } else {
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    }
    posix_spawn_file_actions_adddup2(&actions, request.stdout_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, request.stderr_fd, 2);
    if (request.fd3 >= 0) {
        posix_spawn_file_actions_adddup2(&actions, request.fd3, 3);
        posix_spawn_file_actions_addclosefrom_np(&actions, 4);
    } else {
        posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    }
    if (!request.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, request.cwd.c_str());
}

}  // namespace

child_process spawn(const spawn_request& request) {
    spawn_attributes sa;
    setup_fds(request, sa.actions);
    // Own process group (pgid = pid) so kill() reaches grandchildren; default signals.
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&sa.attr, &all);
    posix_spawnattr_setsigmask(&sa.attr, &none);
    posix_spawnattr_setpgroup(&sa.attr, 0);
    posix_spawnattr_setflags(
        &sa.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    auto argv = c_strings(request.argv);
    auto envp = c_strings(request.env);
    int err = 0;
    int pidfd = -1;
    // Read before the child runs: an OOM kill of it counts above this.
    const std::optional<std::uint64_t> oom_kills_before = watched_cgroup().oom_kills();
    // Registered as owned before the reaper thread can see it exit; the pidfd is opened
    // before anyone can reap it.
    const pid_t pid = owned_children::spawn_registered([&]() -> pid_t {
        pid_t started = -1;
        err = ::posix_spawn(&started, argv[0], &sa.actions, &sa.attr, argv.data(), envp.data());
        if (err != 0) return -1;
        pidfd = static_cast<int>(::syscall(SYS_pidfd_open, started, 0));
        return started;
    });
    if (err != 0) throw std::system_error(err, std::generic_category(), request.argv[0]);

    child_process child;
    child.oom_kills_at_start_ = oom_kills_before;
    child.pid_ = pid;
    child.reaped_ = false;
    child.pidfd_.reset(pidfd);
    return child;
}

short wait_fd(int fd, short events, int exit_fd, int timeout_ms, bool& exited) {
    pollfd fds[2] = {{fd, events, 0}, {exit_fd, POLLIN, 0}};
    nfds_t count = exit_fd >= 0 ? 2 : 1;
    for (;;) {
        int r = ::poll(fds, count, timeout_ms);
        if (r < 0 && errno == EINTR) continue;
        exited = count == 2 && (fds[1].revents & POLLIN) != 0;
        return r > 0 ? fds[0].revents : 0;
    }
}

int poll_timeout(std::chrono::steady_clock::time_point deadline) {
    using namespace std::chrono;
    if (deadline == steady_clock::time_point::max()) return -1;
    auto left = duration_cast<microseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) return 0;
    return static_cast<int>(std::min<long long>((left + 999) / 1000, 1LL << 30));
}

}  // namespace actionloop
