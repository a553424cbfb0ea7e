// log_text.hpp — the one writer of the alert pipeline's `key=value` log fields (the actions'
// notification lines, alertgw's delivery lines) and of free text on a log line: whatever the
// value holds (a device id from an ETag, an error from Redis), it stays on its line. CR, LF,
// tab and every other control character (and DEL) are escaped as \r, \n, \t and \xHH, so no
// input can start a line of its own or hide one.
#pragma once

#include <string>
#include <string_view>

namespace alerts {

/// Appends `key=value` to `line` (after a space unless `line` is empty). The value is quoted
/// when it is empty or holds a space, '"', '=', '\\' or a control character; inside quotes '"'
/// and '\\' are escaped with '\\' and control characters as above.
void append_log_field(std::string& line, std::string_view key, std::string_view value);

/// `text` with its control characters escaped as above (nothing else changes): for a message
/// written as the rest of a log line (`alerts: cannot start: <text>`).
std::string log_safe(std::string_view text);

}  // namespace alerts
