// answer_writer: see answer_writer.hpp.
#include "answer_writer.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

namespace actionloop {
namespace {

constexpr std::string_view SENTINEL = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX\n";
constexpr auto FAST_ACTIVATION = std::chrono::microseconds(100);
constexpr auto MAX_WAIT = std::chrono::microseconds(500);
constexpr size_t MAX_BATCH_BYTES = size_t{64} * 1024;
// The flusher's bound: a batch older than this is written (so at most about twice this).
constexpr auto FLUSH_AFTER = std::chrono::milliseconds(1);
// The flusher sleeps without a timeout once no batch has been held this long.
constexpr auto LINGER = std::chrono::milliseconds(20);
// When the loop holds the lock as a batch falls due.
constexpr auto RETRY_AFTER = std::chrono::microseconds(50);
constexpr size_t ERR_BUFFER_BYTES = size_t{64} * 1024;

// The writer whose batch a crash or exit() writes out (one serves the process).
std::atomic<answer_writer*> current_writer{nullptr};

bool write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

bool write_all(int fd, std::string_view text) { return write_all(fd, text.data(), text.size()); }

void flush_at_exit() { answer_writer::flush_held(); }

}  // namespace

answer_writer::answer_writer(int fd, bool pipelined, std::FILE* out, std::FILE* err, bool sentinels,
                             bool batch_logs)
    : fd_(fd),
      out_(out),
      err_(err),
      pipelined_(pipelined),
      sentinels_(pipelined && sentinels),
      batch_logs_(batch_logs) {
    if (!pipelined_) return;
    answer_writer* none = nullptr;
    current_writer.compare_exchange_strong(none, this);
    // Once per process: exit() writes what a batch holds.
    static const bool REGISTERED = std::atexit(flush_at_exit) == 0;
    (void)REGISTERED;
}

answer_writer::~answer_writer() {
    {
        std::lock_guard<std::mutex> guard(lock_);
        flush_locked();
        stopping_.store(true);
    }
    wake_.notify_all();
    if (flusher_.joinable()) flusher_.join();
    answer_writer* self = this;
    current_writer.compare_exchange_strong(self, nullptr);
}

bool answer_writer::ack(bool shutdown) {
    std::string line = "{\"ok\":true";
    if (pipelined_) line += ",\"pipeline\":true";
    if (shutdown) line += ",\"shutdown\":true";
    line += "}\n";
    return write_all(fd_, line);
}

bool answer_writer::ack_error(const std::string& error) {
    return write_all(fd_, nlohmann::json{{"ok", false}, {"error", error}}.dump(
                              -1, ' ', false, nlohmann::json::error_handler_t::replace) +
                              "\n");
}

bool answer_writer::answer(std::string& answer, bool more_buffered) {
    answer.push_back('\n');
    if (!pipelined_) {
        std::fflush(out_);
        std::fflush(err_);
        return write_all(fd_, answer);
    }
    const clock::time_point now = clock::now();
    std::lock_guard<std::mutex> guard(lock_);
    if (waiting_.empty()) oldest_waiting_ = now;
    const bool hold = more_buffered && now - started_ < FAST_ACTIVATION &&
                      now - oldest_waiting_ < MAX_WAIT &&
                      waiting_.size() + answer.size() < MAX_BATCH_BYTES;
    if (hold && sentinels_ && batch_logs_ && !err_buffered_) {
        // stderr keeps the batch's lines and sentinels until the batch is written (glibc's
        // setvbuf writes what the stream holds first, and takes the stream's lock).
        if (!err_buffer_) err_buffer_ = std::make_unique<char[]>(ERR_BUFFER_BYTES);
        err_buffered_ = std::setvbuf(err_, err_buffer_.get(), _IOFBF, ERR_BUFFER_BYTES) == 0;
    }
    if (sentinels_) {
        std::fwrite(SENTINEL.data(), 1, SENTINEL.size(), out_);
        std::fwrite(SENTINEL.data(), 1, SENTINEL.size(), err_);
    }
    waiting_.append(answer);
    if (!hold) return flush_locked();
    if (!batching_.load(std::memory_order_relaxed)) {
        batch_since_.store(oldest_waiting_.time_since_epoch().count(), std::memory_order_relaxed);
        batches_.fetch_add(1, std::memory_order_relaxed);
        batching_.store(true, std::memory_order_release);
        wake_flusher_locked();
    }
    return true;
}

bool answer_writer::flush() {
    std::lock_guard<std::mutex> guard(lock_);
    return flush_locked();
}

// Logs first (the sentinels are in them), then the answers.
bool answer_writer::flush_locked() {
    std::fflush(out_);
    std::fflush(err_);
    if (err_buffered_) {
        std::setvbuf(err_, nullptr, _IONBF, 0);
        err_buffered_ = false;
    }
    batching_.store(false, std::memory_order_relaxed);
    if (waiting_.empty()) return true;
    const bool ok = write_all(fd_, waiting_);
    waiting_.clear();
    return ok;
}

void answer_writer::flush_held() noexcept {
    answer_writer* writer = current_writer.load();
    if (writer == nullptr || !writer->lock_.try_lock()) return;
    // Best effort: the streams only when their locks are free (or already this thread's).
    for (std::FILE* stream : {writer->out_, writer->err_}) {
        if (::ftrylockfile(stream) == 0) {
            ::fflush_unlocked(stream);
            ::funlockfile(stream);
        }
    }
    if (!writer->waiting_.empty()) write_all(writer->fd_, writer->waiting_);
    writer->waiting_.clear();
    writer->lock_.unlock();
}

// The first batch starts the flusher (with every signal blocked: they stay the action's);
// a new batch wakes it when it sleeps without a timeout.
void answer_writer::wake_flusher_locked() {
    if (!flusher_.joinable()) {
        sigset_t all;
        sigset_t before;
        sigfillset(&all);
        ::pthread_sigmask(SIG_SETMASK, &all, &before);
        flusher_ = std::thread([this] { run_flusher(); });
        ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
        return;
    }
    if (flusher_idle_) wake_.notify_one();
}

// Sleeps until the batch is due (or a tick while batches keep coming), taking the lock only
// to write an overdue batch or to fall asleep on wake_.
void answer_writer::run_flusher() {
    clock::time_point last_batch = clock::now();
    std::uint64_t seen = batches_.load(std::memory_order_relaxed);
    while (!stopping_.load()) {
        const clock::time_point now = clock::now();
        // A batch begun since the last look (it may have ended already) counts as activity.
        if (const std::uint64_t begun = batches_.load(std::memory_order_relaxed); begun != seen) {
            seen = begun;
            last_batch = now;
        }
        if (batching_.load(std::memory_order_acquire)) {
            last_batch = now;
            const clock::time_point due =
                clock::time_point(clock::duration(batch_since_.load(std::memory_order_relaxed))) +
                FLUSH_AFTER;
            if (now < due) {
                std::this_thread::sleep_until(due);
                continue;
            }
            // The loop holds the lock only while it writes or holds an answer: then it is busy
            // and the batch is looked at again shortly (no wait on the lock, so neither side
            // enters the kernel for it).
            std::unique_lock<std::mutex> guard(lock_, std::try_to_lock);
            if (!guard.owns_lock()) {
                std::this_thread::sleep_for(RETRY_AFTER);
                continue;
            }
            // Still a batch this old (not one begun since)?
            if (batching_.load(std::memory_order_relaxed) && oldest_waiting_ + FLUSH_AFTER <= now) {
                flush_locked();
            }
        } else if (now - last_batch < LINGER) {
            std::this_thread::sleep_for(FLUSH_AFTER);  // a tick: the next batch needs no wake-up
        } else {
            std::unique_lock<std::mutex> guard(lock_);
            flusher_idle_ = true;
            wake_.wait(guard, [this] { return stopping_.load() || batching_.load(); });
            flusher_idle_ = false;
            last_batch = clock::now();
            seen = batches_.load(std::memory_order_relaxed);
        }
    }
}

}  // namespace actionloop
