// The activation loop, independent of how the user's function is found (see main.cpp).
#pragma once

#include <actionloop/action.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "platform.hpp"

namespace actionloop {

/// The json contract: `nlohmann::json main(nlohmann::json args[, const context&])`.
using entry_point = std::function<nlohmann::json(nlohmann::json&&, const context&)>;

/// The raw contract: `void main(std::string_view value, std::string& answer[, const context&])`
/// (action.hpp).
using raw_entry_point =
    std::function<void(std::string_view value, std::string& answer, const context&)>;

/// Turns one request line into one compact answer (without the newline): builds the context
/// (also exported as __OW_* variables), calls `entry` with `value`, maps exceptions to {"error"}.
/// For Lambda (`mode`, platform.hpp): `value` is given whatever its JSON type, the context
/// has Lambda's fields (and _X_AMZN_TRACE_ID is set, no __OW_* variable), and a failure is
/// the one {"__lambda_error": …} line (lambda_error.hpp).
std::string handle_request(std::string_view line, const entry_point& entry,
                           platform mode = platform::openwhisk);

/// The same for a raw entry point: a top-level scan of `line` (no DOM) builds the context
/// and finds the text of `value`, which `entry` gets as is ("{}" when absent or not an
/// object or array; for Lambda whatever it is, "{}" only when absent). `answer` is the
/// caller's buffer; newlines in it become spaces.
void handle_raw_request(std::string_view line, const raw_entry_point& entry, std::string& answer,
                        platform mode = platform::openwhisk);

/// The action's optional lifecycle hooks (action.hpp); empty when the action has none.
struct lifecycle {
    std::function<void()> on_init;
    std::function<void(std::chrono::milliseconds time_left)> on_shutdown;
};

/// The request line the proxy sends, once the drain on SIGTERM has finished the activations
/// in flight, to an action whose ack offered {"shutdown":true}: this prefix, then the
/// milliseconds left (decimal). A /run body is never sent starting with its first byte.
inline constexpr std::string_view SHUTDOWN_LINE_PREFIX = "\x1e"
                                                         "actionloop-shutdown ";

/// Runs `hooks.on_init` (its exception: an ack {"ok":false,"error":"on_init: ..."} and exit
/// 1), acks on fd `out_fd` when __OW_WAIT_FOR_ACK is set (offering the shutdown line when
/// `hooks.on_shutdown` is set), then serves request lines from `in_fd` until EOF or the
/// shutdown line (then `hooks.on_shutdown` runs and the loop ends). The platform is read
/// from the environment once, before on_init (platform_of_environment; Lambda's has no
/// sentinels). Returns the process exit code.
int run_loop(const entry_point& entry, const lifecycle& hooks = {}, int in_fd = 0, int out_fd = 3);
int run_raw_loop(const raw_entry_point& entry, const lifecycle& hooks = {}, int in_fd = 0,
                 int out_fd = 3);

}  // namespace actionloop
