// The action process: start, ack, write requests, read answers, stop.
#include "engine/executor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "engine/action_command.hpp"

namespace actionloop {
namespace {

using namespace std::chrono;

// Upstream parses the ack as {"ok": bool}; the texts match Go's. Returns whether the action
// offers pipelining ({"ok": true, "pipeline": true}: our launcher, when asked).
// What an ack offered.
struct ack_offers {
    bool pipeline = false;
    bool shutdown = false;
};

bool offered(const nlohmann::json& ack, const char* key) {
    auto it = ack.find(key);
    return it != ack.end() && it->is_boolean() && it->get<bool>();
}

ack_offers check_ack(const std::string& line) {
    nlohmann::json ack;
    try {
        ack = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
        size_t i = line.find_first_not_of(" \t\r\n");
        char c = i == std::string::npos ? ' ' : line[i];
        throw start_error(std::string("invalid character '") + c +
                          "' looking for beginning of value");
    }
    if (!ack.is_object()) {
        throw start_error(std::string("json: cannot unmarshal ") +
                          (ack.is_array()    ? "array"
                           : ack.is_string() ? "string"
                                             : "number") +
                          " into Go value of type openwhisk.ActionAck");
    }
    if (!offered(ack, "ok")) {
        // Upstream's text, then the action's own reason when its ack gave one (our launcher:
        // "on_init: <what>").
        auto error = ack.find("error");
        if (error != ack.end() && error->is_string() &&
            !error->get_ref<const std::string&>().empty()) {
            throw start_error("The action did not initialize properly. " +
                              error->get<std::string>());
        }
        throw start_error("The action did not initialize properly.");
    }
    return {offered(ack, "pipeline"), offered(ack, "shutdown")};
}

// "60 s" or "250 ms".
std::string describe_ms(int ms) {
    if (ms >= 1000 && ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
    return std::to_string(ms) + " ms";
}

}  // namespace

void executor::start() {
    pipe_pair input = make_pipe();
    pipe_pair output = make_pipe();
    spawn_request request;
    // In a Lambda zip, through the zip's own loader and libraries (engine/action_command.hpp).
    const std::optional<bundled_loader>& loader = bundled_loader_of_process();
    request.argv = action_argv(options_.command, loader, loader && is_elf_file(options_.command));
    request.env = options_.env;
    request.stdin_fd = input.read_end.get();
    request.fd3 = output.write_end.get();
    request.stderr_fd = stderr_.write_fd();
    if (stdout_) request.stdout_fd = stdout_->write_fd();
    request.cwd = options_.cwd;
    stderr_.mark();  // the tail of a failed start is this process's
    try {
        child_ = spawn(request);
    } catch (const std::system_error& e) {
        spdlog::debug("cannot exec {}: {}", request.argv.front(), e.what());
        throw start_error("command exited");
    }
    // Our copies of the child's ends close now, so EOF on fd 3 means the child is gone.
    stdin_ = std::move(input.write_end);
    fd3_ = std::move(output.read_end);
    set_nonblocking(stdin_.get());
    // A pipelined action may have many requests waiting in its stdin (see engine.hpp).
    ::fcntl(stdin_.get(), F_SETPIPE_SZ, 1 << 20);
    int capacity = ::fcntl(stdin_.get(), F_GETPIPE_SZ);
    stdin_capacity_ = capacity > 0 ? static_cast<size_t>(capacity) : 65536;
    set_nonblocking(fd3_.get());
    ack_.clear();
    fd3_eof_ = false;
    pipelined_ = false;
    shutdown_offered_ = false;
    if (options_.wait_for_ack) {
        wait_for_ack();
    } else {
        bool gone = false;
        wait_fd(-1, 0, child_.exit_fd(), 5, gone);  // upstream's 5 ms start probe
        if (gone || child_.exited()) start_failed("command exited");
    }
}

void executor::wait_for_ack() {
    std::string line;
    auto deadline = clock::now() + milliseconds(options_.ack_timeout_ms);
    switch (read_line(deadline, line)) {
        case outcome::answered:
            try {
                const ack_offers offers = check_ack(line);
                pipelined_ = offers.pipeline;
                shutdown_offered_ = offers.shutdown;
            } catch (const start_error& e) {
                start_failed(e.what());
            }
            return;
        case outcome::exited:
            start_failed("Command exited abruptly during initialization.");
        default:
            start_failed("The action did not initialize properly: no ack arrived on fd 3 in " +
                         describe_ms(options_.ack_timeout_ms) +
                         " (with OW_WAIT_FOR_ACK set, an action writes {\"ok\":true} and "
                         "a newline to fd 3 when it is ready).");
    }
}

// The process is stopped; the error carries what it wrote to stderr last.
void executor::start_failed(const std::string& why) {
    child_.kill();
    std::string tail = stderr_.tail();
    stderr_.end_line();
    throw start_error(why, std::move(tail));
}

void executor::restart(const std::string& why) {
    const log_route_scope through = route_logs();  // after its lines, in its streams
    child_.kill();
    const long rss_kb = child_.peak_rss_kb();  // wait4's, for the process just ended
    spdlog::warn("{}; starting it again{}", why,
                 rss_kb < 0 ? std::string()
                            : " (its peak RSS: " + std::to_string((rss_kb + 1023) / 1024) + " MB)");
    start();
}

int executor::send_shutdown(std::chrono::milliseconds time_left) {
    if (!shutdown_offered_ || !stdin_ || child_.exit_fd() < 0) return -1;
    const std::string line = std::string(SHUTDOWN_LINE_PREFIX) +
                             std::to_string(std::max<long long>(time_left.count(), 0)) + "\n";
    // Non-blocking, and the action has read every request (nothing is in flight): a short
    // line fits in the pipe, or the action is not reading and is killed as before.
    if (::write(stdin_.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
        return -1;
    }
    return ::fcntl(child_.exit_fd(), F_DUPFD_CLOEXEC, 0);
}

bool executor::exited() { return child_.pid() <= 0 || child_.exited(); }

size_t executor::unread_request_bytes() const {
    int unread = 0;
    return stdin_ && ::ioctl(stdin_.get(), FIONREAD, &unread) == 0 && unread > 0
               ? static_cast<size_t>(unread)
               : 0;
}

// The ack: reads until one full line is buffered. Data already in the pipe wins over an exit.
executor::outcome executor::read_line(clock::time_point deadline, std::string& line) {
    for (;;) {
        bool gone = false;
        short revents = wait_fd(fd3_.get(), POLLIN, child_.exit_fd(), poll_timeout(deadline), gone);
        if (revents == 0 && !gone) return outcome::deadline;
        if (fill_from_fd3()) {
            size_t extra = ack_.take_line(line);
            if (extra > 0) spdlog::warn("discarded {} bytes of extra output on fd 3", extra);
            return outcome::answered;
        }
        if (ack_.overflowed()) return outcome::too_large;
        if (gone || fd3_eof_) return outcome::exited;  // the caller stops what is left
    }
}

// Reads what fd 3 has; true when a complete line is buffered.
bool executor::fill_from_fd3() {
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd3_.get(), buf, sizeof buf);
        if (n > 0) {
            bool complete = ack_.append(buf, static_cast<size_t>(n));
            if (ack_.overflowed()) return false;
            if (complete) return true;
            continue;
        }
        if (n == 0) fd3_eof_ = true;
        return false;  // EAGAIN, EOF or error
    }
}

}  // namespace actionloop
