// redis_store.hpp — the state store shared by every container of an action: Redis.
//
// Chosen by ALERT_REDIS_URL (docs/alerts.md, "Persistence"). Each activation:
//  1. reads, in one pipelined round trip, the records of the batch's devices, which of the
//     batch's status and motion ids are in the shared recent-ids window, and the holds due
//     by `now` (a second round trip fetches the records of due devices outside the batch, if
//     any);
//  2. lets the core decide, exactly as with the in-process state;
//  3. commits in one Lua script: every record the core changed is written only if its stored
//     text is still the one read (compare-and-set), with its due time in the sorted set and the
//     ids of effective events with a TTL — all or nothing. When another container changed one
//     of those devices in between, nothing is written and the batch is decided again on fresh
//     records. Same-state heartbeats change no record, so a batch of them writes nothing.
// A failure throws redis_error (the activation answers an error), logs one line and drops the
// connection; the next activation reconnects. Nothing is kept in the process between batches.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "../core/state_store.hpp"
#include "redis_client.hpp"

namespace alerts {

struct redis_store_options {
    redis_url url;
    std::string prefix = "alerts:";
    int id_ttl = 600;  // seconds a recent event id is remembered (ALERT_REDIS_ID_TTL)
    std::chrono::milliseconds timeout{2000};
    int max_attempts = 32;  // commits lost to other containers before giving up
    /// Runs between the read and the commit of every attempt: lets the tests put another
    /// container's commit exactly there. Unset in the actions.
    std::function<void()> before_commit;
};

/// Counters for tests and the benchmark.
struct redis_store_counters {
    std::uint64_t batches = 0;
    std::uint64_t commits = 0;
    std::uint64_t conflicts = 0;
    std::uint64_t failures = 0;
};

class redis_store : public state_store {
public:
    explicit redis_store(redis_store_options options);

    void load(alert_core&) override {}          // nothing to load: records are read per batch
    void commit(const alert_core&) override {}  // process() commits
    batch_result process(alert_core& core, const std::vector<etag>& batch, double now) override;

    const redis_store_counters& counters() const { return counters_; }
    std::uint64_t round_trips() const { return client_.round_trips(); }

private:
    void collect_keys(const std::vector<etag>& batch);
    void read_reconnecting(alert_core& core, double now);
    void read(alert_core& core, double now);
    void restore(alert_core& core, std::string_view key, const redisReply* value);
    void remember_touched(const alert_core& core);
    bool commit_changes(const alert_core& core, batch_result& result);

    redis_store_options options_;
    redis_client client_;
    redis_store_counters counters_;
    std::string due_key_;
    std::string devices_key_;

    // Per batch.
    std::vector<std::string> keys_;  // device keys: the batch's, then due ones outside it
    std::size_t batch_keys_ = 0;
    std::unordered_map<std::string, std::string> read_;  // key -> record text as read
    std::vector<std::string> id_keys_;
    std::vector<std::uint64_t> id_hashes_;
    std::vector<std::uint32_t> touched_;  // device indices to forget before the next batch
    std::uint64_t read_pending_ = 0;
    std::uint64_t read_devices_ = 0;
};

}  // namespace alerts
