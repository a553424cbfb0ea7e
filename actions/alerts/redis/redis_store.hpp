// redis_store.hpp — the state store shared by every container of an action: Redis.
//
// Chosen by ALERT_REDIS_URL (docs/alerts.md, "Persistence"). Each activation:
//  1. reads, in one pipelined round trip, the records of the batch's devices, which of the
//     batch's status and motion ids are in the shared recent-ids window, and the holds due
//     by `now` (a second round trip fetches the records of due devices outside the batch, if
//     any); with every device read, the records the bridge rules need: a camera's bridge and
//     a bridge's cameras (from the config; none for a device without a bridge);
//  2. lets the core decide, exactly as with the in-process state;
//  3. commits in one Lua script (EVALSHA; SCRIPT LOAD rides along with the first read of each
//     connection): every record the core changed is written only if its stored text is still
//     the one read (compare-and-set), with its due time in the sorted set and the ids of
//     effective events with a TTL — all or nothing. The bridge and cameras of a changed device
//     are checked too (compare only; their due times are set again, as they depend on the
//     changed record). When another container changed one of those devices in between,
//     nothing is written and the batch is decided again on fresh records. Same-state heartbeats
//     change no record, so a batch of them writes nothing.
// A failure throws redis_error (the activation answers an error), logs one line and drops the
// connection; the next activation reconnects.
// With sentinels (ALERT_REDIS_SENTINELS), what a failover causes (redis_unavailable: a broken
// connection, a time-out, READONLY, LOADING, a primary that is no longer one) makes the store
// ask the sentinels again and retry the whole read–decide–commit, until the activation's
// deadline is near (or ALERT_REDIS_FAILOVER_MS when it has none). After a commit that wrote
// something, WAIT for ALERT_REDIS_MIN_REPLICAS replicas within ALERT_REDIS_WAIT_MS: fewer is
// an error answer (the commit stands on the primary; a re-sent batch adds nothing). Nothing is kept
// in the process between batches (the device table and the command buffers are reused, never their
// contents).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/state_store.hpp"
#include "redis/bridge_links.hpp"
#include "redis/commit_args.hpp"
#include "redis/redis_client.hpp"
#include "redis/redis_memory.hpp"
#include "redis/store_batch.hpp"

namespace alerts {

struct redis_store_options {
    redis_url url;
    std::string prefix = "alerts:";
    int id_ttl = 600;  // seconds a recent event id is remembered (ALERT_REDIS_ID_TTL)
    std::chrono::milliseconds timeout{2000};
    int max_attempts = 32;   // commits lost to other containers before giving up
    int log_length = 10000;  // entries the creations log keeps (approximately)
    bool outbox = true;      // append the notifications to <prefix>outbox (ALERT_OUTBOX)
    std::size_t outbox_maxlen = 1000000;   // the outbox's cap (ALERT_OUTBOX_MAXLEN)
    std::size_t outbox_trim_above = 1000;  // trim acknowledged entries past this length
    /// Sentinel mode (url.sentinels): the whole time a batch may be retried across a failover
    /// when the activation has no deadline (ALERT_REDIS_FAILOVER_MS).
    std::chrono::milliseconds failover_time{10000};
    /// Replicas that must confirm a commit that wrote something (ALERT_REDIS_MIN_REPLICAS; 0:
    /// no WAIT), within wait_time (ALERT_REDIS_WAIT_MS).
    int min_replicas = 0;
    std::chrono::milliseconds wait_time{1000};
    /// The activation's deadline (system clock; max() when it has none). Unset: none.
    std::function<std::chrono::system_clock::time_point()> activation_deadline;
    /// Runs between the read and the commit of every attempt: lets the tests put another
    /// container's commit exactly there. Unset in the actions.
    std::function<void()> before_commit;
    /// Runs after a commit's reply arrived, before it is used: a test that throws there sees
    /// the activation fail as if the reply had been lost (the commit applied). Unset in the
    /// actions.
    std::function<void()> after_commit;
    /// How often, at most, a batch that went through is followed by INFO memory and a warning
    /// on stderr when Redis uses 80 % of its maxmemory or more (redis_memory.hpp).
    std::chrono::steady_clock::duration memory_check_every = std::chrono::seconds(60);
};

/// Counters for tests and the benchmark.
struct redis_store_counters {
    std::uint64_t batches = 0;
    std::uint64_t commits = 0;
    std::uint64_t conflicts = 0;
    std::uint64_t failures = 0;
    std::uint64_t skipped = 0;           // device reads saved: known to have no record
    std::uint64_t log_resets = 0;        // times the creations log could not vouch for those
    std::uint64_t outbox_entries = 0;    // notifications appended to the outbox
    std::uint64_t outbox_dropped = 0;    // entries the commits dropped over the outbox's cap
    std::uint64_t failover_retries = 0;  // attempts retried after a redis_unavailable
    std::uint64_t waits = 0;             // WAITs after commits
    std::uint64_t wait_failures = 0;     // WAITs the replicas did not confirm in time
    std::uint64_t damaged = 0;  // keys skipped or replaced as not the store's (damaged_keys.hpp)
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
    batch_result attempt_across_failovers(alert_core& core, const std::vector<etag>& batch,
                                          double now);
    void before_failover_retry(alert_core& core, const redis_unavailable& e,
                               std::chrono::steady_clock::time_point start,
                               std::chrono::steady_clock::time_point until, int retries);
    batch_result attempt(alert_core& core, const std::vector<etag>& batch, double now);
    std::chrono::steady_clock::time_point give_up_at(std::chrono::steady_clock::time_point start);
    void drop_batch_state(alert_core& core);
    void wait_for_replicas();

