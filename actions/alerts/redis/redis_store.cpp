// redis_store.cpp — a batch's attempts: read, decide, commit, across conflicts and failovers,
// then WAIT (see redis_store.hpp). The read is redis_store_read.cpp, the commit
// redis_store_commit.cpp.
#include "redis/redis_store.hpp"

#include <algorithm>
#include <iostream>
#include <thread>

#include "core/log_text.hpp"
#include "redis/reply_values.hpp"

namespace alerts {

namespace {

using steady = std::chrono::steady_clock;

long long ms_since(steady::time_point start) {
    return static_cast<long long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start).count());
}

// Clears the client's deadline when the batch is done, however it ends.
class deadline_guard {
public:
    explicit deadline_guard(redis_client& client) : client_(client) {}
    ~deadline_guard() { client_.clear_deadline(); }
    deadline_guard(const deadline_guard&) = delete;
    deadline_guard& operator=(const deadline_guard&) = delete;

private:
    redis_client& client_;
};

}  // namespace

redis_store::redis_store(redis_store_options options)
    : options_(std::move(options)),
      client_(options_.url, options_.timeout),
      memory_watch_(options_.memory_check_every),
      due_key_(options_.prefix + "due"),
      devices_key_(options_.prefix + "devices"),
      log_key_(options_.prefix + "created"),
      outbox_key_(options_.prefix + "outbox"),
      now_key_(options_.prefix + "now"),
      silences_key_(options_.prefix + "silences"),
      silences_version_key_(options_.prefix + "silences:v") {}

batch_result redis_store::process(alert_core& core, const std::vector<etag>& batch, double now) {
    ++counters_.batches;
    const deadline_guard budget(client_);
    batch_.wrote = false;
    try {
        if (core.config() != known_config_) {
            reset_knowledge();
            known_config_ = core.config();
            if (known_config_) links_.build(*known_config_);
        }
        collect_keys(core, batch);
        return attempt_across_failovers(core, batch, now);
    } catch (const std::exception& e) {
        ++counters_.failures;
        drop_batch_state(core);
        // After a commit (WAIT unconfirmed, or the connection lost during WAIT), what it wrote
        // stands on the primary, unless a failover loses it: not "stored nothing".
        std::cerr << (batch_.wrote
                          ? "alerts: state store failed after a commit the replicas did not "
                            "confirm, the activation answers an error: "
                          : "alerts: state store failed, the activation answers an error and "
                            "stored nothing: ")
                  << log_safe(e.what()) << std::endl;
        throw;
    }
}

// Every round trip of this activation (connect, reads, commits, a retry) shares one
// ALERT_REDIS_TIMEOUT_MS; with sentinels, each attempt gets that much, and the attempts
// together until give_up_at.
batch_result redis_store::attempt_across_failovers(alert_core& core, const std::vector<etag>& batch,
                                                   double now) {
    const bool failover = !options_.url.sentinels.empty();
    const steady::time_point start = steady::now();
    const steady::time_point until = failover ? give_up_at(start) : start + options_.timeout;
    for (int retries = 0;; ++retries) {
        client_.start_deadline(failover ? std::min(until, steady::now() + options_.timeout)
                                        : until);
        try {
            batch_result result = attempt(core, batch, now);
            check_memory();
            if (retries > 0) {
                std::cerr << "alerts: redis: the batch went through on " << client_.label()
                          << " after " << ms_since(start) << " ms and " << retries << " retries"
                          << std::endl;
            }
            return result;
        } catch (const redis_unavailable& e) {
            before_failover_retry(core, e, start, until, retries);
        }
    }
}

// A failover under way (called while `e` is handled): ask the sentinels again, retry the batch
// from its read after a pause — or, without sentinels or time left, rethrow it.
void redis_store::before_failover_retry(alert_core& core, const redis_unavailable& e,
                                        steady::time_point start, steady::time_point until,
                                        int retries) {
    const auto pause = std::chrono::milliseconds(100);
    if (options_.url.sentinels.empty() || steady::now() + pause >= until) {
        if (retries == 0) throw;
        throw redis_unavailable(
            std::string(e.what()) + " (gave up after " + std::to_string(ms_since(start)) +
            " ms of retries asking the sentinels " + sentinel_list(options_.url) + ")");
    }
    if (retries == 0) {
        std::cerr << "alerts: redis: " << log_safe(e.what())
                  << ": asking the sentinels again and retrying the batch" << std::endl;
    }
    ++counters_.failover_retries;
    drop_batch_state(core);
    std::this_thread::sleep_for(pause);
}

