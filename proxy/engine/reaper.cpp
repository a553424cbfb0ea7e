// The reaper thread, the registry of owned children, and the killing of orphans.
#include "engine/reaper.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <spdlog/spdlog.h>

namespace actionloop {
namespace {

using lock_type = std::unique_lock<std::mutex>;

struct owned_child {
    bool reaped = false;  // by the reaper thread; `status` waits for its child_process
    int status = 0;
    long max_rss_kb = -1;  // wait4's ru_maxrss: the child's peak resident set
};

// One per process, never destroyed: the detached reaper thread uses it until the very end.
struct registry {
    std::mutex mutex;                 // every waitpid on a child happens under it
    std::condition_variable spawned;  // the reaper, while there is no child at all
    std::unordered_map<pid_t, owned_child> owned;
    unsigned long spawns = 0;
    bool enabled = false;  // start_reaper() has run

    bool running_owned(pid_t pid) const {
        auto it = owned.find(pid);
        return it != owned.end() && !it->second.reaped;
    }
};

registry& the_registry() {
    static registry* const INSTANCE = new registry;
    return *INSTANCE;
}

// Every child of this process (each thread's, zombies included), from /proc.
std::vector<pid_t> children() {
    std::vector<pid_t> pids;
    DIR* tasks = ::opendir("/proc/self/task");
    if (tasks == nullptr) return pids;
    while (const dirent* task = ::readdir(tasks)) {
        if (task->d_name[0] == '.') continue;
        std::ifstream list(std::string("/proc/self/task/") + task->d_name + "/children");
        for (pid_t pid = 0; list >> pid;) pids.push_back(pid);
    }
    ::closedir(tasks);
    return pids;
}

// SIGKILL to the process and, when it leads a process group (a setsid child does), to the
// group: a group's members may have the process as their parent, not as a child of ours.
void kill_tree_of(pid_t pid) {
    const bool leader = ::getpgid(pid) == pid;
    ::kill(pid, SIGKILL);
    if (leader) ::kill(-pid, SIGKILL);
}

// Reaps `victims` (SIGKILLed children) under the lock, so that a pid can never be reused by
// a new owned child in between; gives up after 5 s (the reaper thread takes what is left).
void reap_killed(registry& reg, std::vector<pid_t> victims) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!victims.empty() && std::chrono::steady_clock::now() < give_up) {
        {
            lock_type lock(reg.mutex);
            std::vector<pid_t> left;
            for (pid_t pid : victims) {
                int status = 0;
                rusage usage{};
                const pid_t r = ::wait4(pid, &status, WNOHANG, &usage);
                if (r == 0) left.push_back(pid);
                if (r == pid) {
                    auto it = reg.owned.find(pid);  // shutdown kills owned children too
                    if (it != reg.owned.end()) it->second = {true, status, usage.ru_maxrss};
                }
            }
            victims.swap(left);
        }
        if (!victims.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

void kill_children(bool owned_too) {
    registry& reg = the_registry();
    for (int round = 0; round < 64; ++round) {  // each round reaches one more generation
        std::vector<pid_t> victims;
        {
            lock_type lock(reg.mutex);
            if (!reg.enabled) return;
            for (pid_t pid : children()) {
                if (!owned_too && reg.running_owned(pid)) continue;
                kill_tree_of(pid);  // under the lock: the pid cannot have been reused
                victims.push_back(pid);
            }
        }
        if (victims.empty()) return;
        spdlog::debug("killed {} leftover process(es)", victims.size());
        reap_killed(reg, std::move(victims));
    }
}

// Peeks (WNOWAIT) at the next exited child and reaps it under the lock: an owned child's
// status is kept for its child_process, an orphan's dropped. A child that its owner
// collected in between is simply gone by then.
[[noreturn]] void reap_forever() {
    registry& reg = the_registry();
    for (;;) {
        unsigned long spawns = 0;
        {
            lock_type lock(reg.mutex);
            spawns = reg.spawns;
        }
        siginfo_t info{};
        if (::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) != 0) {
            if (errno == ECHILD) {  // no child, so no descendant either: wait for a spawn
                lock_type lock(reg.mutex);
                reg.spawned.wait(lock, [&] { return reg.spawns != spawns; });
            } else if (errno != EINTR) {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
            continue;
        }
        const pid_t pid = info.si_pid;
        bool owned_exited = false;
        {
            lock_type lock(reg.mutex);
            int status = 0;
            rusage usage{};
            if (pid <= 0 || ::wait4(pid, &status, WNOHANG, &usage) != pid) continue;
            auto it = reg.owned.find(pid);
            if (it != reg.owned.end() && !it->second.reaped) {
                it->second = {true, status, usage.ru_maxrss};
                owned_exited = true;
            }
        }
        // An action or compiler that exited takes along what it left behind (see reaper.hpp).
        if (owned_exited) kill_children(false);
    }
}

}  // namespace

void start_reaper() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (::prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0) {
            spdlog::warn("cannot become a child subreaper: {}", std::strerror(errno));
        }
        {
            lock_type lock(the_registry().mutex);
            the_registry().enabled = true;
        }
        std::thread(reap_forever).detach();
    });
}

void kill_orphans() { kill_children(false); }

namespace {
std::atomic<bool> killed_all{false};
}  // namespace

void kill_all_children() {
    killed_all.store(true);
    kill_children(true);
}

bool all_children_killed() { return killed_all.load(); }

namespace owned_children {

pid_t spawn_registered(const std::function<pid_t()>& start) {
    registry& reg = the_registry();
    lock_type lock(reg.mutex);
    const pid_t pid = start();
    if (pid > 0) {
        reg.owned[pid] = {};
        ++reg.spawns;
        reg.spawned.notify_all();
    }
    return pid;
}

bool try_collect(pid_t pid, int& status, long& max_rss_kb) {
    registry& reg = the_registry();
    lock_type lock(reg.mutex);
    auto it = reg.owned.find(pid);
    if (it != reg.owned.end() && it->second.reaped) {
        status = it->second.status;
        max_rss_kb = it->second.max_rss_kb;
        reg.owned.erase(it);
        return true;
    }
    int raw = 0;
    rusage usage{};
    const pid_t r = ::wait4(pid, &raw, WNOHANG, &usage);
    if (r == 0 || (r < 0 && errno != ECHILD)) return false;
    status = r == pid ? raw : 0;  // ECHILD: not ours to know
    max_rss_kb = r == pid ? usage.ru_maxrss : -1;
    if (it != reg.owned.end()) reg.owned.erase(it);
    return true;
}

}  // namespace owned_children

}  // namespace actionloop
