// register_redis_store.cpp — makes ALERT_REDIS_URL (or ALERT_REDIS_SENTINELS) work in an action:
// linked into the CMake-built actions (add_action SOURCES), its static initializer registers the
// Redis store with alert_service before the first activation.
#include <memory>

#include "redis/redis_store.hpp"
#include "runtime/alert_service.hpp"

namespace {

std::unique_ptr<alerts::state_store> make_redis_store(const alerts::service_env& env) {
    alerts::redis_store_options o;
    o.url = env.redis_sentinels.empty()
                ? alerts::parse_redis_url(env.redis_url)
                : alerts::parse_redis_sentinels(env.redis_sentinels, env.redis_master);
    // ALERT_REDIS_USER, ALERT_REDIS_PASSWORD[_FILE] and the sentinels' (runtime/redis_url.hpp).
    alerts::read_redis_credentials(o.url);
    o.failover_time = std::chrono::milliseconds(env.redis_failover_ms);
    o.min_replicas = env.redis_min_replicas;
    o.wait_time = std::chrono::milliseconds(env.redis_wait_ms);
    o.activation_deadline = &alerts::activation_deadline;
    o.prefix = env.redis_prefix;
    o.id_ttl = env.redis_id_ttl;
    o.timeout = std::chrono::milliseconds(env.redis_timeout_ms);
    o.outbox = env.outbox;
    o.outbox_maxlen = static_cast<std::size_t>(env.outbox_maxlen);
    return std::make_unique<alerts::redis_store>(std::move(o));
}

[[maybe_unused]] const bool REGISTERED = (alerts::register_redis_store(&make_redis_store), true);

}  // namespace
