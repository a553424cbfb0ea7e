// The action's stderr pipe: see stderr_pipe.hpp.
#include "engine/stderr_pipe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace actionloop {
namespace {

constexpr size_t TAIL_KEPT = 16384;  // bytes kept for tail(): more than it ever returns
// After forwarding, the thread waits this long before it looks again, so what an action
// writes often in small pieces (our launcher's sentinel after each activation) is forwarded
// in one read and one write per pause instead of one wake-up each; the pipe (1 MiB where the
// system allows) holds what comes meanwhile. drain() forwards at once when order matters.
constexpr int PAUSE_MS = 2;
constexpr int PIPE_SIZE = 1 << 20;

void write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // our stderr is gone: nothing to tell anyone
        data += n;
        size -= static_cast<size_t>(n);
    }
}

}  // namespace

stderr_pipe::stderr_pipe() {
    pipe_pair pipe = make_pipe();
    read_end_ = std::move(pipe.read_end);
    write_end_ = std::move(pipe.write_end);
    set_nonblocking(read_end_.get());
    ::fcntl(read_end_.get(), F_SETPIPE_SZ, PIPE_SIZE);
    const int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
    wake_ = unique_fd(wake);
    thread_ = std::thread([this] { run(); });
}

stderr_pipe::~stderr_pipe() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_.get(), &one, sizeof one);
    thread_.join();
    drain();  // what the last process wrote
}

void stderr_pipe::run() {
    for (;;) {
        pollfd fds[2] = {{read_end_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
        if (fds[1].revents != 0) return;
        if (fds[0].revents != 0) {
            {
                std::lock_guard<std::mutex> guard(lock_);
                forward_locked();
            }
            pollfd stop = {wake_.get(), POLLIN, 0};
            if (::poll(&stop, 1, PAUSE_MS) > 0) return;
        }
    }
}

// Reads what the pipe holds, forwards it, keeps its tail.
void stderr_pipe::forward_locked() {
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(read_end_.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // EAGAIN (we hold the write end: never EOF)
        const size_t size = static_cast<size_t>(n);
        write_all(2, buf, size);
        line_open_ = buf[size - 1] != '\n';
        if (size >= TAIL_KEPT) {
            tail_.assign(buf + size - TAIL_KEPT, TAIL_KEPT);
        } else {
            if (tail_.size() + size > TAIL_KEPT) tail_.erase(0, tail_.size() + size - TAIL_KEPT);
            tail_.append(buf, size);
        }
    }
}

bool stderr_pipe::drain() {
    std::lock_guard<std::mutex> guard(lock_);
    forward_locked();
    return !line_open_;
}

void stderr_pipe::end_line() {
    std::lock_guard<std::mutex> guard(lock_);
    forward_locked();
    if (line_open_) {
        write_all(2, "\n", 1);
        line_open_ = false;
    }
}

void stderr_pipe::mark() {
    std::lock_guard<std::mutex> guard(lock_);
    forward_locked();
    tail_.clear();
}

std::string stderr_pipe::tail(size_t lines, size_t bytes) {
    std::lock_guard<std::mutex> guard(lock_);
    forward_locked();
    std::string text = tail_;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    size_t start = text.size();
    for (size_t seen = 0; start > 0; --start) {
        if (text[start - 1] == '\n' && ++seen == lines) break;
    }
    if (text.size() - start > bytes) start = text.size() - bytes;
    return text.substr(start);
}

}  // namespace actionloop
