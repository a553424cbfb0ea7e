// The executor: one long-lived action process and its pipes (docs/protocol.md, "The engine").
// stdin carries one request line per activation, fd 3 brings back one answer line;
// stdout and stderr are the proxy's own, inherited, so action logs cost the proxy nothing.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "framing.hpp"
#include "process.hpp"

namespace actionloop {

struct executor_options {
    std::string command;           // /abs/action/N/bin/exec
    std::string cwd;               // action/N/bin: files shipped with the action
    std::vector<std::string> env;  // "NAME=value"
    bool wait_for_ack = false;
    int ack_timeout_ms = 60000;
    size_t max_answer_bytes = 50u << 20;
};

/// Start failures, with upstream's texts (the caller prefixes "cannot start action: ").
struct start_error : std::runtime_error {
    using std::runtime_error::runtime_error;
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
        : options_(std::move(options)), answer_(options_.max_answer_bytes) {}

    /// Starts the process; waits for the ack, or 5 ms for an early exit. Throws start_error.
    void start();
    /// The one place a running action is started again: stops what is left of it, logs
    /// `why` ("…; starting it again"), starts it. Throws start_error.
    void restart(const std::string& why);
    /// True when the process is gone (or was stopped); reaps it.
    bool exited();

    /// How waiting for answer lines ended: an outcome, or (with `check_stale`) output that
    /// came before the action read its request (stale: an earlier activation's).
    enum class line_result { answered, exited, deadline, too_large, stale };
    static outcome outcome_of(line_result result);

    /// True when the action's ack said {"pipeline": true}.
    bool pipelined() const { return pipelined_; }
    /// Bytes the action's stdin pipe holds (raised to 1 MiB where the system allows).
    size_t stdin_capacity() const { return stdin_capacity_; }
    /// Drops what fd 3 holds before a request is written (one request at a time).
    void discard_stale_output();
    /// Writes one request line (`body` as one line: its newlines removed, one appended);
    /// on failure the caller stops the process.
    write_result send(std::string_view body, clock::time_point deadline);
    /// Waits (until `deadline`) for at least one answer line and appends it to `lines`.
    /// A pipelining action: every complete line buffered (`exited` once they are out).
    /// Any other: exactly one, what followed it in the same read discarded; with
    /// `check_stale`, `stale` when fd 3 spoke while the request was still unread.
    line_result read_answers(clock::time_point deadline, std::vector<std::string>& lines,
                             bool check_stale);
    /// SIGKILL to the process group.
    void stop() { child_.kill(); }

    std::string describe_exit() const { return child_.describe(); }
    pid_t pid() const { return child_.pid(); }

private:
    void wait_for_ack();
    size_t drain_fd3();
    line_result read_line(clock::time_point deadline, std::string& line, bool check_stale);
    bool fill_from_fd3();

    executor_options options_;
    child_process child_;
    unique_fd stdin_;
    unique_fd fd3_;
    line_buffer answer_;
    bool fd3_eof_ = false;
    bool pipelined_ = false;
    size_t stdin_capacity_ = 65536;
    std::string framed_;  // a body with newlines, framed (reused)
};

}  // namespace actionloop
