// resp_write.hpp — commands in the protocol's form (RESP), written straight into a buffer: the
// store's pipelined reads and its commit send their arguments this way, with no string per key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace alerts {

/// "<kind><n>\r\n": an array's ('*') or a bulk string's ('$') header.
void resp_count(std::string& out, char kind, std::size_t n);
/// One argument: "$<len>\r\n<a>\r\n".
void resp_arg(std::string& out, std::string_view a);
/// Replaces `out` by a command's header: "*<args>\r\n" and the command's name (one of `args`).
void resp_head(std::string& out, std::size_t args, std::string_view command);
/// One argument, the key of (account, device) (redis_records.hpp), written in place.
void resp_device_key(std::string& out, std::string_view prefix, std::string_view account,
                     std::string_view device);
/// One argument, the key of a recent event id (redis_records.hpp).
void resp_id_key(std::string& out, std::string_view prefix, std::uint64_t id_hash);

}  // namespace alerts
