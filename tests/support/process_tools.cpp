#include "process_tools.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "test_util.hpp"

namespace support {
namespace {

std::mutex tracked_mutex;
std::set<pid_t> tracked;

void track(pid_t pid) {
    std::lock_guard<std::mutex> lock(tracked_mutex);
    tracked.insert(pid);
}

void untrack(pid_t pid) {
    std::lock_guard<std::mutex> lock(tracked_mutex);
    tracked.erase(pid);
}

bool is_tracked(pid_t pid) {
    std::lock_guard<std::mutex> lock(tracked_mutex);
    return tracked.count(pid) != 0;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> pointers;
    for (auto& text : strings) {
        pointers.push_back(text.data());
    }
    pointers.push_back(nullptr);
    return pointers;
}

int open_or_throw(const std::filesystem::path& path, int flags) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw std::runtime_error("cannot open " + path.string());
    }
    return fd;
}

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void exec_child(const char* cwd, int in, int out, int err, char** argv, char** envp) {
    setpgid(0, 0);
    // Like a container's entrypoint: default SIGPIPE (this test process ignores it) and
    // nothing blocked.
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (chdir(cwd) != 0) {
        _exit(126);
    }
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    close_range(3, ~0U, 0);
    execve(argv[0], argv, envp);
    _exit(127);
}

struct proc_stat {
    pid_t ppid = 0;
    char state = '?';
};

bool read_stat(pid_t pid, proc_stat& stat) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line)) {
        return false;
    }
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos || close + 4 >= line.size()) {
        return false;
    }
    stat.state = line[close + 2];
    stat.ppid = static_cast<pid_t>(std::atoi(line.c_str() + close + 4));
    return true;
}

std::vector<pid_t> all_pids() {
    std::vector<pid_t> pids;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
            pids.push_back(static_cast<pid_t>(std::atoi(name.c_str())));
        }
    }
    return pids;
}

std::vector<pid_t> children_of(pid_t parent, bool include_zombies) {
    std::vector<pid_t> children;
    for (pid_t pid : all_pids()) {
        proc_stat stat;
        if (read_stat(pid, stat) && stat.ppid == parent &&
            (include_zombies || (stat.state != 'Z' && stat.state != 'X'))) {
            children.push_back(pid);
        }
    }
    return children;
}

// `name` itself when it has a slash, else the first executable match on this process's PATH.
std::string resolve_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    if (name.find('/') != std::string::npos || path == nullptr) {
        return name;
    }
    std::string dirs = path;
    for (std::size_t start = 0; start <= dirs.size();) {
        std::size_t end = dirs.find(':', start);
        if (end == std::string::npos) {
            end = dirs.size();
        }
        const std::string candidate = dirs.substr(start, end - start) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        start = end + 1;
    }
    return name;
}

}  // namespace

pid_t spawn_process(const spawn_spec& spec) {
    std::vector<std::string> argv = spec.argv;
    if (argv.empty()) {
        throw std::runtime_error("spawn_process: empty argv");
    }
    argv[0] = resolve_program(argv[0]);
    std::vector<std::string> envs;
    for (const auto& [name, value] : spec.env) {
        envs.push_back(name + "=" + value);
    }
    std::vector<char*> argv_c = c_strings(argv);
    std::vector<char*> env_c = c_strings(envs);
    const std::string cwd = spec.cwd.string();
    const int in = open_or_throw(spec.stdin_file.empty() ? "/dev/null" : spec.stdin_file, O_RDONLY);
    const int out = open_or_throw(spec.stdout_file, O_WRONLY | O_CREAT | O_TRUNC);
    const int err = open_or_throw(spec.stderr_file, O_WRONLY | O_CREAT | O_TRUNC);
    const pid_t pid = fork();
    if (pid == 0) {
        exec_child(cwd.c_str(), in, out, err, argv_c.data(), env_c.data());
    }
    ::close(in);
    ::close(out);
    ::close(err);
    if (pid < 0) {
        throw std::runtime_error("fork failed");
    }
    track(pid);
    return pid;
}

bool try_reap(pid_t pid, int& status) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno == ECHILD)) {
        untrack(pid);
        return true;
    }
    return false;
}

int terminate_and_reap(pid_t pid, std::chrono::milliseconds grace) {
    int status = 0;
    if (try_reap(pid, status)) {
        return status;
    }
    ::kill(pid, SIGTERM);
    if (wait_until([&] { return try_reap(pid, status); }, grace)) {
        return status;
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    untrack(pid);
    return status;
}

void become_subreaper() {
    static std::once_flag once;
    std::call_once(once, [] {
        prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L);
        signal(SIGPIPE, SIG_IGN);
    });
}

void kill_orphans() {
    for (pid_t pid : children_of(::getpid(), true)) {
        if (!is_tracked(pid)) {
            ::kill(pid, SIGKILL);
            int status = 0;
            ::waitpid(pid, &status, 0);
        }
    }
}

command_result run_command(const std::vector<std::string>& argv, const std::string& stdin_data,
                           const env_map& env, const std::filesystem::path& cwd,
                           std::chrono::milliseconds timeout) {
    temp_dir io("actionloop-cmd");
    write_file(io.path() / "stdin", stdin_data);
    const spawn_spec spec{
        argv, env, cwd, io.path() / "stdin", io.path() / "stdout", io.path() / "stderr"};
    const pid_t pid = spawn_process(spec);
    int status = 0;
    command_result result;
    if (!wait_until([&] { return try_reap(pid, status); }, timeout)) {
        result.timed_out = true;
        status = terminate_and_reap(pid, std::chrono::milliseconds(500));
    }
    ::kill(-pid, SIGKILL);  // anything the command left in its process group
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = read_file(io.path() / "stdout");
    result.err = read_file(io.path() / "stderr");
    return result;
}

std::vector<pid_t> child_pids(pid_t parent) { return children_of(parent, false); }

std::vector<pid_t> zombie_children(pid_t parent) {
    std::vector<pid_t> zombies;
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(parent) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
        std::ifstream list(task.path() / "children");
        for (pid_t pid = 0; list >> pid;) {
            proc_stat stat;
            if (read_stat(pid, stat) && stat.state == 'Z') {
                zombies.push_back(pid);
            }
        }
    }
    return zombies;
}

std::vector<pid_t> descendant_pids(pid_t root) {
    std::vector<pid_t> found;
    std::vector<pid_t> frontier{root};
    while (!frontier.empty()) {
        const pid_t parent = frontier.back();
        frontier.pop_back();
        for (pid_t child : child_pids(parent)) {
            found.push_back(child);
            frontier.push_back(child);
        }
    }
    return found;
}

bool process_alive(pid_t pid) {
    proc_stat stat;
    return read_stat(pid, stat) && stat.state != 'Z' && stat.state != 'X';
}

env_map path_only_env() {
    env_map env;
    if (const char* path = std::getenv("PATH")) {
        env["PATH"] = path;
    }
    return env;
}

}  // namespace support
