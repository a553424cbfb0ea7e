// register_redis_store.cpp — makes ALERT_REDIS_URL work in an action: linked into the
// CMake-built actions (add_action SOURCES), its static initializer registers the Redis store
// with alert_service before the first activation.
#include <memory>

#include "../runtime/alert_service.hpp"
#include "redis_store.hpp"

namespace {

std::unique_ptr<alerts::state_store> make_redis_store(const alerts::service_env& env) {
    alerts::redis_store_options o;
    o.url = alerts::parse_redis_url(env.redis_url);
    o.prefix = env.redis_prefix;
    o.id_ttl = env.redis_id_ttl;
    o.timeout = std::chrono::milliseconds(env.redis_timeout_ms);
    o.outbox = env.outbox;
    o.outbox_maxlen = static_cast<std::size_t>(env.outbox_maxlen);
    return std::make_unique<alerts::redis_store>(std::move(o));
}

[[maybe_unused]] const bool REGISTERED = (alerts::register_redis_store(&make_redis_store), true);

}  // namespace
