// pipe_bench.cpp — one line out, one line back, between this process and a child:
//   bare_pipe       a forked child that echoes bytes (the floor: two pipe hops, two wakeups)
//   launcher_loop   a forked child running the launcher's run_loop with the hello function
//   action_hello    the real C++ hello action (built with the launcher, as `compile` does),
//                   exec'd with the proxy's fds: request on stdin, answer on fd 3
// Argument: 0 = both processes on CPU 0 (how bench/run pins the proxy and its action),
//           1 = parent on CPU 0, child on CPU 1 (a cross-core wakeup).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "loop.hpp"

namespace {

const std::string REQUEST = "{\"value\":{\"name\":\"Mike\"}}\n";

void pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

int child_cpu(const benchmark::State& state) {
    return state.range(0) != 0 && sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
}

bool write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n <= 0) return false;
        data += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

// Reads until a '\n' arrives; false on EOF or error.
bool read_line(int fd, std::string& buf) {
    buf.clear();
    char chunk[4096];
    for (;;) {
        ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n <= 0) return false;
        buf.append(chunk, static_cast<size_t>(n));
        if (chunk[n - 1] == '\n') return true;
    }
}

// A child connected by two pipes: the parent writes to `to_child`, reads from `from_child`.
struct child_process {
    pid_t pid = -1;
    int to_child = -1;
    int from_child = -1;

    ~child_process() {
        if (to_child >= 0) ::close(to_child);  // EOF: the child's loop ends
        if (from_child >= 0) ::close(from_child);
        if (pid > 0) {
            int status = 0;
            ::waitpid(pid, &status, 0);
        }
    }
};

enum class child_kind { bare_pipe, launcher_loop, action_hello };

// Forks the child with its request pipe on `in_fd` and its answer pipe on `out_fd`.
void start_child(child_process& c, child_kind kind, int cpu) {
    int req[2], ans[2];
    if (::pipe(req) != 0 || ::pipe(ans) != 0) std::abort();
    c.pid = ::fork();
    if (c.pid < 0) std::abort();
    if (c.pid == 0) {
        pin_to(cpu);
        ::close(req[1]);
        ::close(ans[0]);
        if (kind == child_kind::bare_pipe) {
            char buf[65536];
            for (;;) {
                ssize_t n = ::read(req[0], buf, sizeof buf);
                if (n <= 0 || !write_all(ans[1], buf, static_cast<size_t>(n))) ::_exit(0);
            }
        }
        if (kind == child_kind::launcher_loop) {
            ::unsetenv("__OW_WAIT_FOR_ACK");
            auto hello = [](nlohmann::json&& args, const actionloop::context&) -> nlohmann::json {
                return {
                    {"greeting", "Hello, " + args.value("name", std::string("stranger")) + "!"}};
            };
            ::_exit(actionloop::run_loop(hello, {}, req[0], ans[1]));
        }
        // action_hello: the proxy's layout, stdin = requests, fd 3 = answers, logs discarded.
        ::dup2(req[0], 0);
        ::dup2(ans[1], 3);
        int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        for (int fd = 4; fd < 64; ++fd) ::close(fd);
        ::unsetenv("__OW_WAIT_FOR_ACK");
        ::execl(ACTION_HELLO_PATH, ACTION_HELLO_PATH, static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(req[0]);
    ::close(ans[1]);
    c.to_child = req[1];
    c.from_child = ans[0];
}

void round_trips(benchmark::State& state, child_kind kind) {
    cpu_set_t saved;
    sched_getaffinity(0, sizeof(saved), &saved);
    pin_to(0);
    {
        child_process c;
        start_child(c, kind, child_cpu(state));
        std::string answer;
        // The first round trip waits for the child to start (exec, dynamic loading): untimed.
        if (!write_all(c.to_child, REQUEST.data(), REQUEST.size()) ||
            !read_line(c.from_child, answer)) {
            state.SkipWithError("the child did not answer");
        }
        for (auto _ : state) {
            if (!write_all(c.to_child, REQUEST.data(), REQUEST.size()) ||
                !read_line(c.from_child, answer)) {
                state.SkipWithError("the child stopped answering");
                break;
            }
            benchmark::DoNotOptimize(answer.data());
        }
    }
    sched_setaffinity(0, sizeof(saved), &saved);
    state.SetLabel(state.range(0) != 0 ? "cross-core" : "same core");
}

void BM_bare_pipe(benchmark::State& state) { round_trips(state, child_kind::bare_pipe); }
void BM_launcher_loop(benchmark::State& state) { round_trips(state, child_kind::launcher_loop); }
void BM_action_hello(benchmark::State& state) { round_trips(state, child_kind::action_hello); }

BENCHMARK(BM_bare_pipe)->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_launcher_loop)->Arg(0)->Arg(1)->UseRealTime();
BENCHMARK(BM_action_hello)->Arg(0)->Arg(1)->UseRealTime();

}  // namespace
