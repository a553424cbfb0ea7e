// outbox_stream.hpp — alertgw's adapter to Redis: the outbox stream read through the consumer
// group "alertgw" (new entries, this consumer's own pending ones after a restart, entries
// claimed from a gateway that went quiet), the progress hashes <prefix>gw:<id>, the
// dead-letter stream <prefix>deadletter (capped) and the acknowledgements. Thin: it turns
// ledger_writes into one pipelined round trip and replies into outbox_records; every decision
// is the ledger's. Any failure throws redis_error (the caller retries later).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gateway/ledger/delivery_ledger.hpp"
#include "gateway/ledger/outbox_record.hpp"
#include "redis/redis_client.hpp"

namespace alerts::gateway {

struct group_backlog {
    double lag = -1;      // entries not yet read by the group (XINFO GROUPS)
    double pending = -1;  // read and not yet acknowledged
};

class outbox_stream {
public:
    outbox_stream(redis_client& redis, const std::string& prefix, std::string consumer);

    /// The group "alertgw", from the stream's start (created with the stream if need be).
    void create_group();
    /// Up to `count` entries never read by the group, waiting up to `block_ms` (0: no wait).
    std::vector<outbox_record> read_new(std::size_t count, int block_ms);
    /// The same in two halves, so the caller can wait on other things meanwhile: ask_new sends
    /// the XREADGROUP; new_records reads its answer (at once when fd() is readable).
    void ask_new(std::size_t count, int block_ms);
    std::vector<outbox_record> new_records();
    /// The socket the answer to ask_new arrives on (-1 when not connected).
    int fd() const { return redis_.fd(); }
    /// This consumer's own pending entries after `cursor` (moved on); empty at the end.
    std::vector<outbox_record> read_own_pending(std::string& cursor, std::size_t count);
    /// Entries idle for `idle` with another consumer (XAUTOCLAIM from `cursor`, moved on).
    std::vector<outbox_record> claim(std::chrono::milliseconds idle, std::string& cursor,
                                     std::size_t count);
    /// Throws redis_error unless `replicas` replicas have every write of this connection (WAIT,
    /// up to `wait`): after a read, that they have the entries read, so a primary cut off from
    /// its replicas (whose writes a failover discards) hands out nothing to deliver.
    void confirm_replicated(int replicas, std::chrono::milliseconds wait);
    /// The progress hashes of `ids`, in order.
    std::vector<std::map<std::string, std::string>> progress_of(
        const std::vector<std::string>& ids);
    /// Restarts the idle time of entries still held (no other gateway claims them).
    void keep_alive(const std::vector<std::string>& ids);
    group_backlog backlog();
    /// Writes one round (dead letters, progress, acks) in one round trip; returns how many
    /// old dead letters the cap `dead_letter_max` dropped.
    long long write(const ledger_writes& writes, std::size_t dead_letter_max);

    const std::string& outbox_key() const { return outbox_; }

private:
    std::string progress_key(const std::string& id) const { return prefix_ + "gw:" + id; }

    redis_client& redis_;
    std::string prefix_;
    std::string outbox_;
    std::string dead_letters_;
    std::string consumer_;
};

}  // namespace alerts::gateway
