// Logging and the sentinel.
#include "logging.hpp"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/cfg/env.h>
#include <spdlog/formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "log_record.hpp"

namespace actionloop {
namespace {

constexpr std::string_view SENTINEL = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX\n";
constexpr size_t ATOMIC_WRITE = 4096;  // PIPE_BUF: a write this small to a pipe is whole

void write_fd(int fd, std::string_view text) {
    while (!text.empty()) {
        ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return;
        }
        text.remove_prefix(static_cast<size_t>(n));
    }
}

log_format format_in_use;  // set once by setup_logging, before any thread logs
size_t json_line_bytes = 16384;

// Lambda's JSON records: the proxy's lines as Lambda's records (setup_logging).
bool lambda_records() { return format_in_use.json && format_in_use.lambda; }

// spdlog's levels in Lambda's names, and back.
log_level lambda_level(spdlog::level::level_enum level) {
    switch (level) {
        case spdlog::level::trace:
            return log_level::trace;
        case spdlog::level::debug:
            return log_level::debug;
        case spdlog::level::info:
            return log_level::info;
        case spdlog::level::warn:
            return log_level::warn;
        case spdlog::level::err:
            return log_level::error;
        default:  // critical (off is never logged)
            return log_level::fatal;
    }
}

spdlog::level::level_enum spdlog_level(log_level level) {
    static const spdlog::level::level_enum LEVELS[] = {
        spdlog::level::trace, spdlog::level::debug, spdlog::level::info,
        spdlog::level::warn,  spdlog::level::err,   spdlog::level::critical};
    return LEVELS[static_cast<int>(level)];
}

// The /run request of the activation the proxy's records on this thread are about, if any.
thread_local const std::string* activation_line = nullptr;

// The proxy's diagnostics as records: {"time","stream":"proxy","level","message"}, with the
// activation's tags inside an activation_log_scope; in Lambda mode Lambda's record (the
// logger's level has filtered them already: setup_logging).
class json_formatter final : public spdlog::formatter {
public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
        std::string record;
        activation_tags tags;
        if (activation_line != nullptr) tags = tags_of_request(*activation_line);
        const activation_tags* about = activation_line != nullptr ? &tags : nullptr;
        const std::string_view message(msg.payload.data(), msg.payload.size());
        if (lambda_records()) {
            append_lambda_record(record, log_time(msg.time), lambda_level(msg.level),
                                 log_level::trace, about, message, json_line_bytes);
        } else {
            std::string level = ",\"level\":\"";
            const auto name = spdlog::level::to_string_view(msg.level);
            level.append(name.data(), name.size());
            level.push_back('"');
            append_log_record(record, log_time(msg.time), "proxy", about, message, json_line_bytes,
                              0, level);
        }
        dest.append(record.data(), record.data() + record.size());
    }
    std::unique_ptr<spdlog::formatter> clone() const override {
        return std::make_unique<json_formatter>();
    }
};

// One fd's writer: a backlog the proxy's lines go into without waiting (bounded: past it they
// are dropped and counted) and the output pipes' threads go into when there is room; its
// thread writes it out, and is the only thread that may block on the fd: anyone else writes
// directly only what the fd takes at once (a pipe with room, a file), with nothing before it.
class fd_writer {
public:
    fd_writer(int fd, size_t bound) : fd_(fd), bound_(bound) {
        thread_ = std::thread([this] { run(); });
        thread_.detach();  // lives as long as the process (the exit flushes: flush_logs)
    }

    // The proxy's own text: never waits. Written at once when nothing is waiting before it
    // and the fd takes it without blocking (a line written before an answer is there when the
    // answer is); else into the backlog. False when dropped.
    bool put(std::string_view text) {
        std::lock_guard<std::mutex> guard(lock_);
        if (!busy_ && pending_.empty() && writable_now(text.size())) {
            write_fd(fd_, text);
            return true;
        }
        if (backlog_locked() + text.size() > bound_) {
            ++dropped_lines_;
            dropped_bytes_ += text.size();
            ++unsaid_lines_;
            unsaid_bytes_ += text.size();
            return false;
        }
        pending_.append(text);
        work_.notify_one();
        return true;
    }

