// The activation loop, independent of how the user's function is found (see main.cpp).
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace actionloop {

using entry_point = std::function<nlohmann::json(nlohmann::json&&)>;

/// Turns one request line into one compact answer (without the newline): exports the
/// context as __OW_* variables, calls `entry` with `value`, maps exceptions to {"error"}.
std::string handle_request(const std::string& line, const entry_point& entry);

/// Acks on fd `out_fd` when __OW_WAIT_FOR_ACK is set, then serves request lines from `in_fd`
/// until EOF. Returns the process exit code.
int run_loop(const entry_point& entry, int in_fd = 0, int out_fd = 3);

}  // namespace actionloop
