// alert_service.cpp — config and store set-up, and one activation from value to answer.
#include "runtime/alert_service.hpp"

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "core/hash.hpp"
#include "core/log_text.hpp"
#include "core/result_json.hpp"
#include "runtime/deployed_config.hpp"
#include "runtime/file_store.hpp"
#include "runtime/redis_url.hpp"
#include "runtime/sha256.hpp"

namespace alerts {

namespace {

using json = nlohmann::json;

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

core_options options_for(action_kind kind, const service_env& env) {
    core_options o;
    o.datacenter = env.datacenter;
    o.motion = kind != action_kind::state;
    o.state = kind != action_kind::motion;
    o.trusted_future = env.ts.max_future;
    // With Redis the store keeps what the rules held back for alertgw's console to explain.
    o.explain = !env.redis_url.empty() || !env.redis_sentinels.empty();
    return o;
}

json read_config_file(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw config_error("config: cannot read ALERT_CONFIG file '" + file + "'");
    try {
        return json::parse(in);
    } catch (const json::parse_error& e) {
        throw config_error("config: '" + file + "' is not JSON: " + e.what());
    }
}

int env_number(const char* name, int fallback, int lo, int hi) {
    const std::string text = env_or_empty(name);
    if (text.empty()) return fallback;
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (end != text.c_str() + text.size() || v < lo || v > hi) {
        throw std::invalid_argument(std::string(name) + "='" + text +
                                    "' must be a whole number from " + std::to_string(lo) + " to " +
                                    std::to_string(hi));
    }
    return static_cast<int>(v);
}

double wall_clock() {
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

namespace {

void read_redis_environment(service_env& env) {
    env.redis_url = env_or_empty("ALERT_REDIS_URL");
    env.redis_sentinels = env_or_empty("ALERT_REDIS_SENTINELS");
    env.redis_master = env_or_empty("ALERT_REDIS_MASTER");
    env.redis_password = env_or_empty("ALERT_REDIS_PASSWORD");
    env.redis_sentinel_password = env_or_empty("ALERT_REDIS_SENTINEL_PASSWORD");
    env.redis_prefix = env_or_empty("ALERT_REDIS_PREFIX");
    if (env.redis_prefix.empty()) env.redis_prefix = "alerts:";
    env.redis_id_ttl = env_number("ALERT_REDIS_ID_TTL", 600, 1, 30 * 86400);
    env.redis_timeout_ms = env_number("ALERT_REDIS_TIMEOUT_MS", 2000, 1, 600000);
    env.redis_failover_ms = env_number("ALERT_REDIS_FAILOVER_MS", 10000, 1, 600000);
    env.redis_min_replicas =
        env_number("ALERT_REDIS_MIN_REPLICAS", env.redis_sentinels.empty() ? 0 : 1, 0, 100);
    env.redis_wait_ms = env_number("ALERT_REDIS_WAIT_MS", 1000, 1, 600000);
    env.outbox = env_number("ALERT_OUTBOX", 1, 0, 1) == 1;
    env.outbox_maxlen = env_number("ALERT_OUTBOX_MAXLEN", 1000000, 1000, 1000000000);
}

void check_redis_environment(const service_env& env) {
    if (!env.redis_url.empty() && !env.redis_sentinels.empty()) {
        throw std::invalid_argument(
            "set ALERT_REDIS_URL or ALERT_REDIS_SENTINELS, not both (the sentinels name the "
            "primary)");
    }
    if (!env.redis_url.empty()) parse_redis_url(env.redis_url);  // throws for a malformed URL
    if (!env.redis_sentinels.empty()) parse_redis_sentinels(env.redis_sentinels, env.redis_master);
    if (env.redis_sentinels.empty() && !env.redis_master.empty()) {
        throw std::invalid_argument(
            "ALERT_REDIS_MASTER is set but ALERT_REDIS_SENTINELS is not: list the sentinels "
            "that know the primary");
    }
    if (env.uses_redis()) {
        redis_url credentials;  // read now, so a bad secret file fails /init, not a batch
        read_redis_credentials(credentials);
    }
    if (env.uses_redis() && !env.state_dir.empty()) {
        throw std::invalid_argument(
            std::string("set ") +
            (env.redis_url.empty() ? "ALERT_REDIS_SENTINELS" : "ALERT_REDIS_URL") +
            " or ALERT_STATE_DIR, not both (the Redis store is shared by every container; a "
            "state dir belongs to one)");
    }
}

// OW_WORKERS, as the proxy sets it for each of its worker processes: a count, 1 or more.
int read_workers() {
    const std::string text = env_or_empty("OW_WORKERS");
    if (text.empty()) return 1;
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (end != text.c_str() + text.size() || v < 1 || v > 1000000) {
        throw std::invalid_argument("OW_WORKERS='" + text +
                                    "' is no number of worker processes (the proxy sets it to "
                                    "the number it runs, 1 or more)");
    }
    return static_cast<int>(v);
}

// With several worker processes in the container, a store that one process keeps to itself
// would split each device's state between them: only Redis is shared.
void check_workers(const service_env& env) {
    if (env.workers <= 1 || env.uses_redis()) return;
    const std::string n = std::to_string(env.workers);
    const char* store = env.state_dir.empty()
                            ? "the memory store (no ALERT_REDIS_URL, ALERT_REDIS_SENTINELS or "
                              "ALERT_STATE_DIR) is each process's own"
                            : "ALERT_STATE_DIR is one process's (its lock file keeps others out)";
    throw std::invalid_argument(
        "OW_WORKERS=" + n + " runs " + n + " processes of this action, and " + store +
        ": each worker would hold its own state, so a device's events split between workers "
        "would send its notifications twice or lose them; set ALERT_REDIS_URL (or "
        "ALERT_REDIS_SENTINELS) to share the state in Redis, or run one worker (OW_WORKERS=1)");
}

// The bounds on what an invoker sends (docs/alerts.md, "Environment").
void read_input_bounds(service_env& env) {
    env.max_batch_etags = static_cast<std::size_t>(
        env_number("ALERT_MAX_BATCH_ETAGS", static_cast<int>(DEFAULT_MAX_BATCH_ETAGS), 1, 100000));
    env.ts.max_future = env_number("ALERT_MAX_FUTURE_SECONDS", 300, 0, 31536000);
    env.ts.max_past = env_number("ALERT_MAX_PAST_SECONDS", 604800, 1, 2000000000);
    const bool deployed = !env.config_file.empty();
    env.allow_value_config = env_number("ALERT_ALLOW_VALUE_CONFIG", deployed ? 0 : 1, 0, 1) == 1;
    if (!deployed && !env.allow_value_config) {
        throw std::invalid_argument(
            "ALERT_ALLOW_VALUE_CONFIG=0 without ALERT_CONFIG leaves the action no config: "
            "deploy one with ALERT_CONFIG");
    }
}

}  // namespace

service_env read_environment() {
    service_env env;
    env.datacenter = env_or_empty("EEN_AGENT_DATACENTER");
    env.config_file = env_or_empty("ALERT_CONFIG");
    env.state_dir = env_or_empty("ALERT_STATE_DIR");
    env.fsync = env_or_empty("ALERT_STATE_FSYNC") == "1";
    env.json_logs = env_or_empty("OW_LOG_FORMAT") == "json";
    read_redis_environment(env);
    check_redis_environment(env);
    env.workers = read_workers();
    check_workers(env);
    read_input_bounds(env);
    return env;
}

alert_service::alert_service(action_kind kind, service_env env,
                             std::shared_ptr<const alert_config> file_config,
                             std::ostream* diagnostics)
    : env_(std::move(env)),
      core_(options_for(kind, env_)),
      file_config_(std::move(file_config)),
      diagnostics_(diagnostics) {}

void alert_service::install_config_value(const json& config) {
    // Bound parameters come back with every activation: parse only when they changed.
    if (!core_.config() || core_.config()->fingerprint != config_fingerprint(config)) {
        core_.set_config(std::make_shared<const alert_config>(parse_config(config)));
    }
}

namespace {

// The config's DOM is gone once parsed; hand its pages back (a 300,000-device config's DOM is
// over 100 MB that would otherwise stay in the warm process's RSS).
void release_parse_memory() { ::malloc_trim(0); }

}  // namespace

void alert_service::install_config_file() {
    if (core_.config()) return;
    if (env_.config_file.empty()) {
        throw config_error("config: pass value.config or set ALERT_CONFIG in the action's env");
    }
    if (file_config_) return core_.set_config(file_config_);
    core_.set_config(
        std::make_shared<const alert_config>(parse_config(read_config_file(env_.config_file))));
    release_parse_memory();
}

void alert_service::install_config_text(std::string_view text) {
    if (text.empty()) return install_config_file();
    if (!env_.allow_value_config) {
        throw config_error(
            "config: value.config is refused: this action's config is deployed (ALERT_CONFIG) "
            "and ALERT_ALLOW_VALUE_CONFIG is not 1");
    }
    const std::uint64_t hash = hash_bytes(text);
    if (core_.config() && hash == config_text_hash_) return;
    const alert_config* before = core_.config();
    install_config_value(json::parse(text));
    config_text_hash_ = hash;
    release_parse_memory();
    if (diagnostics_ && core_.config() != before) {
        *diagnostics_ << value_config_line(sha256_hex(text), text.size(), env_.json_logs) << '\n';
    }
}

namespace {

store_factory& redis_factory() noexcept {
    static store_factory make = nullptr;
    return make;
}

}  // namespace

void register_redis_store(store_factory make) noexcept { redis_factory() = make; }

void alert_service::open_store() {
    if (store_) return;
    if (env_.uses_redis()) {
        if (!redis_factory()) {
            throw std::runtime_error("ALERT_REDIS_URL or ALERT_REDIS_SENTINELS is set but this "
                                     "build of the action has no Redis store (link "
                                     "actions/alerts/redis/register_redis_store.cpp and hiredis)");
        }
        store_ = redis_factory()(env_);
    } else if (env_.state_dir.empty()) {
        store_ = std::make_unique<memory_store>();
    } else {
        store_ = std::make_unique<file_store>(file_store_options{env_.state_dir, env_.fsync});
    }
    store_->load(core_);
}

void alert_service::run_text(std::string_view value, double wall_now, std::ostream& log,
                             std::string& answer) {
    value_members members;
    parse_value_text(value, batch_, members, env_.max_batch_etags);
    install_config_text(members.config);
    open_store();
    const double now = members.has_now ? members.now : wall_now;
    const ts_rejections out_of_range = reject_out_of_range(batch_, now, env_.ts);
    const batch_result& result = finish(now, out_of_range, log);
    answer = result_json(core_, result, batch_.rejected)
                 .dump(-1, ' ', false, json::error_handler_t::replace);
}

batch_result alert_service::finish(double now, const ts_rejections& out_of_range,
                                   std::ostream& log) {
    batch_result result = store_->process(core_, batch_.etags, now);
    result.stats.etags += batch_.rejected.size();
    result.stats.rejected = batch_.rejected.size();
    result.stats.future = out_of_range.future;
    result.stats.past = out_of_range.past;
    for (const notification& n : result.notifications) {
        log << log_line(core_, n, env_.json_logs) << '\n';
        if (n.late) log << late_line(core_, n, env_.json_logs) << '\n';
    }
    return result;
}

namespace {

json parse_deployed(const deployed_config& deployed) {
    try {
        return json::parse(deployed.text);
    } catch (const json::parse_error& e) {
        throw config_error("config: '" + (deployed.from_copy ? deployed.copy : deployed.file) +
                           "' is not JSON: " + e.what());
    }
}

// The deployed config (ALERT_CONFIG): the file at the first start after /init, the copy kept
// then at a restart; parsed, kept, named on stderr (`alerts: config sha256=…`).
std::shared_ptr<const alert_config> load_deployed_config(const service_env& env,
                                                         std::ostream& diagnostics) {
    const std::filesystem::path dir = std::filesystem::current_path();
    const std::string starter = starter_identity();
    deployed_config deployed = read_deployed_config(env.config_file, dir, starter);
    auto config = std::make_shared<const alert_config>(parse_config(parse_deployed(deployed)));
    const std::string not_kept = keep_deployed_config(deployed, dir, starter);
    diagnostics << config_line(deployed, env.json_logs) << '\n';
    if (!not_kept.empty()) {
        diagnostics << "alerts: warning: no copy of the config could be kept in "
                    << log_safe(dir.string()) << " (" << log_safe(not_kept)
                    << "): a restarted process reads ALERT_CONFIG again\n";
    }
    deployed = {};
    release_parse_memory();
    return config;
}

// The environment and the ALERT_CONFIG file, checked once when the process starts.
std::unique_ptr<alert_service> make_service(action_kind kind, std::ostream& diagnostics) {
    try {
        service_env env = read_environment();
        std::shared_ptr<const alert_config> config;
        if (!env.config_file.empty()) {
            config = load_deployed_config(env, diagnostics);
        } else {
            diagnostics << value_config_line("", 0, env.json_logs) << '\n';
        }
        return std::make_unique<alert_service>(kind, std::move(env), std::move(config),
                                               &diagnostics);
    } catch (const std::exception& e) {
        throw std::runtime_error("alerts: cannot start: " + log_safe(e.what()));
    }
}

std::unique_ptr<alert_service>& the_service() {
    static std::unique_ptr<alert_service> service;
    return service;
}

}  // namespace

std::chrono::system_clock::time_point activation_deadline() noexcept {
    using namespace std::chrono;
    const char* text = std::getenv("__OW_DEADLINE");
    if (!text || !*text) return system_clock::time_point::max();
    char* end = nullptr;
    const long long ms = std::strtoll(text, &end, 10);
    if (*end != '\0' || ms <= 0 || ms > 9000000000000LL) {
        return system_clock::time_point::max();
    }
    const system_clock::time_point deadline{milliseconds(ms)};
    return deadline > system_clock::now() ? deadline : system_clock::time_point::max();
}

void start_service(action_kind kind) {
    if (!the_service()) the_service() = make_service(kind, std::cerr);
    std::cerr.flush();
}

void run_raw_activation(std::string_view value, action_kind kind, std::string& answer) {
    start_service(kind);  // already done by on_init, unless the launcher had no hooks
    the_service()->run_text(value, wall_clock(), std::cout, answer);
}

}  // namespace alerts