    // An output pipe's text: waits for room (looking at `abandon` now and then: a pipe that
    // closes stops waiting), never dropped.
    void put_waiting(std::string_view text, const std::atomic<bool>& abandon) {
        std::unique_lock<std::mutex> guard(lock_);
        while (backlog_locked() >= bound_ && !abandon.load()) {
            room_.wait_for(guard, std::chrono::milliseconds(100));
        }
        if (!busy_ && pending_.empty() && writable_now(text.size())) {
            write_fd(fd_, text);  // whole and at once: no hand-over to the thread
            return;
        }
        pending_.append(text);
        work_.notify_one();
    }

    bool wait_idle(std::chrono::steady_clock::time_point until) {
        std::unique_lock<std::mutex> guard(lock_);
        return room_.wait_until(guard, until, [&] { return !busy_ && pending_.empty(); });
    }

    void add_stats(log_backlog_stats& stats) {
        std::lock_guard<std::mutex> guard(lock_);
        stats.dropped_lines += dropped_lines_;
        stats.dropped_bytes += dropped_bytes_;
        stats.backlog_bytes += backlog_locked();
    }

private:
    size_t backlog_locked() const { return pending_.size() + busy_bytes_; }

    // True when `size` bytes go to the fd now without blocking: a pipe or socket with room
    // (a pipe's POLLOUT promises a page), or a file.
    bool writable_now(size_t size) const {
        if (size > ATOMIC_WRITE) return false;
        pollfd ready{fd_, POLLOUT, 0};
        return ::poll(&ready, 1, 0) == 1 && (ready.revents & POLLOUT) != 0;
    }

    void finished_locked() {
        busy_ = false;
        busy_bytes_ = 0;
        say_dropped_locked();
        if (!pending_.empty()) work_.notify_one();
        room_.notify_all();
    }

    // Once the backlog is half free again: one line saying what was lost, where it was lost.
    void say_dropped_locked() {
        if (unsaid_lines_ == 0 || backlog_locked() > bound_ / 2) return;
        pending_.append(dropped_notice(fd_, unsaid_lines_, unsaid_bytes_));
        unsaid_lines_ = 0;
        unsaid_bytes_ = 0;
    }

    void run() {
        std::string writing;
        std::unique_lock<std::mutex> guard(lock_);
        for (;;) {
            work_.wait(guard, [&] { return !busy_ && !pending_.empty(); });
            busy_ = true;
            writing.swap(pending_);
            busy_bytes_ = writing.size();
            guard.unlock();
            write_fd(fd_, writing);
            writing.clear();
            guard.lock();
            finished_locked();
        }
    }

    static std::string dropped_notice(int fd, std::uint64_t lines, std::uint64_t bytes);

    const int fd_;
    const size_t bound_;
    std::mutex lock_;
    std::condition_variable work_;  // for the thread: something to write
    std::condition_variable room_;  // for the waiting pipes and flush_logs: a write ended
    std::string pending_;
    bool busy_ = false;  // the thread is writing
    size_t busy_bytes_ = 0;
    std::uint64_t dropped_lines_ = 0;
    std::uint64_t dropped_bytes_ = 0;
    std::uint64_t unsaid_lines_ = 0;  // dropped since the last notice
    std::uint64_t unsaid_bytes_ = 0;
    std::thread thread_;
};

// Set once by start_log_writers, before the server's threads; never freed (the detached
// threads use them until the process ends).
std::array<fd_writer*, 3> writers{nullptr, nullptr, nullptr};
size_t backlog_bound = 0;

// Which injectors take the proxy's lines for fd 1 and 2 (output_pipe.cpp registers; one pair
// per worker): the newest takes a line no scope routes.
std::mutex routes_lock;
std::array<std::vector<log_injector*>, 3> routes;
// log_route_scope's, on this thread: fd 1's and fd 2's injector (null: the newest above).
thread_local std::array<log_injector*, 3> scoped_routes{nullptr, nullptr, nullptr};
std::atomic<std::uint64_t> pipe_dropped_lines{0};
std::atomic<std::uint64_t> pipe_dropped_bytes{0};

