// redis_container.hpp — one container of the alert action for the Redis store's tests: its own
// core (sample_config() unless given another) and store, on a shared test redis-server.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "alert_test_util.hpp"
#include "core/dedup_key.hpp"
#include "redis/redis_store.hpp"
#include "redis_server.hpp"
#include "runtime/redis_url.hpp"

namespace alerts::test {

// One container: its own core and store, on the shared server.
struct container {
    explicit container(const redis_server& server, std::function<void()> before_commit = {},
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(2000),
                       const nlohmann::json& config = sample_config())
        : harness({}, config), store(options(server, std::move(before_commit), timeout)) {}

    static redis_store_options options(const redis_server& server, std::function<void()> hook,
                                       std::chrono::milliseconds timeout) {
        redis_store_options o;
        o.url = parse_redis_url(server.url());
        o.before_commit = std::move(hook);
        o.timeout = timeout;
        return o;
    }
    std::vector<std::string> run(const std::vector<etag>& batch, double now) {
        const batch_result r = store.process(harness.core, batch, now);
        std::vector<std::string> out;
        for (const notification& n : r.notifications) {
            out.push_back(std::string(name_of(n.type)) + " " +
                          std::string(harness.core.device_id(n.device)));
        }
        stats = r.stats;
        keys.clear();
        for (const notification& n : r.notifications) keys.push_back(notif_key_text(n.key));
        return out;
    }
    core_harness harness;
    redis_store store;
    batch_stats stats;
    std::vector<std::string> keys;  // the last batch's dedupKeys, in order
};

}  // namespace alerts::test
