// The compiler runner: combined output through one pipe, bounded in time and size.
#include "payload/compiler.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <system_error>

#include "engine/process.hpp"

namespace actionloop {
namespace {

constexpr size_t MAX_OUTPUT = 1u << 20;  // keep the first MiB of diagnostics

using std::chrono::steady_clock;

// Reads the child's output until EOF, exit or the deadline. Returns false at the deadline.
bool collect_output(child_process& child, int fd, steady_clock::time_point deadline,
                    std::string& out) {
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            if (out.size() < MAX_OUTPUT) out.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n == 0) return true;
        if (errno == EINTR) continue;
        int left = poll_timeout(deadline);
        if (left == 0) return false;
        bool exited = false;
        short revents = wait_fd(fd, POLLIN, child.exit_fd(), left, exited);
        // The compiler has exited but a daemon it left holds the pipe: stop reading.
        if (exited && revents == 0) return true;
    }
}

}  // namespace

std::string run_compiler(const compile_request& request) {
    pipe_pair output = make_pipe();
    set_nonblocking(output.read_end.get());
    spawn_request spawn_req;
    spawn_req.argv = {request.compiler, request.main, request.src_dir, request.bin_dir};
    spawn_req.env = request.env;
    spawn_req.stdout_fd = output.write_end.get();
    spawn_req.stderr_fd = output.write_end.get();
    child_process child;
    try {
        child = spawn(spawn_req);
    } catch (const std::system_error& e) {
        return "cannot run the compiler " + request.compiler + ": " + e.code().message();
    }
    output.write_end.reset();
    const auto deadline = steady_clock::now() + std::chrono::milliseconds(request.timeout_ms);
    const int ms = request.timeout_ms;
    const std::string timed_out =
        "The compiler did not finish within " +
        (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms") +
        " and was stopped.";
    std::string out;
    if (!collect_output(child, output.read_end.get(), deadline, out)) {
        child.kill();
        return timed_out;
    }
    bool gone = false;  // output closed: what is left of the deadline to exit, then reap it
    wait_fd(-1, 0, child.exit_fd(), poll_timeout(deadline), gone);
    if (!gone && !child.exited()) {
        child.kill();
        return timed_out;
    }
    child.kill();  // reaps it, and stops anything it left behind in its group
    if (!out.empty()) return out;
    if (child.status() != 0) return child.describe();
    std::error_code ec;
    if (!std::filesystem::exists(request.bin_dir + "/exec", ec)) return "cannot compile";
    return {};
}

}  // namespace actionloop