// Every write of the proxy's own (never waits once the writers run).
void emit(int fd, std::string_view text, bool sentinel = false) {
    if (writers[fd] == nullptr) {
        write_fd(fd, text);
        return;
    }
    const auto direct = [fd](std::string_view now) { writers[fd]->put(now); };
    if (scoped_routes[fd] != nullptr) {  // alive: its scope's owner holds it
        scoped_routes[fd]->inject(text, sentinel, direct);
        return;
    }
    {
        std::lock_guard<std::mutex> guard(routes_lock);
        if (!routes[fd].empty()) {
            routes[fd].back()->inject(text, sentinel, direct);
            return;
        }
    }
    writers[fd]->put(text);
}

std::string plain_line(std::string_view message) {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y/%m/%d %H:%M:%S ", &tm);
    std::string line(stamp);
    line.append(message);
    line.push_back('\n');
    return line;
}

std::string fd_writer::dropped_notice(int fd, std::uint64_t lines, std::uint64_t bytes) {
    return proxy_log_line(
        dropped_log_text(lines, bytes, backlog_bound, fd == 1 ? "stdout" : "stderr"));
}

// spdlog's lines through emit(): never waiting on stderr.
class emitting_sink final : public spdlog::sinks::base_sink<std::mutex> {
protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        spdlog::memory_buf_t formatted;
        formatter_->format(msg, formatted);
        emit(2, std::string_view(formatted.data(), formatted.size()));
    }
    // An explicit flush (the exit's): what is held goes out, within a bound.
    void flush_() override { flush_logs(std::chrono::seconds(2)); }
};

}  // namespace

void setup_logging(bool debug, const log_format& format, size_t max_line_bytes) {
    format_in_use = format;
    json_line_bytes = max_line_bytes;
    auto logger = std::make_shared<spdlog::logger>("proxy", std::make_shared<emitting_sink>());
    if (format.json) {
        logger->set_formatter(std::make_unique<json_formatter>());
    } else {
        logger->set_pattern("%Y/%m/%d %H:%M:%S.%e [%l] %v");
    }
    logger->set_level(debug ? spdlog::level::debug : spdlog::level::warn);
    // Each line is handed on whole as it is logged (emit): no flush after each, which would
    // wait for the fd; the exit flushes (ops/shutdown.cpp).
    logger->flush_on(spdlog::level::off);
    spdlog::set_default_logger(logger);
    spdlog::cfg::load_env_levels();
    if (!lambda_records()) return;
    // AWS_LAMBDA_LOG_LEVEL filters the proxy's records too: below it, none is even formatted.
    const auto floor = spdlog_level(format.min_level);
    if (spdlog::default_logger()->level() < floor) spdlog::default_logger()->set_level(floor);
    if (!format.unknown_level.empty()) {
        spdlog::warn(
            "AWS_LAMBDA_LOG_LEVEL '{}' names no level (TRACE, DEBUG, INFO, WARN, ERROR or FATAL): "
            "every record is written",
            format.unknown_level);
    }
}

const log_format& log_format_in_use() { return format_in_use; }

activation_log_scope::activation_log_scope(const std::string& request_line)
    : previous_(activation_line) {
    activation_line = &request_line;
}

activation_log_scope::~activation_log_scope() { activation_line = previous_; }

void write_sentinels() {
    if (!format_in_use.sentinels) return;  // single-entrypoint mode, plain lines
    // Lambda mode: the marks alone (the output pipes end the activation there).
    const std::string_view text = format_in_use.lambda ? std::string_view() : SENTINEL;
    emit(1, text, true);
    emit(2, text, true);
}

