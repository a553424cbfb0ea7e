// reply_values.hpp — what the Redis store takes from hiredis replies (redis_store*.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "redis/redis_client.hpp"

namespace alerts {

/// An integer reply, or a string one holding digits (0 for anything else).
inline std::uint64_t integer_of(const redisReply* r) {
    if (r->type == REDIS_REPLY_INTEGER) return static_cast<std::uint64_t>(r->integer);
    if (r->type == REDIS_REPLY_STRING) return std::strtoull(r->str, nullptr, 10);
    return 0;
}

/// Throws redis_error unless `r` is an array of `n` elements (the reply to `what`).
inline void expect_array(const redisReply* r, std::size_t n, const char* what) {
    if (r->type != REDIS_REPLY_ARRAY || r->elements != n) {
        throw redis_error(std::string("redis: unexpected reply to ") + what);
    }
}

}  // namespace alerts
