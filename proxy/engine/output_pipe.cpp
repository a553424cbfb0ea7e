// The action's stdout and stderr pipes: see output_pipe.hpp.
#include "engine/output_pipe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
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
constexpr std::string_view SENTINEL = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX";

void write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // our stdout/stderr is gone: nothing to tell anyone
        data += n;
        size -= static_cast<size_t>(n);
    }
}

}  // namespace

// --- log_attribution ---

void log_attribution::written(std::uint64_t id, activation_tags tags) {
    std::lock_guard<std::mutex> guard(lock_);
    entries_.push_back({id, std::move(tags), {false, false}});
}

void log_attribution::forget(std::uint64_t id) {
    std::lock_guard<std::mutex> guard(lock_);
    auto it =
        std::find_if(entries_.begin(), entries_.end(), [id](const entry& e) { return e.id == id; });
    if (it != entries_.end()) entries_.erase(it);
}

const activation_tags* log_attribution::current(stream s) const {
    for (const entry& e : entries_) {
        if (!e.ended[s]) return &e.tags;
    }
    return nullptr;
}

void log_attribution::sentinel(stream s) {
    for (entry& e : entries_) {
        if (!e.ended[s]) {
            e.ended[s] = true;
            break;
        }
    }
    drop_ended_front();
}

void log_attribution::end(std::uint64_t id) {
    std::lock_guard<std::mutex> guard(lock_);
    for (entry& e : entries_) {
        if (e.id == id) e.ended[OUT] = e.ended[ERR] = true;
    }
    drop_ended_front();
}

void log_attribution::drop_ended_front() {
    while (!entries_.empty() && entries_.front().ended[OUT] && entries_.front().ended[ERR]) {
        entries_.pop_front();
    }
}

// --- output_pipe ---

output_pipe::output_pipe(int target, std::shared_ptr<log_attribution> attribution,
                         size_t max_line_bytes)
    : target_(target),
      attribution_(std::move(attribution)),
      stream_(target == 1 ? log_attribution::OUT : log_attribution::ERR),
      max_line_bytes_(max_line_bytes) {
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

output_pipe::~output_pipe() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_.get(), &one, sizeof one);
    thread_.join();
    end_line();  // what the last process wrote
}

void output_pipe::run() {
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

// Reads what the pipe holds, forwards it (plain: as it is; JSON: as records), keeps its tail.
void output_pipe::forward_locked() {
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(read_end_.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // EAGAIN (we hold the write end: never EOF)
        const size_t size = static_cast<size_t>(n);
        if (attribution_) {
            emit_json_locked(buf, size);
        } else {
            write_all(target_, buf, size);
        }
        line_open_ = buf[size - 1] != '\n';
        if (size >= TAIL_KEPT) {
            tail_.assign(buf + size - TAIL_KEPT, TAIL_KEPT);
        } else {
            if (tail_.size() + size > TAIL_KEPT) tail_.erase(0, tail_.size() + size - TAIL_KEPT);
            tail_.append(buf, size);
        }
    }
}

// JSON mode: complete lines become records, written together; the rest waits for its '\n'
// (at most max_line_bytes_ of it is kept: the record says how much was cut).
void output_pipe::emit_json_locked(const char* data, size_t size) {
    records_.clear();
    while (size > 0) {
        const void* hit = std::memchr(data, '\n', size);
        const size_t piece =
            hit == nullptr ? size : static_cast<size_t>(static_cast<const char*>(hit) - data);
        const size_t room =
            max_line_bytes_ + 4 > partial_.size() ? max_line_bytes_ + 4 - partial_.size() : 0;
        const size_t kept = std::min(piece, room);
        partial_.append(data, kept);
        partial_cut_ += piece - kept;
        if (hit == nullptr) break;
        record_locked(partial_);
        partial_.clear();
        partial_cut_ = 0;
        data += piece + 1;
        size -= piece + 1;
    }
    write_all(target_, records_.data(), records_.size());
    records_.clear();
}

// One line (without its '\n') into records_: a sentinel as it is, anything else as a record.
void output_pipe::record_locked(std::string_view line) {
    std::lock_guard<std::mutex> guard(attribution_->lock());
    if (line == SENTINEL && partial_cut_ == 0) {
        records_.append(line);
        records_.push_back('\n');
        attribution_->sentinel(stream_);
        return;
    }
    append_log_record(records_, log_time(std::chrono::system_clock::now()),
                      stream_ == log_attribution::OUT ? "stdout" : "stderr",
                      attribution_->current(stream_), line, max_line_bytes_, partial_cut_);
}

void output_pipe::end_line_locked() {
    forward_locked();
    if (!line_open_) return;
    if (attribution_) {
        records_.clear();
        record_locked(partial_);
        partial_.clear();
        partial_cut_ = 0;
        write_all(target_, records_.data(), records_.size());
        records_.clear();
    } else {
        write_all(target_, "\n", 1);
    }
    line_open_ = false;
}

void output_pipe::drain() {
    std::lock_guard<std::mutex> guard(lock_);
    forward_locked();
}

void output_pipe::end_line() {
    std::lock_guard<std::mutex> guard(lock_);
    end_line_locked();
}

void output_pipe::mark() {
    std::lock_guard<std::mutex> guard(lock_);
    forward_locked();
    tail_.clear();
}

std::string output_pipe::tail(size_t lines, size_t bytes) {
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
