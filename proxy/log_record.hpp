// OW_LOG_FORMAT=json, the pure part: which activation a log line belongs to (its tags, read
// from the /run request line) and one line of the action's output (or of the proxy's own) as
// one JSON object:
//   {"time":"2026-12-02T10:22:22.123Z","stream":"stdout","activationId":"…",
//    "transactionId":"…","action":"/ns/name","message":"…"}
// The tags are left out when no activation is being served. A line that is itself one JSON
// object goes in as that object ("message":{…}), so its numbers stay numbers; any other line
// as a string. A message longer than the cap is cut at a UTF-8 boundary and the record says
// so: "truncated": <bytes cut>. No I/O: engine/output_pipe.cpp writes the action's records,
// logging.cpp the proxy's own.
//
// In Lambda mode with AWS_LAMBDA_LOG_FORMAT=JSON the records take the shape of the JSON logs of
// Lambda's managed runtimes (Node.js's: timestamp, level, requestId, message) instead:
//   {"timestamp":"2026-12-04T10:22:22.123Z","level":"INFO","requestId":"…","message":"…"}
// with a level each (Lambda's six names), below AWS_LAMBDA_LOG_LEVEL not written at all.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace actionloop {

/// The activation a line belongs to: the /run request's activation_id, transaction_id and
/// action_name fields (empty when absent).
struct activation_tags {
    std::string activation_id;
    std::string transaction_id;
    std::string action;
};

/// The tags of a /run request line (a top-level skim: no parse of the value).
activation_tags tags_of_request(std::string_view request_line);

/// "2026-12-02T10:22:22.123Z" (UTC, milliseconds).
std::string log_time(std::chrono::system_clock::time_point when);

/// Appends one record for `message` (without its '\n'), then '\n', to `out`. `tags` may be
/// null (no activation). At most `max_message_bytes` of the message are kept; `lost_bytes`
/// of it were cut before (they count in "truncated"). `extra` is raw JSON members appended
/// as they are ("" or ",\"level\":\"warn\"").
void append_log_record(std::string& out, std::string_view time, std::string_view stream,
                       const activation_tags* tags, std::string_view message,
                       size_t max_message_bytes, size_t lost_bytes = 0,
                       std::string_view extra = {});

// --- Lambda's JSON logs ---

/// Lambda's log levels, least severe first (AWS_LAMBDA_LOG_LEVEL, a record's "level").
enum class log_level { trace, debug, info, warn, error, fatal };

/// "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL".
std::string_view level_name(log_level level);

/// The level a name gives: Lambda's six in any case, and the other spellings loggers write
/// for two of them ("warning": WARN, "critical": FATAL, as spdlog and Python name them).
std::optional<log_level> level_named(std::string_view name);

/// How the proxy writes log lines, from the settings: plain, OpenWhisk's JSON records
/// (OW_LOG_FORMAT=json), or in Lambda mode Lambda's (AWS_LAMBDA_LOG_FORMAT=JSON), which
/// AWS_LAMBDA_LOG_LEVEL filters. True when the lines are JSON records of either shape.
struct log_format {
    bool json = false;    // every line one JSON record (else the lines as they are)
    bool lambda = false;  // Lambda mode: Lambda's record shape (with json), no sentinels
    // The end-of-activation sentinels are written (by the proxy, and by a pipelining
    // launcher): false in single-entrypoint mode with plain lines, where no platform reads
    // them (Knative, the dedicated image) and no record needs them (settings.cpp).
    bool sentinels = true;
    log_level min_level = log_level::trace;  // Lambda's JSON records below it are not written
    std::string unknown_level;  // AWS_LAMBDA_LOG_LEVEL when it names no level (then: trace)

    explicit operator bool() const { return json; }
};

/// Lambda mode's format from AWS_LAMBDA_LOG_FORMAT and AWS_LAMBDA_LOG_LEVEL as the managed
/// runtimes read them: JSON in any case is JSON, anything else (Text, unset) plain lines; the
/// level in any case, and one that names no level filters nothing (as Node.js's runtime does)
/// and is kept in unknown_level so the proxy can say so. The level filters JSON records only,
/// as Lambda's log-level filtering needs the JSON format.
log_format lambda_log_format(std::string_view format, std::string_view level);

/// The level an action's line carries: the top-level "level" member of a line that is one
/// JSON object, when it is a string that level_named() knows.
std::optional<log_level> level_of_line(std::string_view line);

/// Appends one Lambda record for `message` (without its '\n'), then '\n', to `out`, unless
/// its level is below `min_level` (then `out` is left as it is and the answer is false). Its
/// level is the line's own (level_of_line) or else `level`; "requestId" is the activation's
/// id (left out with no activation); the message, the cut and "truncated" as
/// append_log_record's.
bool append_lambda_record(std::string& out, std::string_view time, log_level level,
                          log_level min_level, const activation_tags* tags,
                          std::string_view message, size_t max_message_bytes,
                          size_t lost_bytes = 0);

}  // namespace actionloop
