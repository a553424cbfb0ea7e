// The action's stdout and stderr as pipes the proxy reads and forwards to its own fd 1 and 2.
//
// Plain mode (the default, OW_LOG_FORMAT unset): only stderr is a pipe, forwarded byte for
// byte; the action's stdout is the proxy's own. The proxy keeps the last lines of stderr, so
// an action that fails to start can be told why in the /init answer, and it knows whether the
// last line forwarded ended, so its own sentinels start a line of their own.
//
// JSON mode (OW_LOG_FORMAT=json): both are pipes, and every line becomes one JSON record
// (log_record.hpp) tagged with the activation it belongs to. Which one that is comes from
// log_attribution: the engine registers each activation as its request is written, in order;
// a line belongs to the oldest activation not yet ended on that stream, and an activation
// ends on a stream at its sentinel line there (an action that writes its own: our launcher
// when pipelining) or when the proxy ends it (log_attribution::end, before the proxy writes
// the sentinels). Sentinels are forwarded as they are, so OpenWhisk's log collector still
// finds each activation's end.
//
// A thread forwards what comes (the action never blocks on a full pipe, during its start or
// later); drain() forwards what the pipe holds now, at once, on the caller's thread: the
// proxy calls it before it writes sentinels or its own lines about an activation, so the
// activation's lines come first. One pipe serves every process the executor starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/process.hpp"
#include "log_record.hpp"

namespace actionloop {

/// Which activation a line on stdout or stderr belongs to (JSON mode), shared by the two
/// pipes and the engine. Thread-safe.
class log_attribution {
public:
    enum stream { OUT = 0, ERR = 1 };

    /// The activation `id` was written to the action (in order).
    void written(std::uint64_t id, activation_tags tags);
    /// The activation `id` goes back to waiting (it never started): forgotten until written
    /// again.
    void forget(std::uint64_t id);
    /// With lock() held: the tags of the activation a line on `s` belongs to now; null when
    /// none is running (valid while the lock is held).
    const activation_tags* current(stream s) const;
    /// With lock() held: a sentinel line on `s`: the current activation has ended there.
    void sentinel(stream s);
    /// The activation `id` has ended on both streams (the proxy writes its sentinels).
    void end(std::uint64_t id);
    std::mutex& lock() { return lock_; }

private:
    struct entry {
        std::uint64_t id;
        activation_tags tags;
        bool ended[2] = {false, false};
    };
    void drop_ended_front();
    std::mutex lock_;  // taken by the pipes around forward_locked() and by the engine
    std::deque<entry> entries_;
};

class output_pipe {
public:
    /// `target`: the proxy's fd the lines go to (1 or 2). `attribution`: null in plain mode.
    output_pipe(int target, std::shared_ptr<log_attribution> attribution,
                size_t max_line_bytes);  // throws std::system_error when no pipe is left
    ~output_pipe();
    output_pipe(const output_pipe&) = delete;
    output_pipe& operator=(const output_pipe&) = delete;

    /// The end the action gets as its fd 1 or 2.
    int write_fd() const { return write_end_.get(); }
    /// Forwards what the pipe holds now.
    void drain();
    /// drain(), then ends the last line forwarded when it is unterminated (plain: a '\n';
    /// JSON: the partial line as a record of its own).
    void end_line();
    /// Forgets the tail kept so far (a new start begins).
    void mark();
    /// drain(), then the last lines since mark(): at most `lines` lines and `bytes` bytes.
    std::string tail(size_t lines = 20, size_t bytes = 4096);

private:
    void forward_locked();
    void emit_json_locked(const char* data, size_t size);
    void record_locked(std::string_view line);
    void end_line_locked();
    void run();

    const int target_;
    const std::shared_ptr<log_attribution> attribution_;
    const log_attribution::stream stream_;
    const size_t max_line_bytes_;
    unique_fd read_end_;
    unique_fd write_end_;
    unique_fd wake_;  // eventfd: the destructor stops the thread
    std::mutex lock_;
    std::string tail_;        // the last bytes since mark() (bounded)
    bool line_open_ = false;  // the last byte forwarded was not '\n'
    std::string partial_;     // JSON mode: the line read so far (bounded)
    size_t partial_cut_ = 0;  // JSON mode: bytes of the current line beyond the bound
    std::string records_;     // JSON mode: records to write (reused)
    std::thread thread_;
};

}  // namespace actionloop
