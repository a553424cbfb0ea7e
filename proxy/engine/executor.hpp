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
    /// Sends one activation (`body` as one line: its newlines removed, one appended) and
    /// waits for its answer line.
    outcome interact(std::string_view body, clock::time_point deadline, std::string& line);

    // Pipelined use (see pipeline.hpp), for an action whose ack offered it: requests are
    // sent without waiting for the answers before them; answers are read in order.
    /// True when the action's ack said {"pipeline": true}.
    bool pipelined() const { return pipelined_; }
    /// Bytes the action's stdin pipe holds (raised to 1 MiB where the system allows).
    size_t stdin_capacity() const { return stdin_capacity_; }
    /// Writes one request line; on failure the caller stops the process.
    write_result send(std::string_view body, clock::time_point deadline);
    /// Waits (until `deadline`) for at least one answer line and appends every complete one
    /// to `lines`: `answered`, or why none came (`exited` once the buffered lines are out).
    outcome read_answers(clock::time_point deadline, std::vector<std::string>& lines);
    /// SIGKILL to the process group.
    void stop() { child_.kill(); }

    std::string describe_exit() const { return child_.describe(); }
    pid_t pid() const { return child_.pid(); }

private:
    void wait_for_ack();
    void discard_stale_output();
    size_t drain_fd3();
    /// How waiting for one answer line ended: an outcome, or output that came before the
    /// action read its request (stale: an earlier activation's, see executor.cpp).
    enum class line_result { answered, exited, deadline, too_large, stale };
    line_result read_line(clock::time_point deadline, std::string& line, bool check_stale);
    static outcome outcome_of(line_result result);
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
