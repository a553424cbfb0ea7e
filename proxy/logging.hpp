// The proxy's own output: spdlog diagnostics on stderr (silent by default), the
// end-of-activation sentinels, and the few upstream messages the tests expect verbatim.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "log_record.hpp"

namespace actionloop {

/// Stderr logger; level warn, or debug with -debug; SPDLOG_LEVEL overrides both. `format`
/// (settings: json_logs): with OW_LOG_FORMAT=json each line one JSON object with
/// "stream":"proxy" and its "level"; in Lambda mode with AWS_LAMBDA_LOG_FORMAT=JSON each line
/// Lambda's record at its level (warn: WARN, critical: FATAL), none below AWS_LAMBDA_LOG_LEVEL
/// (it raises the logger's level, never lowers it), and an AWS_LAMBDA_LOG_LEVEL that names no
/// level said once in a WARN record. go_log() lines too. Once, before any thread logs.
void setup_logging(bool debug, const log_format& format = {}, size_t max_line_bytes = 16384);

/// The format setup_logging got (plain before): the action's lines follow it too
/// (engine/output_pipe.cpp).
const log_format& log_format_in_use();

/// While one lives, the proxy's own JSON records written on this thread (spdlog's) name the
/// activation of `request_line` (a /run request: its activationId, transactionId and action),
/// so a search by activation finds the proxy's verdict on it (a crash, a timeout, an oversized
/// answer). The line is read only when a record is written; it must outlive the scope.
class activation_log_scope {
public:
    explicit activation_log_scope(const std::string& request_line);
    ~activation_log_scope();
    activation_log_scope(const activation_log_scope&) = delete;
    activation_log_scope& operator=(const activation_log_scope&) = delete;

private:
    const std::string* previous_;
};

/// XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX to stdout, then to stderr. In Lambda mode no text:
/// only the marks that end the activation's lines there (its open line ended, its JSON
/// records' attribution moved on: engine/output_pipe.hpp), as Lambda's logs have no sentinels.
void write_sentinels();

/// A line on stderr in Go's log format: "YYYY/MM/DD HH:MM:SS <message>".
void go_log(std::string_view message);

/// One line of the proxy's own as go_log() writes it (plain: Go's format; JSON: a record with
/// `level`: spdlog's names, "info", "warn", "error"), '\n' included; "" when Lambda's
/// AWS_LAMBDA_LOG_LEVEL leaves it out.
std::string proxy_log_line(std::string_view message, std::string_view level = "error");

/// "N line(s) (M bytes) of the proxy's own log were dropped: its <where> was not read…".
std::string dropped_log_text(std::uint64_t lines, std::uint64_t bytes, size_t bound,
                             std::string_view where);

/// Raw text to stdout / stderr: at once before start_log_writers (the offline compile's zip),
/// through the writers after it.
void write_stdout(std::string_view text);
void write_stderr(std::string_view text);

// --- Never blocking the event loop on a log write ---
//
// In serve mode (start_log_writers) nothing the proxy writes to its fd 1 and 2 waits for them:
// the proxy's own lines (spdlog, go_log, the sentinels) go into a bounded backlog per fd that
// a writer thread drains, so a stalled log reader (a full pipe to a log driver) never stops
// the loop. While an action's output pipe feeds the fd (engine/output_pipe.hpp), the proxy's
// lines go through that pipe instead, at the point its output has reached, so each lands
// after what the action wrote before it (the sentinels after the activation's lines); with
// several workers, through the pipe of the worker the line is about (log_route_scope).
// The action's own output is never dropped: its pipe's thread waits for room (the action then
// waits on its full pipe, the proxy does not). The proxy's own lines past OW_LOG_BUFFER_BYTES
// are dropped, counted (log_backlog(), /metrics), and said in a line of their own once there
// is room again.

/// Starts the writers of fd 1 and 2: from now on the writes above never block their caller.
/// `backlog_bytes`: OW_LOG_BUFFER_BYTES. Once, before the server starts.
void start_log_writers(size_t backlog_bytes);

/// OW_LOG_BUFFER_BYTES as start_log_writers got it (4 MiB before).
size_t log_backlog_bound();

/// Takes the proxy's own lines for one fd into the ordered stream of an action's output.
class log_injector {
public:
    virtual ~log_injector() = default;
    /// Never blocks. `sentinel`: an end-of-activation sentinel (ends the activation there).
    /// `direct`: the fd's writer, for text that may go there at once when nothing of the pipe
    /// is waiting before it.
    virtual void inject(std::string_view text, bool sentinel,
                        const std::function<void(std::string_view)>& direct) = 0;
    /// True when everything injected so far has been handed to the fd's writer.
    virtual bool idle() = 0;
};

/// The proxy's lines for `fd` (1 or 2) go through `via` from now on (with several pipes, one
/// per worker, the newest registered still here takes the lines no scope routes).
void route_proxy_lines(int fd, log_injector* via);
/// ... no longer through `via`.
void unroute_proxy_lines(int fd, log_injector* via);

/// While one lives, the proxy's own lines written on this thread (the sentinels, spdlog's,
/// go_log's) go through `out` (fd 1) and `err` (fd 2), one worker's pipes, instead of the
/// fd's newest pipe: an activation's sentinels and what the proxy says about it (a crash, a
/// missed deadline) land in the streams of the worker that ran it, after its lines. Null: that
/// fd as usual. Both must outlive the scope.
class log_route_scope {
public:
    log_route_scope(log_injector* out, log_injector* err);
    ~log_route_scope();
    log_route_scope(const log_route_scope&) = delete;
    log_route_scope& operator=(const log_route_scope&) = delete;

private:
    log_injector* previous_[2];
};

/// For output pipes' threads: `text` to `fd`, in order, waiting while the backlog is full
/// (the action waits behind this thread) unless `abandon` is set (the pipe is closing: the
/// rest goes in over the bound, never lost). Before start_log_writers: a plain write.
void write_log_waiting(int fd, std::string_view text, const std::atomic<bool>& abandon);

/// Counts proxy lines a pipe had to drop (its injected backlog was full).
void count_dropped_log(std::uint64_t lines, std::uint64_t bytes);

/// Waits (at most `within`) until every pipe has handed over what was injected and the
/// writers have written everything; false when time ran out. For the exit.
bool flush_logs(std::chrono::milliseconds within);

/// The proxy's own log lines held or lost while its stdout/stderr is not read (/metrics).
struct log_backlog_stats {
    std::uint64_t dropped_lines = 0;
    std::uint64_t dropped_bytes = 0;
    std::uint64_t backlog_bytes = 0;
};
log_backlog_stats log_backlog();

}  // namespace actionloop
