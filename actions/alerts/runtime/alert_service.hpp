// alert_service.hpp — what the three actions share: one warm decision core per process, its
// config (value.config, else the file named by ALERT_CONFIG, read once per /init:
// deployed_config.hpp), its state store
// (redis_store under ALERT_REDIS_URL, file_store under ALERT_STATE_DIR, else memory), and the
// translation of an activation's
// `value` into a batch and of the core's result into the answer and the log lines.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "core/alert_core.hpp"
#include "core/batch_text.hpp"
#include "core/state_store.hpp"
#include "core/ts_bounds.hpp"

namespace alerts {

enum class action_kind { motion, state, monitor };

/// The action's environment (the `env` of /init; docs/alerts.md, "Environment").
struct service_env {
    std::string datacenter;       // EEN_AGENT_DATACENTER
    std::string config_file;      // ALERT_CONFIG
    std::string state_dir;        // ALERT_STATE_DIR
    bool fsync = false;           // ALERT_STATE_FSYNC=1
    std::string redis_url;        // ALERT_REDIS_URL
    std::string redis_sentinels;  // ALERT_REDIS_SENTINELS (host:port,...), instead of the URL
    std::string redis_master;     // ALERT_REDIS_MASTER: the primary's name at the sentinels
    std::string redis_password;   // ALERT_REDIS_PASSWORD
    std::string redis_sentinel_password;  // ALERT_REDIS_SENTINEL_PASSWORD
    std::string redis_prefix;             // ALERT_REDIS_PREFIX (default "alerts:")
    int redis_id_ttl = 600;               // ALERT_REDIS_ID_TTL, seconds
    int redis_timeout_ms = 2000;          // ALERT_REDIS_TIMEOUT_MS
    int redis_failover_ms = 10000;        // ALERT_REDIS_FAILOVER_MS
    int redis_min_replicas = 0;           // ALERT_REDIS_MIN_REPLICAS (default 1 with sentinels)
    int redis_wait_ms = 1000;             // ALERT_REDIS_WAIT_MS

    /// ALERT_REDIS_URL or ALERT_REDIS_SENTINELS is set.
    bool uses_redis() const { return !redis_url.empty() || !redis_sentinels.empty(); }
    bool outbox = true;           // ALERT_OUTBOX (1, the default; 0: no outbox)
    int outbox_maxlen = 1000000;  // ALERT_OUTBOX_MAXLEN
    /// ALERT_MAX_BATCH_ETAGS: a batch with more ETags is refused whole (1 to 100,000).
    std::size_t max_batch_etags = DEFAULT_MAX_BATCH_ETAGS;
    /// ALERT_MAX_FUTURE_SECONDS (0 to 31,536,000) and ALERT_MAX_PAST_SECONDS (1 to
    /// 2,000,000,000): an ETag whose ts is further from the batch's now is rejected.
    ts_bounds ts;
    /// ALERT_ALLOW_VALUE_CONFIG: whether value.config may replace the config. Default: yes
    /// without ALERT_CONFIG (it is the only way to give one), no with it (the deployed config
    /// is the operator's; an invoker must not replace it).
    bool allow_value_config = true;
    /// OW_WORKERS: how many action processes the proxy runs side by side in this container
    /// (it sets the variable for each; unset: 1). Above 1, only the Redis store is shared
    /// between them: the memory and state-dir stores fail /init (docs/alerts.md, "Workers").
    int workers = 1;
    /// OW_LOG_FORMAT=json (the proxy's JSON log mode sets it for the action): the
    /// notification lines are JSON objects, which the proxy keeps as objects in its records.
    bool json_logs = false;
};

/// Reads the environment; throws std::invalid_argument for a value that cannot work.
service_env read_environment();

/// The deadline of the activation being served, or max() when it has none: how long the Redis
/// store may retry a batch across a failover. The launcher exports the request's `deadline`
/// (OpenWhisk's, a string of epoch milliseconds) as __OW_DEADLINE; one that has passed is left
/// from an earlier activation, and counts as none.
std::chrono::system_clock::time_point activation_deadline() noexcept;

/// Makes the Redis store from the environment. redis/register_redis_store.cpp registers it
/// (the CMake-built actions link that file and hiredis); a build without it, such as
/// monitor.cpp compiled by `compile` from core/ and runtime/ only, answers an error when
/// ALERT_REDIS_URL is set.
using store_factory = std::unique_ptr<state_store> (*)(const service_env& env);
void register_redis_store(store_factory make) noexcept;

class alert_service {
public:
    /// `diagnostics`, when given, gets a line naming each value.config installed (its SHA-256).
    alert_service(action_kind kind, service_env env,
                  std::shared_ptr<const alert_config> file_config = nullptr,
                  std::ostream* diagnostics = nullptr);

    /// One activation from the value's JSON text (parsed by batch_text, no DOM); `wall_now` is
    /// used when it has no "now". The answer goes to `answer` as compact JSON; notifications
    /// are also written to `log` as key=value lines (JSON objects with OW_LOG_FORMAT=json).
    /// A bound config is re-parsed only when its
    /// text changes.
    void run_text(std::string_view value, double wall_now, std::ostream& log, std::string& answer);

    const alert_core& core() const { return core_; }

private:
    void install_config_value(const nlohmann::json& config);
    void install_config_text(std::string_view text);
    void install_config_file();
    batch_result finish(double now, const ts_rejections& out_of_range, std::ostream& log);
    void open_store();

    service_env env_;
    alert_core core_;
    std::unique_ptr<state_store> store_;
    parsed_batch batch_;
    std::uint64_t config_text_hash_ = 0;               // of the last value.config text installed
    std::shared_ptr<const alert_config> file_config_;  // ALERT_CONFIG, read at start
    std::ostream* diagnostics_;                        // stderr in an action; may be null
};

/// Creates the process-wide service of an action from the environment, when the action
/// process starts (monitor.cpp's on_init, before the ack), and writes the config line to
/// stderr (`alerts: config sha256=…`, deployed_config.hpp). A bad setting or an unreadable or
/// invalid config throws std::runtime_error("alerts: cannot start: <why>"), which fails /init
/// with that reason (docs/SDK.md, on_init) instead of every /run.
void start_service(action_kind kind);

/// One activation of the process-wide service of an action (start_service, if on_init has not
/// run), for the launcher's raw entry point: `value` is the value's JSON text.
void run_raw_activation(std::string_view value, action_kind kind, std::string& answer);

}  // namespace alerts
