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
#pragma once

#include <chrono>
#include <cstddef>
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

}  // namespace actionloop