std::string proxy_log_line(std::string_view message, std::string_view level) {
    if (!format_in_use.json) return plain_line(message);
    if (lambda_records()) {
        std::string record;
        append_lambda_record(record, log_time(std::chrono::system_clock::now()),
                             level_named(level).value_or(log_level::error), format_in_use.min_level,
                             nullptr, message, json_line_bytes);
        return record;
    }
    std::string record;
    append_log_record(record, log_time(std::chrono::system_clock::now()), "proxy", nullptr, message,
                      json_line_bytes, 0, std::string(",\"level\":\"").append(level).append("\""));
    return record;
}

std::string dropped_log_text(std::uint64_t lines, std::uint64_t bytes, size_t bound,
                             std::string_view where) {
    return std::to_string(lines) + " line(s) (" + std::to_string(bytes) +
           " bytes) of the proxy's own log were dropped: its " + std::string(where) +
           " was not read for a while and OW_LOG_BUFFER_BYTES (" + std::to_string(bound) +
           ") were waiting; the action's output is kept whole";
}

void go_log(std::string_view message) {
    const std::string line = proxy_log_line(message, "info");
    if (!line.empty()) emit(2, line);  // empty: below AWS_LAMBDA_LOG_LEVEL
}

void write_stdout(std::string_view text) { emit(1, text); }
void write_stderr(std::string_view text) { emit(2, text); }

void start_log_writers(size_t backlog_bytes) {
    backlog_bound = std::max<size_t>(backlog_bytes, 1);
    // The writers' threads take no signal (ops/shutdown.cpp waits for them on its own thread).
    sigset_t all;
    sigset_t before;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &before);
    writers[1] = new fd_writer(1, backlog_bound);  // NOLINT: lives until the process ends
    writers[2] = new fd_writer(2, backlog_bound);  // NOLINT
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

size_t log_backlog_bound() { return backlog_bound != 0 ? backlog_bound : 4u << 20; }

void route_proxy_lines(int fd, log_injector* via) {
    std::lock_guard<std::mutex> guard(routes_lock);
    if (writers[fd] != nullptr) routes[fd].push_back(via);
}

void unroute_proxy_lines(int fd, log_injector* via) {
    std::lock_guard<std::mutex> guard(routes_lock);
    auto& list = routes[fd];
    list.erase(std::remove(list.begin(), list.end(), via), list.end());
}

log_route_scope::log_route_scope(log_injector* out, log_injector* err)
    : previous_{scoped_routes[1], scoped_routes[2]} {
    if (writers[1] != nullptr) scoped_routes[1] = out;
    if (writers[2] != nullptr) scoped_routes[2] = err;
}

log_route_scope::~log_route_scope() {
    scoped_routes[1] = previous_[0];
    scoped_routes[2] = previous_[1];
}

void write_log_waiting(int fd, std::string_view text, const std::atomic<bool>& abandon) {
    if (writers[fd] == nullptr) {
        write_fd(fd, text);
        return;
    }
    writers[fd]->put_waiting(text, abandon);
}

void count_dropped_log(std::uint64_t lines, std::uint64_t bytes) {
    pipe_dropped_lines.fetch_add(lines, std::memory_order_relaxed);
    pipe_dropped_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

bool flush_logs(std::chrono::milliseconds within) {
    const auto until = std::chrono::steady_clock::now() + within;
    for (int fd : {1, 2}) {
        for (;;) {  // the pipes' injected lines first: they end up in the writer
            {
                std::lock_guard<std::mutex> guard(routes_lock);
                if (std::all_of(routes[fd].begin(), routes[fd].end(),
                                [](log_injector* via) { return via->idle(); })) {
                    break;
                }
            }
            if (std::chrono::steady_clock::now() >= until) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    bool done = true;
    for (int fd : {1, 2}) {
        if (writers[fd] != nullptr) done = writers[fd]->wait_idle(until) && done;
    }
    return done;
}

log_backlog_stats log_backlog() {
    log_backlog_stats stats;
    stats.dropped_lines = pipe_dropped_lines.load(std::memory_order_relaxed);
    stats.dropped_bytes = pipe_dropped_bytes.load(std::memory_order_relaxed);
    for (int fd : {1, 2}) {
        if (writers[fd] != nullptr) writers[fd]->add_stats(stats);
    }
    return stats;
}

}  // namespace actionloop
