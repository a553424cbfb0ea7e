// The proxy's own output: spdlog diagnostics on stderr (silent by default), the
// end-of-activation sentinels, and the few upstream messages the tests expect verbatim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace actionloop {

/// Stderr logger; level warn, or debug with -debug; SPDLOG_LEVEL overrides both. `json`
/// (OW_LOG_FORMAT=json): each line one JSON object with "stream":"proxy" and its "level";
/// go_log() lines too.
void setup_logging(bool debug, bool json = false, size_t max_line_bytes = 16384);

/// XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX to stdout, then to stderr.
void write_sentinels();

/// A line on stderr in Go's log format: "YYYY/MM/DD HH:MM:SS <message>".
void go_log(std::string_view message);

/// Raw text to stdout / stderr, unbuffered.
void write_stdout(std::string_view text);
void write_stderr(std::string_view text);

/// The proxy's own log lines held or lost while its stdout/stderr is not read (/metrics).
struct log_backlog_stats {
    std::uint64_t dropped_lines = 0;
    std::uint64_t dropped_bytes = 0;
    std::uint64_t backlog_bytes = 0;
};
log_backlog_stats log_backlog();

}  // namespace actionloop
