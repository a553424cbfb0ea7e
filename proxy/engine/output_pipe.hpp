// The action's stdout and stderr as pipes the proxy reads and forwards to its own fd 1 and 2.
//
// Plain mode (the default, OW_LOG_FORMAT unset): both are forwarded byte for byte. The proxy
// keeps the last lines of stderr, so an action that fails to start can be told why in the
// /init answer, and it knows whether the last line forwarded ended, so its own sentinels start
// a line of their own. With more than one worker (OW_WORKERS > 1: several pipes feed the same
// fd) a pipe forwards whole lines only (whole_lines.hpp): the open line waits for its '\n' or
// end_line(), so lines of different workers never meet mid-line; one past OW_LOG_LINE_BYTES
// goes on in ended pieces, and the proxy says so in a line of its own. One worker keeps the
// bytes as they are (a partial line is seen at once, a long line is never broken: as upstream).
//
// JSON mode (OW_LOG_FORMAT=json): every line becomes one JSON record (log_record.hpp) tagged
// with the activation it belongs to. Which one that is comes from log_attribution: the engine
// registers each activation as its request is written, in order; a line belongs to the oldest
// activation not yet ended on that stream, and an activation ends on a stream at its sentinel
// line there (an action that writes its own: our launcher when pipelining) or at the proxy's
// sentinel for it. Sentinels are forwarded as they are, so OpenWhisk's log collector still
// finds each activation's end.
//
// Lambda mode (log_record.hpp: log_format): the records are Lambda's (AWS_LAMBDA_LOG_FORMAT=
// JSON), each at its level, none below AWS_LAMBDA_LOG_LEVEL, and no sentinel is ever written:
// the proxy's sentinels are marks without text that end the activation on each stream where
// they land, and a sentinel line from the action is dropped and ends nothing.
//
// A thread per pipe forwards what comes; the event loop never reads or writes here. The
// proxy's own lines for the same fd (its sentinels, its diagnostics: logging.hpp) are
// injected at the point the pipe has reached when they are written (what it holds then, by
// FIONREAD), so each comes after what the action wrote before it: an activation's lines stay
// before its sentinels however late they are forwarded. The thread hands what it forwards to
// the fd's writer and waits while that is full (its proxy's stdout is not read): the pipe then
// fills and the action waits on its own writes; nothing of the action's is dropped. The
// proxy's lines waiting in a pipe are bounded by OW_LOG_BUFFER_BYTES (past it dropped and
// counted). One pipe serves every process the executor starts.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "engine/process.hpp"
#include "engine/whole_lines.hpp"
#include "log_record.hpp"
#include "logging.hpp"

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
    /// The activation `id` has ended: the proxy's sentinels for it follow, and end it on each
    /// stream where they land (after its lines), with every older one still open there.
    void end(std::uint64_t id);
    /// The activation the proxy's next sentinel on `s` ends (0: the oldest open), taken once.
    std::uint64_t take_ending(stream s);
    /// With lock() held: the proxy's sentinel on `s` for `id` (take_ending) has landed.
    void proxy_sentinel(stream s, std::uint64_t id);
    std::mutex& lock() { return lock_; }

private:
    struct entry {
        std::uint64_t id;
        activation_tags tags;
        bool ended[2] = {false, false};
    };
    void drop_ended_front();
    std::mutex lock_;  // taken by the pipes around each record and by the engine
    std::deque<entry> entries_;
    std::uint64_t ending_[2] = {0, 0};  // end()'s id, for the next proxy sentinel per stream
};

class output_pipe final : public log_injector {
public:
    /// `target`: the proxy's fd the lines go to (1 or 2). `attribution`: null in plain mode.
    /// The proxy's own lines for `target` go through this pipe while it lives. `whole`: plain
    /// mode forwards whole lines only (more than one worker).
    output_pipe(int target, std::shared_ptr<log_attribution> attribution, size_t max_line_bytes,
                bool whole = false);  // throws std::system_error when no pipe is left
    ~output_pipe() override;
    output_pipe(const output_pipe&) = delete;
    output_pipe& operator=(const output_pipe&) = delete;

    /// The end the action gets as its fd 1 or 2.
    int write_fd() const { return write_end_.get(); }
    /// Ends the last line forwarded when it is unterminated (plain: a '\n'; JSON: the partial
    /// line as a record of its own), once what the pipe holds now is forwarded. Never waits.
    void end_line();
    /// Forgets the tail kept so far: what the pipe holds now is not the next start's.
    void mark();
    /// The last lines since mark(), at most `lines` lines and `bytes` bytes, once what the
    /// pipe holds now is read (waits for that up to 1 s: on a worker, never the loop).
    std::string tail(size_t lines = 20, size_t bytes = 4096);

    // log_injector: never waits.
    void inject(std::string_view text, bool sentinel,
                const std::function<void(std::string_view)>& direct) override;
    bool idle() override;

private:
    /// Something to do at a point of the pipe's bytes: the proxy's text, a sentinel, the end
    /// of the open line.
    struct marker {
        std::uint64_t at;  // the pipe's byte offset it follows
        std::string text;
        bool sentinel = false;
        bool end_line = false;
        std::uint64_t ending = 0;  // JSON mode: the activation a sentinel ends (0: oldest)
    };
    std::uint64_t position_locked() const;
    void post(marker m);
    void run();
    bool pump(bool closing);
    void apply(const marker& m, std::string& out);
    void forward(const char* data, size_t size, std::string& out);
    void emit_json(const char* data, size_t size, std::string& out);
    void record(std::string_view line, std::string& out);
    void end_open_line(std::string& out);
    void say_broken(std::string& out);
    void keep_tail_locked(const char* data, size_t size, std::uint64_t from);
    void wake();

    const int target_;
    const std::shared_ptr<log_attribution> attribution_;
    const log_attribution::stream stream_;
    const size_t max_line_bytes_;
    const size_t max_injected_bytes_;
    unique_fd read_end_;
    unique_fd write_end_;
    unique_fd wake_;  // eventfd: a marker was posted, or the destructor stops the thread

    // Never held while writing: the loop only ever waits for it briefly (a chunk's conversion).
    // The pipe's text state below (line_open_, partial_) is under it too.
    std::mutex lock_;
    std::condition_variable progress_;  // the thread read more, or applied markers
    std::uint64_t consumed_ = 0;        // bytes read from the pipe so far
    std::deque<marker> markers_;        // in order of `at`
    size_t injected_bytes_ = 0;         // text in markers_
    std::uint64_t dropped_lines_ = 0;   // proxy lines not injected (full), not said yet
    std::uint64_t dropped_bytes_ = 0;
    bool handing_ = false;         // the thread holds markers or bytes not handed on yet
    std::string tail_;             // the last bytes since mark() (bounded)
    std::uint64_t tail_from_ = 0;  // mark()'s offset: earlier bytes are not the tail
    std::atomic<bool> closing_{false};

    // Under lock_.
    bool line_open_ = false;            // the last byte forwarded was not '\n'
    std::string partial_;               // JSON mode: the line read so far (bounded)
    std::optional<whole_lines> whole_;  // plain mode with more than one worker
    size_t partial_cut_ = 0;            // JSON mode: bytes of the current line beyond the bound
    std::thread thread_;
};

}  // namespace actionloop
