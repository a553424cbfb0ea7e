// The executor: one long-lived action process and its pipes (docs/protocol.md, "The engine").
// stdin carries one request line per activation, fd 3 brings back one answer line (read by
// the executor only for the ack; the engine reads the answers);
// stdout and stderr are pipes the proxy forwards to its own (output_pipe.hpp), so the proxy's
// own lines fall in order with the action's and no log write ever blocks the event loop.
// Starting (spawn, the ack) blocks and runs on a worker; the activations themselves are
// driven by the activation engine (engine.hpp) on the event loop, through the non-blocking
// accessors below.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/framing.hpp"
#include "engine/process.hpp"
#include <memory>

#include "engine/output_pipe.hpp"

namespace actionloop {

/// The line an action whose ack offered {"shutdown":true} gets once the drain on SIGTERM has
/// finished its activations: this prefix, then the milliseconds left (the launcher's
/// loop.hpp has the same). No activation's line starts with its first byte (engine.cpp).
inline constexpr std::string_view SHUTDOWN_LINE_PREFIX = "\x1e"
                                                         "actionloop-shutdown ";

struct executor_options {
    std::string command;           // /abs/action/N/bin/exec
    std::string cwd;               // action/N/bin: files shipped with the action
    std::vector<std::string> env;  // "NAME=value"
    bool wait_for_ack = false;
    int ack_timeout_ms = 60000;
    size_t max_answer_bytes = 50u << 20;
    /// OW_LOG_FORMAT=json: stdout and stderr become records tagged with their activation
    /// (output_pipe.hpp); null: plain, both forwarded as they are.
    std::shared_ptr<log_attribution> log_tags;
    size_t max_log_line_bytes = 16384;  // OW_LOG_LINE_BYTES (JSON mode; plain: whole_log_lines)
    /// Plain mode with more than one worker (OW_WORKERS > 1): stdout and stderr are forwarded
    /// in whole lines only (output_pipe.hpp), so workers' lines never meet mid-line.
    bool whole_log_lines = false;
};

/// Start failures, with upstream's texts (the caller prefixes "cannot start action: ").
struct start_error : std::runtime_error {
    using std::runtime_error::runtime_error;
    start_error(const std::string& what, std::string tail)
        : std::runtime_error(what), stderr_tail(std::move(tail)) {}
    std::string stderr_tail;  // the action's last stderr lines, when it had started
};

class executor {
public:
    using clock = std::chrono::steady_clock;

    enum class outcome {
        answered,   // `line` holds one complete line, '\n' included
        exited,     // the process died before answering
        deadline,   // no answer in time: the process was stopped
        too_large,  // the answer passed the cap: the process was stopped
    };

    explicit executor(executor_options options)
        : options_(std::move(options)),
          stderr_(2, options_.log_tags, options_.max_log_line_bytes, options_.whole_log_lines),
          stdout_(std::make_unique<output_pipe>(1, options_.log_tags, options_.max_log_line_bytes,
                                                options_.whole_log_lines)),
          ack_(options_.max_answer_bytes) {}
    ~executor() { child_.kill(); }  // before the stderr pipe forwards its last bytes

    /// Starts the process; waits for the ack, or 5 ms for an early exit. Throws start_error.
    void start();
    /// The one place a running action is started again: stops what is left of it, logs
    /// `why` ("…; starting it again"), starts it. Throws start_error.
    void restart(const std::string& why);
    /// True when the process is gone (or was stopped); reaps it.
    bool exited();

    /// True when the action's ack said {"pipeline": true}.
    bool pipelined() const { return pipelined_; }
    /// True when the action's ack said {"shutdown": true}: it takes the shutdown line.
    bool shutdown_offered() const { return shutdown_offered_; }
    /// Writes the shutdown line (SHUTDOWN_LINE_PREFIX, `time_left` in ms, '\n') to an action
    /// that offered it, with nothing in flight: it runs its on_shutdown and exits. Returns a
    /// duplicate of the process's pidfd (readable once it has exited; the caller closes it),
    /// or -1 when the action did not offer it or the line could not be written.
    int send_shutdown(std::chrono::milliseconds time_left);
    /// Bytes the action's stdin pipe holds (raised to 1 MiB where the system allows).
    size_t stdin_capacity() const { return stdin_capacity_; }

    // The running process's pipes, for the activation engine (engine.hpp), which drives them
    // from its event loop; all non-blocking.
    int stdin_fd() const { return stdin_.get(); }
    int output_fd() const { return fd3_.get(); }
    /// Readable once the process has exited (its pidfd).
    int exit_fd() const { return child_.exit_fd(); }
    /// The cap on one answer line (OW_MAX_ANSWER_BYTES).
    size_t max_answer_bytes() const { return options_.max_answer_bytes; }
    /// Bytes of the last request the action has not read from its stdin yet (FIONREAD).
    size_t unread_request_bytes() const;

    /// SIGKILL to the process group.
    void stop() { child_.kill(); }
    /// The last lines the current process wrote to stderr (since its start; output_pipe::tail:
    /// waits up to 1 s for the pipe to be read, so never on the loop).
    std::string stderr_tail() { return stderr_.tail(); }
    /// Forwards what the action wrote to its stdout (JSON mode) and stderr so far and ends
    /// their unterminated last lines: before the proxy writes sentinels or its own lines
    /// about an activation.
    void end_output_lines() {
        if (stdout_) stdout_->end_line();
        stderr_.end_line();
    }
    /// While it lives, the proxy's own lines on this thread (the sentinels, a crash, a missed
    /// deadline) go through this process's stdout and stderr pipes (logging.hpp), after what
    /// it wrote: with several workers, into the streams of the worker they are about.
    log_route_scope route_logs() { return log_route_scope(stdout_.get(), &stderr_); }
    /// JSON mode's attribution of log lines; null in plain mode.
    const std::shared_ptr<log_attribution>& log_tags() const { return options_.log_tags; }

    std::string describe_exit() const { return child_.describe(); }
    /// "killed by signal 11, SIGSEGV" when the process died of a signal we did not send.
    std::string crash_signal() const { return child_.crash_signal(); }
    pid_t pid() const { return child_.pid(); }

private:
    void wait_for_ack();
    outcome read_line(clock::time_point deadline, std::string& line);
    bool fill_from_fd3();

    [[noreturn]] void start_failed(const std::string& why);

    executor_options options_;
    output_pipe stderr_;  // the action's fd 2, for every process started (output_pipe.hpp)
    std::unique_ptr<output_pipe> stdout_;  // its fd 1 (output_pipe.hpp)
    child_process child_;
    unique_fd stdin_;
    unique_fd fd3_;
    line_buffer ack_;  // fd 3 during the start: the ack (what follows it is dropped)
    bool fd3_eof_ = false;
    bool pipelined_ = false;
    bool shutdown_offered_ = false;
    size_t stdin_capacity_ = 65536;
};

}  // namespace actionloop
