// The action process: start, ack, write requests, read answers, stop.
#include "executor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace actionloop {
namespace {

using namespace std::chrono;

// Bytes of the request the action has not read from its stdin yet (FIONREAD on the pipe).
int unread_request_bytes(int stdin_fd) {
    int unread = 0;
    return stdin_fd >= 0 && ::ioctl(stdin_fd, FIONREAD, &unread) == 0 ? unread : 0;
}

// Upstream parses the ack as {"ok": bool}; the texts match Go's. Returns whether the action
// offers pipelining ({"ok": true, "pipeline": true}: our launcher, when asked).
bool check_ack(const std::string& line) {
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
    auto ok = ack.find("ok");
    if (ok == ack.end() || !ok->is_boolean() || !ok->get<bool>()) {
        throw start_error("The action did not initialize properly.");
    }
    auto pipeline = ack.find("pipeline");
    return pipeline != ack.end() && pipeline->is_boolean() && pipeline->get<bool>();
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
    request.argv = {options_.command};
    request.env = options_.env;
    request.stdin_fd = input.read_end.get();
    request.fd3 = output.write_end.get();
    request.cwd = options_.cwd;
    try {
        child_ = spawn(request);
    } catch (const std::system_error& e) {
        spdlog::debug("cannot exec {}: {}", options_.command, e.what());
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
    answer_.clear();
    fd3_eof_ = false;
    pipelined_ = false;
    if (options_.wait_for_ack) {
        wait_for_ack();
    } else {
        bool gone = false;
        wait_fd(-1, 0, child_.exit_fd(), 5, gone);  // upstream's 5 ms start probe
        if (gone || child_.exited()) throw start_error("command exited");
    }
}

void executor::wait_for_ack() {
    std::string line;
    auto deadline = clock::now() + milliseconds(options_.ack_timeout_ms);
    switch (read_line(deadline, line, false)) {
        case line_result::answered:
            pipelined_ = check_ack(line);
            return;
        case line_result::exited:
            child_.kill();
            throw start_error("Command exited abruptly during initialization.");
        default:
            child_.kill();
            throw start_error("The action did not initialize properly: no ack arrived on fd 3 in " +
                              describe_ms(options_.ack_timeout_ms) +
                              " (with OW_WAIT_FOR_ACK set, an action writes {\"ok\":true} and "
                              "a newline to fd 3 when it is ready).");
    }
}

void executor::restart(const std::string& why) {
    spdlog::warn("{}; starting it again", why);
    child_.kill();
    start();
}

executor::outcome executor::outcome_of(line_result result) {
    switch (result) {
        case line_result::answered:
            return outcome::answered;
        case line_result::deadline:
            return outcome::deadline;
        case line_result::too_large:
            return outcome::too_large;
        default:
            return outcome::exited;
    }
}

bool executor::exited() { return child_.pid() <= 0 || child_.exited(); }

// What fd 3 holds right now, read and dropped; returns the byte count.
size_t executor::drain_fd3() {
    size_t dropped = 0;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd3_.get(), buf, sizeof buf);
        if (n > 0) {
            dropped += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) fd3_eof_ = true;
        return dropped;
    }
}

// Lines an action wrote beyond its one answer are dropped before the next request, so they
// can never be taken for a later activation's answer. The usual case costs one read that
// finds nothing. Once extra output shows up, the action may still be writing it (more than
// a pipe holds, or slowly): it is drained until fd 3 has been quiet for 10 ms (1 s at most).
void executor::discard_stale_output() {
    size_t stale = answer_.buffered() + drain_fd3();
    answer_.clear();
    if (stale == 0) return;
    const auto give_up = clock::now() + milliseconds(1000);
    while (!fd3_eof_ && clock::now() < give_up) {
        bool gone = false;
        if (wait_fd(fd3_.get(), POLLIN, -1, 10, gone) == 0) break;  // quiet
        size_t more = drain_fd3();
        if (more == 0 && !fd3_eof_) break;
        stale += more;
    }
    spdlog::warn("discarded {} bytes of extra output on fd 3", stale);
}

write_result executor::send(std::string_view body, clock::time_point deadline) {
    // The usual body has no newline: it goes out as is, with "\n" in the same writev.
    std::string_view request = body;
    if (std::memchr(body.data(), '\n', body.size()) != nullptr) {
        frame_request(body, framed_);
        request = std::string_view(framed_).substr(0, framed_.size() - 1);
    }
    return write_all(stdin_.get(), request, "\n", child_.exit_fd(), deadline);
}

executor::line_result executor::read_answers(clock::time_point deadline,
                                             std::vector<std::string>& lines, bool check_stale) {
    if (!pipelined_) {
        lines.emplace_back();
        const line_result result = read_line(deadline, lines.back(), check_stale);
        if (result != line_result::answered) lines.pop_back();
        return result;
    }
    for (;;) {
        while (answer_.has_line()) {
            lines.emplace_back();
            answer_.take_next_line(lines.back());
        }
        if (!lines.empty()) return line_result::answered;
        if (answer_.overflowed()) return line_result::too_large;
        if (fd3_eof_) return line_result::exited;
        bool gone = false;
        short revents = wait_fd(fd3_.get(), POLLIN, child_.exit_fd(), poll_timeout(deadline), gone);
        if (revents == 0 && !gone) return line_result::deadline;
        bool complete = fill_from_fd3();
        if (!complete && !answer_.overflowed() && gone && !fd3_eof_) {
            // Dead, and nothing more readable: whatever is in the pipe has been read.
            return line_result::exited;
        }
    }
}

// Reads until one full line is buffered. Data already in the pipe wins over an exit.
// fd 3 output that shows up while the request still sits unread in the action's stdin
// (FIONREAD) was written before the action saw the request: the rest of an earlier
// activation's extra output (more than a pipe holds, or slow). Where it ends and the
// answer begins cannot be told from the bytes, so the pipes are not trusted: the result is
// `stale` and the engine starts the action again and sends the request to the fresh process (it was
// never read, so it never ran). A well-behaved action reads its request before it answers:
// the check costs one ioctl per answer.
executor::line_result executor::read_line(clock::time_point deadline, std::string& line,
                                          bool check_stale) {
    for (;;) {
        bool gone = false;
        short revents = wait_fd(fd3_.get(), POLLIN, child_.exit_fd(), poll_timeout(deadline), gone);
        if (revents == 0 && !gone) return line_result::deadline;
        if (check_stale && revents != 0 && !gone && unread_request_bytes(stdin_.get()) > 0) {
            return line_result::stale;
        }
        if (fill_from_fd3()) {
            size_t extra = answer_.take_line(line);
            if (extra > 0) spdlog::warn("discarded {} bytes of extra output on fd 3", extra);
            return line_result::answered;
        }
        if (answer_.overflowed()) return line_result::too_large;
        if (gone || fd3_eof_) return line_result::exited;  // the caller stops what is left
    }
}

// Reads what fd 3 has; true when a complete line is buffered.
bool executor::fill_from_fd3() {
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd3_.get(), buf, sizeof buf);
        if (n > 0) {
            bool complete = answer_.append(buf, static_cast<size_t>(n));
            if (answer_.overflowed()) return false;
            if (complete) return true;
            continue;
        }
        if (n == 0) fd3_eof_ = true;
        return false;  // EAGAIN, EOF or error
    }
}

}  // namespace actionloop