// After a batch that went through: at most once per memory_check_every, INFO memory, and a
// warning when Redis is close to refusing writes. A failed check never fails the batch (the
// next batch reconnects if it cost the connection).
void redis_store::check_memory() {
    if (!memory_watch_.due(std::chrono::steady_clock::now())) return;
    try {
        const std::string warning = memory_warning(query_redis_memory(client_), client_.label());
        if (!warning.empty()) std::cerr << "alerts: warning: " << log_safe(warning) << std::endl;
    } catch (const std::exception&) {
        // Redis may be gone right after the commit: the next batch says so.
    }
}

// When a batch retried across a failover gives up: a little before the activation's deadline,
// or ALERT_REDIS_FAILOVER_MS after it started when it has none.
std::chrono::steady_clock::time_point redis_store::give_up_at(
    std::chrono::steady_clock::time_point start) {
    const auto fallback = start + options_.failover_time;
    if (!options_.activation_deadline) return fallback;
    const auto deadline = options_.activation_deadline();
    if (deadline == std::chrono::system_clock::time_point::max()) return fallback;
    const auto left = deadline - std::chrono::system_clock::now() - std::chrono::milliseconds(250);
    return start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(left);
}

// After a failure: nothing of this batch is kept (the next attempt, or batch, reads again).
void redis_store::drop_batch_state(alert_core& core) {
    counters_.damaged += batch_.damaged.count();
    batch_.damaged.flush(std::cerr);
    batch_.damaged_texts.clear();
    client_.disconnect();
    batch_.held.clear();
    reset_knowledge();       // what the log vouched for is not trusted after a failure
    remember_touched(core);  // whatever was restored is forgotten before the next attempt
}

// One read–decide–commit (again on fresh records after a commit lost to another container),
// then WAIT when the commit wrote something.
batch_result redis_store::attempt(alert_core& core, const std::vector<etag>& batch, double now) {
    for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
        core.forget(touched_);
        touched_.clear();
        read_reconnecting(core, now);
        batch_result result = core.process(batch, now);
        mark_unread_absent(core);
        keep_damaged_texts(core);
        remember_touched(core);
        if (options_.before_commit) options_.before_commit();
        batch_.wrote = false;
        if (commit_changes(core, result)) {
            batch_.held.clear();
            result.stats.damaged = batch_.damaged.count();
            counters_.damaged += batch_.damaged.count();
            batch_.damaged.flush(std::cerr);
            if (batch_.wrote) wait_for_replicas();
            if (!result.resolved_silences.empty())
                end_resolved_silences(result.resolved_silences, now);
            return result;
        }
        ++counters_.conflicts;
    }
    throw redis_error("redis " + client_.label() + ": gave up after " +
                      std::to_string(options_.max_attempts) + " commits lost to other containers");
}

// Durable before announced: the replicas confirm the commit (WAIT), or the activation answers
// an error. WAIT waits on the server for up to ALERT_REDIS_WAIT_MS: its reply gets that long,
// and a little more, whatever is left of the activation's budget.
void redis_store::wait_for_replicas() {
    if (options_.min_replicas <= 0) return;
    const auto need =
        std::chrono::steady_clock::now() + options_.wait_time + std::chrono::milliseconds(500);
    if (const auto d = client_.deadline(); d && *d < need) client_.start_deadline(need);
    const std::string replicas = std::to_string(options_.min_replicas);
    const std::string ms = std::to_string(options_.wait_time.count());
    client_.append({"WAIT", replicas, ms});
    const std::vector<redis_reply> r = client_.replies(1);
    ++counters_.waits;
    const std::uint64_t confirmed = integer_of(r[0].get());
    if (confirmed >= static_cast<std::uint64_t>(options_.min_replicas)) return;
    ++counters_.wait_failures;
    throw redis_error("redis " + client_.label() + ": the commit reached " +
                      std::to_string(confirmed) + " replica(s) within ALERT_REDIS_WAIT_MS (" + ms +
                      " ms), ALERT_REDIS_MIN_REPLICAS asks for " + replicas +
                      ": it stands on the primary only (a failover could lose it); re-send the "
                      "batch, which adds nothing once the commit is safe");
}

}  // namespace alerts