    // What this process knows of a device's record (by core index).
    enum : std::uint8_t { UNKNOWN = 0, ABSENT = 1, PRESENT = 2 };
    static constexpr std::size_t LOG_READ_MAX = 1000;  // log entries followed per read

    void collect_keys(const alert_core& core, const std::vector<etag>& batch);
    void add_linked(const alert_core& core, std::size_t from, std::size_t to, bool second);
    bridge_links::range links_of_seen(const alert_core& core, std::uint32_t index) const;
    static std::uint32_t linked_device(const alert_core& core, const bridge_links::linked& t);
    void grow_table();
    std::size_t find_position(std::string_view account, std::string_view device,
                              std::uint64_t h) const;
    void list_checks(const alert_core& core, const std::vector<std::uint32_t>& written);
    bool follow_log(const alert_core& core, const redisReply* entries, std::uint64_t devices_now);
    struct log_entry {
        std::string_view id;         // in the reply
        std::uint64_t n = 0, c = 0;  // the device counter after it, how many it created
    };
    log_entry take_log_entry(const alert_core& core, const redisReply* entry);
    void reset_knowledge();
    void mark(std::uint32_t index, std::uint8_t what);
    void mark_unread_absent(const alert_core& core);
    std::size_t find_or_add(std::string_view account, std::string_view device, std::uint64_t h);
    void read_reconnecting(alert_core& core, double now);
    // read()'s steps (redis_store_read.cpp), in their order.
    struct first_read {
        bool knowledge_held = false;      // follow_log: the skipped devices had no record
        const redisReply* due = nullptr;  // ZRANGEBYSCORE's reply, in held_
    };
    void read(alert_core& core, double now);
    void forget_due_devices();
    void reindex_devices();
    void list_batch_reads();
    bool send_first_read(double now);
    first_read take_first_read(alert_core& core, bool load_script);
    void restore_records(alert_core& core, const redisReply* values,
                         const std::vector<std::uint32_t>& positions);
    void list_second_reads(const alert_core& core, bool knowledge_held, const redisReply* due);
    void add_due_device(std::string_view key);
    void read_second(alert_core& core);
    void restore(alert_core& core, std::uint32_t position, const redisReply* value);
    void keep_damaged_texts(alert_core& core);
    std::string_view damaged_text_at(std::uint32_t at) const;
    void forget_conflicting(const alert_core& core, const redisReply* indices,
                            const std::vector<std::uint32_t>& devices);
    void note_replaced(const alert_core& core, const redisReply* indices,
                       const std::vector<std::uint32_t>& devices);
    std::string key_at(const alert_core& core, std::size_t index,
                       const std::vector<std::uint32_t>& devices) const;
    void remember_touched(const alert_core& core);
    bool commit_changes(const alert_core& core, batch_result& result);
    void list_commit_devices(const alert_core& core, const batch_result& result);
    commit_settings commit_settings_of_store() const;
    void gather_commit(const alert_core& core, const batch_result& result);
    void encode_records(const alert_core& core);
    std::string_view record_as_read(std::uint32_t index) const;
    void gather_notes(const alert_core& core, const batch_result& result);
    void gather_extras(const alert_core& core, const batch_result& result);
    redis_reply run_commit(std::size_t args);
    bool take_commit_reply(const alert_core& core, const redisReply* r,
                           const std::vector<std::uint32_t>& devices, std::size_t m,
                           batch_result& result);
    void warn_dropped(std::uint64_t dropped);
    // redis_silences.cpp: the silences made at run time (docs/alerts.md, "Silences").
    void load_silences(alert_core& core, const redisReply* version);
    void end_resolved_silences(const std::vector<std::string>& ids, double now);
    void check_memory();

    redis_store_options options_;
    redis_client client_;
    redis_store_counters counters_;
    memory_watch memory_watch_;
    std::string due_key_;
    std::string devices_key_;
    std::string log_key_;
    std::string outbox_key_;
    std::string now_key_;               // <prefix>now: the notable devices (the console's)
    std::string silences_key_;          // <prefix>silences: id -> the silence's JSON
    std::string silences_version_key_;  // <prefix>silences:v: a new token at every change
    std::string silences_version_;      // the version the core's silences were read at
    bool silences_read_ = false;
    std::chrono::steady_clock::time_point last_drop_warning_{};
    std::uint64_t unwarned_drops_ = 0;
    std::string script_sha_;               // of REDIS_COMMIT_SCRIPT, from SCRIPT LOAD
    std::uint64_t script_connection_ = 0;  // the connection it was loaded on

    // Devices known to have no record, and the position in the creations log from which that
    // holds (redis_store_read.cpp, "Devices without a record"). Kept between batches.
    std::vector<std::uint8_t> known_;
    bool log_valid_ = false;
    std::string log_id_;           // the last entry followed ("0-0": none yet)
    std::uint64_t log_total_ = 0;  // the device counter as of that position
    const alert_config* known_config_ = nullptr;

    // Bridges (redis_store_read.cpp, "Bridges"): per device of a bridge group, the devices its
    // decisions read. Empty for a config without bridges: then nothing costs anything.
    bridge_links links_;

    // What the batch under way reads, holds and commits (store_batch.hpp): nothing of it
    // outlives the batch but the buffers' capacity.
    store_batch batch_;
    // The core's devices this batch restored or changed, forgotten before the next one reads.
    std::vector<std::uint32_t> touched_;
};

}  // namespace alerts
