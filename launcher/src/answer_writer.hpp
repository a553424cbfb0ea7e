// answer_writer: the launcher's output side — the ack, the end-of-activation sentinels and
// the answers on fd 3, with as few writes as the protocol allows.
//
// Pipelined (the proxy offered it and the ack accepted it), each activation ends with the
// sentinel on stdout, then on stderr, then its answer on fd 3, in that order: the sentinels
// follow the activation's logs and precede its answer. Not pipelined, every answer is written
// at once and the proxy writes the sentinels (it sends the next request only after the answer).
//
// A batch. When the next request is already buffered (the proxy has sent it), the activation
// was fast (under 100 µs), the oldest answer waiting is younger than 500 µs and the batch is
// under 64 KiB, the answer waits for the next ones, so several go to fd 3 in one write; and
// (`batch_logs`: the action's iostreams go through stdio) so do the sentinels: they go into
// stdout's and stderr's stdio buffers behind the activation's own lines, and stderr, otherwise
// unbuffered, is buffered while the batch lasts. What the next activations write through stdio,
// iostreams or a logger on top of them lands behind them in the same buffers: every line stays
// between its own activation's sentinels, and a batch leaves in one write per stream. The
// batch ends (everything written: stdout, stderr, then the answers) at the first activation
// that is not held, at shutdown, or, whatever the activation running meanwhile does, within
// about 2 ms: a thread of ours (started at the first batch, asleep when there is none for
// 20 ms) bounds the wait, so a slow, hanging or killed activation never keeps an earlier one's
// answer or logs. A crash writes what is held before its report (best effort: the handler
// cannot wait for a lock), and so does exit(); a SIGKILL within those 2 ms loses it.
//
// What write(2) puts on fd 1 or 2 directly goes out at once: in a batch it may land before
// sentinels still held, so in the segment of an earlier activation of the same batch (never a
// later one); not pipelined, or at the first activation of a batch, it is exact. Without
// sentinels (Lambda mode, which has no OpenWhisk log markers) the answers are held the same way.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace actionloop {

class answer_writer {
public:
    /// Answers on `fd`; the sentinels into `out` and `err` (the process's stdout and stderr,
    /// except in tests) when pipelined and `sentinels`. `batch_logs`: the sentinels may wait in
    /// those buffers with the answers (only when nothing of the action's bypasses them).
    answer_writer(int fd, bool pipelined, std::FILE* out = stdout, std::FILE* err = stderr,
                  bool sentinels = true, bool batch_logs = true);
    ~answer_writer();
    answer_writer(const answer_writer&) = delete;
    answer_writer& operator=(const answer_writer&) = delete;

    /// The ack line on fd 3 (accepting the pipelining offer when pipelined; offering the
    /// shutdown line when `shutdown`).
    bool ack(bool shutdown = false);
    /// The ack of a failed start: {"ok":false,"error":`error`}.
    bool ack_error(const std::string& error);
    /// An activation starts (its duration decides whether its answer may wait).
    void started() { started_ = clock::now(); }
    /// An activation's answer (without '\n'; one is appended): the sentinels when pipelined
    /// (and not turned off), then the answer now or with the next ones. False when fd 3 is
    /// gone.
    bool answer(std::string& answer, bool more_buffered);
    /// Writes everything still waiting.
    bool flush();
    /// From the crash handler (or exit): writes what is held if no one holds the lock.
    static void flush_held() noexcept;

private:
    using clock = std::chrono::steady_clock;

    bool flush_locked();
    void wake_flusher_locked();
    void run_flusher();

    int fd_;
    std::FILE* out_;
    std::FILE* err_;
    bool pipelined_;
    bool sentinels_;
    bool batch_logs_;
    clock::time_point started_;

    std::mutex lock_;
    clock::time_point oldest_waiting_;  // when the batch began (its first answer held)
    std::string waiting_;               // answers held back, each with its '\n'
    bool err_buffered_ = false;         // stderr is buffered for the batch
    std::unique_ptr<char[]> err_buffer_;
    // A batch is held (answers, sentinels in the buffers) since this time (read by the
    // flusher without the lock; written with it).
    std::atomic<bool> batching_{false};
    std::atomic<clock::rep> batch_since_{0};
    std::atomic<std::uint64_t> batches_{0};  // begun so far: the flusher's sign of activity

    // The bound on a batch's wait: it sleeps on its own (no lock) while batches come, and on
    // `wake_` once none has for a while.
    std::thread flusher_;
    std::condition_variable wake_;
    bool flusher_idle_ = false;  // asleep on wake_: a new batch must wake it
    std::atomic<bool> stopping_{false};
};

}  // namespace actionloop
