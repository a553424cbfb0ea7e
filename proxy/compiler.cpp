// The compiler runner: combined output through one pipe, bounded in time and size.
#include "compiler.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <system_error>

#include "process.hpp"

namespace actionloop {
namespace {

constexpr size_t MAX_OUTPUT = 1u << 20;  // keep the first MiB of diagnostics

// Reads the child's output until EOF, exit or timeout. Returns false on timeout.
bool collect_output(child_process& child, int fd, int timeout_ms, std::string& out) {
    using namespace std::chrono;
    auto deadline = steady_clock::now() + milliseconds(timeout_ms);
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            if (out.size() < MAX_OUTPUT) out.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n == 0) return true;
        if (errno == EINTR) continue;
        auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
        if (left <= 0) return false;
        bool exited = false;
        short revents = wait_fd(fd, POLLIN, child.exit_fd(), static_cast<int>(left), exited);
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
    std::string out;
    if (!collect_output(child, output.read_end.get(), request.timeout_ms, out)) {
        child.kill();
        return "The compiler did not finish within " + std::to_string(request.timeout_ms / 1000) +
               " s and was stopped.";
    }
    bool gone = false;  // output closed: give it the usual time to exit, then reap it
    wait_fd(-1, 0, child.exit_fd(), request.timeout_ms, gone);
    child.kill();  // reaps it, and stops anything it left behind in its group
    if (!out.empty()) return out;
    if (child.status() != 0) return child.describe();
    std::error_code ec;
    if (!std::filesystem::exists(request.bin_dir + "/exec", ec)) return "cannot compile";
    return {};
}

}  // namespace actionloop
