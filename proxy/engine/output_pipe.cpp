// The action's stdout and stderr pipes: see output_pipe.hpp.
#include "engine/output_pipe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <utility>
#include <vector>

namespace actionloop {
namespace {

constexpr size_t TAIL_KEPT = 16384;  // bytes kept for tail(): more than it ever returns
// After forwarding, the thread waits this long before it looks again, so what an action
// writes often in small pieces (our launcher's sentinel after each activation) is forwarded
// in one read and one write per pause instead of one wake-up each; the pipe (1 MiB where the
// system allows) holds what comes meanwhile. A marker posted meanwhile cuts the pause short.
constexpr int PAUSE_MS = 2;
constexpr int PIPE_SIZE = 1 << 20;
constexpr std::string_view SENTINEL = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX";
constexpr size_t READ_CHUNK = 65536;
constexpr auto TAIL_WAIT = std::chrono::seconds(1);  // tail(): for the reader to catch up

// Bytes the pipe holds now (FIONREAD).
std::uint64_t unread_bytes(int fd) {
    int n = 0;
    if (::ioctl(fd, FIONREAD, &n) < 0 || n < 0) return 0;
    return static_cast<std::uint64_t>(n);
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
    ending_[OUT] = ending_[ERR] = id;
}

std::uint64_t log_attribution::take_ending(stream s) {
    std::lock_guard<std::mutex> guard(lock_);
    return std::exchange(ending_[s], 0);
}

void log_attribution::proxy_sentinel(stream s, std::uint64_t id) {
    if (id == 0 || std::none_of(entries_.begin(), entries_.end(),
                                [id](const entry& e) { return e.id == id; })) {
        sentinel(s);  // the oldest open one (or none is open: nothing to end)
        return;
    }
    for (entry& e : entries_) {  // it, and any older one still open there: no more lines
        e.ended[s] = true;
        if (e.id == id) break;
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
                         size_t max_line_bytes, bool whole)
    : target_(target),
      attribution_(std::move(attribution)),
      stream_(target == 1 ? log_attribution::OUT : log_attribution::ERR),
      max_line_bytes_(max_line_bytes),
      max_injected_bytes_(log_backlog_bound()) {
    if (whole && !attribution_) whole_.emplace(max_line_bytes);
    pipe_pair pipe = make_pipe();
    read_end_ = std::move(pipe.read_end);
    write_end_ = std::move(pipe.write_end);
    set_nonblocking(read_end_.get());
    ::fcntl(read_end_.get(), F_SETPIPE_SZ, PIPE_SIZE);
    const int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
    wake_ = unique_fd(wake);
    thread_ = std::thread([this] { run(); });
    route_proxy_lines(target_, this);
}

output_pipe::~output_pipe() {
    unroute_proxy_lines(target_, this);  // no injection after this returns
    end_line();                          // what the last process wrote
    closing_.store(true);
    wake();
    thread_.join();
}

void output_pipe::wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_.get(), &one, sizeof one);
}

std::uint64_t output_pipe::position_locked() const {
    return consumed_ + unread_bytes(read_end_.get());
}

void output_pipe::post(marker m) {
    {
        std::lock_guard<std::mutex> guard(lock_);
        m.at = position_locked();
        injected_bytes_ += m.text.size();
        markers_.push_back(std::move(m));
    }
    wake();
}

void output_pipe::inject(std::string_view text, bool sentinel,
                         const std::function<void(std::string_view)>& direct) {
    std::unique_lock<std::mutex> guard(lock_);
    marker m{0, std::string(text), sentinel, sentinel, 0};
    if (sentinel && attribution_) m.ending = attribution_->take_ending(stream_);
    // The thread has handed on all it read and the pipe holds nothing: the line goes to the
    // writer now, after the markers still due, in its place (so it is there before the answer
    // that follows it, when the fd takes it).
    if (!handing_ && unread_bytes(read_end_.get()) == 0) {
        std::string out;
        for (const marker& due : markers_) apply(due, out);
        markers_.clear();
        injected_bytes_ = 0;
        apply(m, out);
        direct(out);
        return;
    }
    if (injected_bytes_ + text.size() > max_injected_bytes_) {
        ++dropped_lines_;
        dropped_bytes_ += text.size();
        count_dropped_log(1, text.size());
        return;
    }
    m.at = position_locked();
    injected_bytes_ += m.text.size();
    markers_.push_back(std::move(m));
    guard.unlock();
    wake();
}

bool output_pipe::idle() {
    std::lock_guard<std::mutex> guard(lock_);
    return markers_.empty() && !handing_;
}

void output_pipe::end_line() { post(marker{0, {}, false, true, 0}); }

void output_pipe::mark() {
    std::lock_guard<std::mutex> guard(lock_);
    tail_from_ = position_locked();
    tail_.clear();
}

std::string output_pipe::tail(size_t lines, size_t bytes) {
    std::unique_lock<std::mutex> guard(lock_);
    const std::uint64_t upto = position_locked();
    wake();
    progress_.wait_for(guard, TAIL_WAIT, [&] { return consumed_ >= upto; });
    std::string text = tail_;
    guard.unlock();
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    size_t start = text.size();
    for (size_t seen = 0; start > 0; --start) {
        if (text[start - 1] == '\n' && ++seen == lines) break;
    }
    if (text.size() - start > bytes) start = text.size() - bytes;
    return text.substr(start);
}

void output_pipe::run() {
    for (;;) {
        pollfd fds[2] = {{read_end_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
        std::uint64_t woken = 0;
        if (fds[1].revents != 0) {
            [[maybe_unused]] const ssize_t n = ::read(wake_.get(), &woken, sizeof woken);
        }
        if (closing_.load()) {
            pump(true);
            return;
        }
        if (pump(false)) {
            pollfd pause = {wake_.get(), POLLIN, 0};
            ::poll(&pause, 1, PAUSE_MS);  // a marker or the close: at once
        }
    }
}

// Reads what the pipe holds, in chunks, and hands it on with the markers that fall in it, in
// order; then the markers due with nothing left to read. The bytes become text under the lock
// (inject() may do the same), and are handed on without it. Closing: up to what the pipe held
// when it began, and nothing waits for room. True when anything was handed on.
bool output_pipe::pump(bool closing) {
    std::vector<char> buf(READ_CHUNK);
    std::string out;
    bool any = false;
    std::unique_lock<std::mutex> guard(lock_);
    const std::uint64_t stop_at = closing ? position_locked() : 0;
    for (;;) {
        ssize_t n = 0;
        if (!closing || consumed_ < stop_at) {
            do {
                n = ::read(read_end_.get(), buf.data(), buf.size());
            } while (n < 0 && errno == EINTR);
        }
        const std::uint64_t base = consumed_;
        const std::uint64_t end = base + static_cast<std::uint64_t>(std::max<ssize_t>(n, 0));
        consumed_ = end;
        if (n > 0) keep_tail_locked(buf.data(), static_cast<size_t>(n), base);
        out.clear();
        std::uint64_t at = base;
        while (!markers_.empty() && (markers_.front().at <= end || (n <= 0 && closing))) {
            const marker& m = markers_.front();
            const std::uint64_t upto = std::min(std::max(m.at, at), end);
            forward(buf.data() + (at - base), static_cast<size_t>(upto - at), out);
            at = upto;
            apply(m, out);
            injected_bytes_ -= m.text.size();
            markers_.pop_front();
        }
        forward(buf.data() + (at - base), static_cast<size_t>(end - at), out);
        if (dropped_lines_ != 0 && injected_bytes_ <= max_injected_bytes_ / 2) {
            out +=
                proxy_log_line(dropped_log_text(dropped_lines_, dropped_bytes_, max_injected_bytes_,
                                                target_ == 1 ? "stdout" : "stderr"));
            dropped_lines_ = dropped_bytes_ = 0;
        }
        progress_.notify_all();
        if (out.empty()) {
            if (n <= 0) return any;
            continue;
        }
        handing_ = true;
        guard.unlock();
        write_log_waiting(target_, out, closing_);
        guard.lock();
        handing_ = false;
        any = true;
    }
}

// A marker, at its point: the open line ended first (a sentinel, end_line), then its text.
void output_pipe::apply(const marker& m, std::string& out) {
    if (m.end_line || m.sentinel) end_open_line(out);
    out += m.text;
    if (m.sentinel && attribution_) {
        std::lock_guard<std::mutex> guard(attribution_->lock());
        attribution_->proxy_sentinel(stream_, m.ending);
    }
}

// The action's bytes: plain as they are (whole lines with more than one worker), JSON as
// records.
void output_pipe::forward(const char* data, size_t size, std::string& out) {
    if (size == 0) return;
    if (whole_) {
        whole_->feed(std::string_view(data, size), out);
        line_open_ = whole_->holding();
        say_broken(out);
        return;
    }
    if (attribution_) {
        emit_json(data, size, out);
    } else {
        out.append(data, size);
    }
    line_open_ = data[size - 1] != '\n';
}

// Whole lines: the lines that passed OW_LOG_LINE_BYTES and went on in pieces, said once each
// has ended (one line for all that ended in this chunk).
void output_pipe::say_broken(std::string& out) {
    const whole_lines::broken broken = whole_->take_broken();
    if (broken.lines == 0) return;
    out += proxy_log_line(
        std::to_string(broken.lines) + " line(s) (" + std::to_string(broken.bytes) +
            " bytes) of the action's " + (target_ == 1 ? "stdout" : "stderr") +
            " passed OW_LOG_LINE_BYTES (" + std::to_string(max_line_bytes_) +
            ") and went on in pieces of that size, each ended with a newline (with more than "
            "one worker, lines are forwarded whole so that workers' lines never meet mid-line)",
        "warn");
}

// JSON mode: complete lines become records; the rest waits for its '\n' (at most
// max_line_bytes_ of it is kept: the record says how much was cut).
void output_pipe::emit_json(const char* data, size_t size, std::string& out) {
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
        record(partial_, out);
        partial_.clear();
        partial_cut_ = 0;
        data += piece + 1;
        size -= piece + 1;
    }
}

// One line (without its '\n'): a sentinel as it is, anything else as a record. In Lambda
// mode Lambda's record (stdout INFO, stderr ERROR, unless the line names its level), none
// below AWS_LAMBDA_LOG_LEVEL; and a sentinel an action writes anyway is dropped and ends
// nothing: there the proxy's marks alone end activations (logging.hpp: write_sentinels), so
// one more end would move the next activation's lines onto the one after it.
void output_pipe::record(std::string_view line, std::string& out) {
    std::lock_guard<std::mutex> guard(attribution_->lock());
    const log_format& format = log_format_in_use();
    if (line == SENTINEL && partial_cut_ == 0) {
        if (format.lambda) return;
        out.append(line);
        out.push_back('\n');
        attribution_->sentinel(stream_);
        return;
    }
    const std::string time = log_time(std::chrono::system_clock::now());
    if (format.lambda) {
        append_lambda_record(
            out, time, stream_ == log_attribution::OUT ? log_level::info : log_level::error,
            format.min_level, attribution_->current(stream_), line, max_line_bytes_, partial_cut_);
        return;
    }
    append_log_record(out, time, stream_ == log_attribution::OUT ? "stdout" : "stderr",
                      attribution_->current(stream_), line, max_line_bytes_, partial_cut_);
}

void output_pipe::end_open_line(std::string& out) {
    if (!line_open_) return;
    if (whole_) {
        whole_->end_line(out);
        say_broken(out);
    } else if (attribution_) {
        record(partial_, out);
        partial_.clear();
        partial_cut_ = 0;
    } else {
        out.push_back('\n');
    }
    line_open_ = false;
}

// The tail keeps the last bytes read since mark() (`from`: the offset of `data`).
void output_pipe::keep_tail_locked(const char* data, size_t size, std::uint64_t from) {
    if (from + size <= tail_from_) return;
    if (from < tail_from_) {
        const auto skip = static_cast<size_t>(tail_from_ - from);
        data += skip;
        size -= skip;
    }
    if (size >= TAIL_KEPT) {
        tail_.assign(data + size - TAIL_KEPT, TAIL_KEPT);
        return;
    }
    if (tail_.size() + size > TAIL_KEPT) tail_.erase(0, tail_.size() + size - TAIL_KEPT);
    tail_.append(data, size);
}

}  // namespace actionloop
