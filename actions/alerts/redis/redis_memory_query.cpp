// redis_memory_query.cpp — INFO memory asked of a server (redis_memory.hpp).
#include "redis/redis_client.hpp"
#include "redis/redis_memory.hpp"

namespace alerts {

redis_memory query_redis_memory(redis_client& client) {
    client.append({"INFO", "memory"});
    const redis_reply r = client.reply();  // a look at the server, not counted as the batches'
    if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS) {
        throw redis_error("redis " + client.label() + ": unexpected reply to INFO memory");
    }
    const auto m = parse_info_memory(std::string_view(r->str, r->len));
    if (!m) {
        throw redis_error("redis " + client.label() +
                          ": INFO memory has no used_memory or maxmemory");
    }
    return *m;
}

}  // namespace alerts
