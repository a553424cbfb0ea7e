// redis_store_read.cpp — a batch's read (see redis_store.hpp): the devices and ids it needs,
// what the creations log says of the devices without a record, the bridges and cameras read
// with a device, in two round trips at most.
#include "core/device_status.hpp"
#include "redis/redis_store.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include "core/string_interner.hpp"
#include "redis/redis_records.hpp"
#include "redis/redis_scripts.hpp"
#include "redis/reply_values.hpp"
#include "redis/resp_write.hpp"

namespace alerts {

namespace {

// Restores one record into the core and keeps the device's index.
class indexing_restorer : public record_sink {
public:
    explicit indexing_restorer(alert_core& core) : core_(core) {}
    void on_device(const device_record& r) override { device = core_.restore_device(r); }
    void on_cooldown(const cooldown_record& r) override { core_.restore_cooldown(r); }
    void on_id(std::uint64_t id_hash) override { core_.restore_id(id_hash); }
    std::uint32_t device = string_interner::npos;

private:
    alert_core& core_;
};

}  // namespace

std::size_t redis_store::find_or_add(std::string_view account, std::string_view device,
                                     std::uint64_t h) {
    const std::size_t mask = batch_.table.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
        const std::uint32_t slot = batch_.table[i];
        if (slot == 0) {
            batch_.devices.push_back({account, device, h, string_interner::npos});
            batch_.table[i] = static_cast<std::uint32_t>(batch_.devices.size());
            return batch_.devices.size() - 1;
        }
        const batch_device& d = batch_.devices[slot - 1];
        if (d.hash == h && d.account == account && d.device == device) return slot - 1;
    }
}

void redis_store::collect_keys(const alert_core& core, const std::vector<etag>& batch) {
    batch_.devices.clear();
    batch_.id_args.clear();
    batch_.id_count = 0;
    batch_.id_hashes.clear();
    // Room for the batch and the due devices outside it (the table grows below if need be).
    std::size_t size = 64;
    while (size < 2 * batch.size() + 64) size *= 2;
    batch_.table.assign(size, 0);
    batch_.max_ts = -std::numeric_limits<double>::infinity();
    for (const etag& e : batch) {
        if (e.ts > batch_.max_ts) batch_.max_ts = e.ts;
        const std::uint64_t h = alert_core::device_key_hash(e.account, e.device);
        const std::size_t before = batch_.devices.size();
        const std::size_t at = find_or_add(e.account, e.device, h);
        if (batch_.devices.size() > before)
            batch_.devices[at].index = core.find_device(e.account, e.device, h);
        // Heartbeats (most of the stream) are not looked up in the shared window: one that
        // changed its device set the device's stale horizon and last id, which catch its
        // re-delivery (stale, or same time and id); one that changed nothing changes nothing.
        if (e.id.empty() || e.type == etag_type::heartbeat) continue;
        const std::uint64_t id = alert_core::id_hash(h, e.id);
        batch_.id_hashes.push_back(id);
        resp_id_key(batch_.id_args, options_.prefix, id);
        ++batch_.id_count;
    }
    // The bridges and cameras of the batch's devices are read with them (and, like them,
    // skipped when known to have no record).
    if (!links_.empty()) add_linked(core, 0, batch_.devices.size(), false);
    batch_.batch_devices = batch_.devices.size();
}

void redis_store::reset_knowledge() {
    std::fill(known_.begin(), known_.end(), UNKNOWN);
    log_valid_ = false;
}

void redis_store::mark(std::uint32_t index, std::uint8_t what) {
    if (index == string_interner::npos) return;
    if (index >= known_.size())
        known_.resize(std::max<std::size_t>(index + 1, known_.size() * 2), UNKNOWN);
    known_[index] = what;
}

// Devices without a record. Most of a fleet never changes (same-state heartbeats), so has no
// record, and reading their absent keys was most of each batch's read. A process remembers the
// devices it found without a record, and skips them, as long as the creations log (every
// commit that creates records appends their keys, with the device counter after it: n, and
// how many it created: c) shows that none of them got one since. Each read pipelines, before
// the device MGET, GET of the counter (at T0) and XRANGE of the log after the last entry
// followed (at T1). The log vouches for the skipped devices when its entries chain (each
// entry's n - c is the previous n) from the counter as of the last position, and the counter
// at T0 is no more than the last n: then every record created before T0 is named in an entry,
// and a skipped device not named had no record at T0 — its state as of T0, as valid for the
// core as the others' as of the MGET, since every device is decided on its own record and a
// write is a compare-and-set on it. A device the log names is read (a second trip, rarely).
// When the log cannot vouch (a gap: trimmed past the position, a record created by a writer
// that does not log, a counter that went back), everything is forgotten and the skipped
// devices are read too. Returns whether the knowledge holds.
bool redis_store::follow_log(const alert_core& core, const redisReply* entries,
                             std::uint64_t devices_now) {
    if (entries->type != REDIS_REPLY_ARRAY) throw redis_error("redis: unexpected reply to XRANGE");
    std::uint64_t total = log_valid_ ? log_total_ : 0;
    bool chained = log_valid_;
    bool any = false;
    std::string_view last_id;
    for (std::size_t e = 0; e < entries->elements; ++e) {
        const log_entry entry = take_log_entry(core, entries->element[e]);
        last_id = entry.id;
        if (entry.n < entry.c || entry.n - entry.c != total) chained = false;
        total = entry.n;
        any = true;
    }
    // A log read with XREVRANGE (no position yet) gives the latest entry only: a start.
    const bool full = log_valid_ && entries->elements < LOG_READ_MAX;
    if (!last_id.empty()) log_id_.assign(last_id);
    if (log_id_.empty()) log_id_ = "0-0";
    if (chained && full && devices_now <= total && devices_now >= log_total_) {
        log_total_ = total;
        return true;
    }
    // Start again from here: the devices read from now on are known as of this position (the
    // latest entry at T1; the counter as of it, or at T0 if higher: records created unlogged).
    if (log_valid_) ++counters_.log_resets;
    reset_knowledge();
    log_total_ = any ? std::max(total, devices_now) : devices_now;
    log_valid_ = entries->elements < LOG_READ_MAX;  // else: no start yet, XREVRANGE next time
    return false;
}

// One entry of the creations log: its id, n and c; each key it names marks its device as
// having a record.
redis_store::log_entry redis_store::take_log_entry(const alert_core& core,
                                                   const redisReply* entry) {
    if (!entry || entry->type != REDIS_REPLY_ARRAY || entry->elements != 2 || !entry->element[0] ||
        entry->element[0]->type != REDIS_REPLY_STRING || !entry->element[1] ||
        entry->element[1]->type != REDIS_REPLY_ARRAY) {
        throw redis_error("redis: unexpected entry in the creations log");
    }
    log_entry out;
    out.id = std::string_view(entry->element[0]->str, entry->element[0]->len);
    const redisReply* fields = entry->element[1];
    for (std::size_t f = 0; f + 1 < fields->elements; f += 2) {
        const redisReply* name = fields->element[f];
        const redisReply* value = fields->element[f + 1];
        if (!name || !value || name->type != REDIS_REPLY_STRING ||
            value->type != REDIS_REPLY_STRING) {
            throw redis_error("redis: unexpected entry in the creations log");
        }
        const std::string_view field(name->str, name->len);
        const std::string_view text(value->str, value->len);
        if (field == "n") {
            std::from_chars(text.data(), text.data() + text.size(), out.n);
        } else if (field == "c") {
            std::from_chars(text.data(), text.data() + text.size(), out.c);
        } else if (field == "k") {
            std::string_view account, device;
            if (parse_redis_device_key(options_.prefix, text, account, device)) {
                mark(core.find_device(account, device), PRESENT);
            }
        }
    }
    return out;
}

void redis_store::mark_unread_absent(const alert_core& core) {
    // Devices read without a record that the core had not seen: known now, after process().
    if (!batch_.mark_absent) return;
    for (std::uint32_t i : batch_.nil_unknown) {
        const batch_device& d = batch_.devices[i];
        mark(core.find_device(d.account, d.device, d.hash), ABSENT);
    }
    batch_.nil_unknown.clear();
}

void redis_store::read_reconnecting(alert_core& core, double now) {
    const bool reused = client_.connected();
    try {
        read(core, now);
    } catch (const redis_timeout&) {
        throw;  // a Redis that does not answer: the time is spent, no retry
    } catch (const redis_error&) {
        if (!reused) throw;
        // A connection kept from an earlier activation may have died with a Redis restart (or
        // an idle time-out): reads change nothing, so read once more on a fresh connection.
        client_.disconnect();
        batch_.held.clear();
        reset_knowledge();
        remember_touched(core);
        core.forget(touched_);
        touched_.clear();
        read(core, now);
    }
}

// One batch's read, in two round trips at most: the first reads what the batch needs (its
// devices' records, its ids, the log, the due set); the second, only when needed, the records
// the first could not: skipped devices the log named, and due devices outside the batch.
void redis_store::read(alert_core& core, double now) {
    batch_.read.clear();
    batch_.was_notable.clear();
    batch_.held.clear();
    batch_.damaged.clear();
    batch_.damaged_texts.clear();
    batch_.nil_unknown.clear();
    forget_due_devices();
    list_batch_reads();
    const bool load_script = send_first_read(now);
    const first_read first = take_first_read(core, load_script);
    list_second_reads(core, first.knowledge_held, first.due);
    if (!batch_.second.empty()) read_second(core);
}

// Due devices of an earlier attempt: looked up again (a rare case: rebuild the table over the
// batch's devices).
void redis_store::forget_due_devices() {
    if (batch_.devices.size() > batch_.batch_devices) {
        batch_.devices.resize(batch_.batch_devices);
        std::fill(batch_.table.begin(), batch_.table.end(), 0);
        reindex_devices();
    }
    batch_.extra_keys.clear();
}

// Re-inserts every device of batch_.devices into batch_.table (cleared, or grown, by the caller).
void redis_store::reindex_devices() {
    const std::vector<batch_device> all = std::move(batch_.devices);
    batch_.devices.clear();
    for (const batch_device& d : all) {
        batch_.devices[find_or_add(d.account, d.device, d.hash)].index = d.index;
    }
}

// The batch's devices to read: all but those known to have no record (batch_.skipped).
void redis_store::list_batch_reads() {
    batch_.read_list.clear();
    batch_.skipped.clear();
    batch_.device_args.clear();
    for (std::uint32_t i = 0; i < batch_.batch_devices; ++i) {
        const batch_device& d = batch_.devices[i];
        if (log_valid_ && d.index < known_.size() && known_[d.index] == ABSENT) {
            batch_.skipped.push_back(i);
            continue;
        }
        batch_.read_list.push_back(i);
        resp_device_key(batch_.device_args, options_.prefix, d.account, d.device);
    }
}

// The first round trip, pipelined: SCRIPT LOAD (first read of a connection), the device
// counter (T0), the creations log (T1), the batch's records, its ids, the due set and its
// size. The replies are kept in batch_.held. Returns whether the script was loaded.
bool redis_store::send_first_read(double now) {
    client_.ensure_connected();
    std::size_t queued = 0;
    const bool load_script = script_connection_ != client_.connection_count();
    if (load_script) {
        client_.append({"SCRIPT", "LOAD", REDIS_COMMIT_SCRIPT});
        ++queued;
    }
    client_.append({"GET", devices_key_});           // T0, then the log at T1 (follow_log)
    client_.append({"GET", silences_version_key_});  // a new or ended silence: read them all
    ++queued;
    std::string from = "(" + log_id_;
    const std::string count = std::to_string(LOG_READ_MAX);
    if (log_valid_) {
        client_.append({"XRANGE", log_key_, from, "+", "COUNT", count});
    } else {
        client_.append({"XREVRANGE", log_key_, "+", "-", "COUNT", "1"});
    }
    queued += 2;
    if (!batch_.read_list.empty()) {
        resp_head(batch_.head, batch_.read_list.size() + 1, "MGET");
        client_.append_resp({batch_.head, batch_.device_args});
        ++queued;
    }
    if (batch_.id_count > 0) {
        resp_head(batch_.head, batch_.id_count + 1, "MGET");
        client_.append_resp({batch_.head, batch_.id_args});
        ++queued;
    }
    // With bridges, up to the batch's latest ts: an event after `now` may mature a camera's
    // hold, and with it its bridge's (whose cameras the second trip then reads).
    std::string max;
    batch_.due_horizon = links_.empty() ? now : std::max(now, batch_.max_ts);
    append_redis_number(max, batch_.due_horizon);
    client_.append({"ZRANGEBYSCORE", due_key_, "-inf", max});
    client_.append({"ZCARD", due_key_});
    batch_.held = client_.replies(queued + 2);
    return load_script;
}

// The first round trip's replies, in the order send_first_read queued them.
redis_store::first_read redis_store::take_first_read(alert_core& core, bool load_script) {
    std::size_t next = 0;
    if (load_script) {
        const redisReply* sha = batch_.held[next++].get();
        if (sha->type != REDIS_REPLY_STRING)
            throw redis_error("redis: unexpected reply to SCRIPT LOAD");
        script_sha_.assign(sha->str, sha->len);
        script_connection_ = client_.connection_count();
    }
    batch_.read_devices = integer_of(batch_.held[next++].get());
    // Before any record is restored: the due times restore_device computes depend on them.
    load_silences(core, batch_.held[next++].get());
    first_read first;
    first.knowledge_held = follow_log(core, batch_.held[next++].get(), batch_.read_devices);
    batch_.mark_absent = log_valid_;
    counters_.skipped += batch_.skipped.size();
    if (!batch_.read_list.empty()) {
        const redisReply* values = batch_.held[next++].get();
        expect_array(values, batch_.read_list.size(), "MGET");
        restore_records(core, values, batch_.read_list);
    }
    if (batch_.id_count > 0) {
        const redisReply* flags = batch_.held[next++].get();
        expect_array(flags, batch_.id_count, "MGET");
        for (std::size_t i = 0; i < batch_.id_count; ++i) {
            const redisReply* flag = flags->element[i];
            if (flag && flag->type == REDIS_REPLY_STRING) core.restore_id(batch_.id_hashes[i]);
        }
    }
    first.due = batch_.held[next++].get();
    if (first.due->type != REDIS_REPLY_ARRAY)
        throw redis_error("redis: unexpected reply to ZRANGE");
    batch_.read_pending = integer_of(batch_.held[next++].get());
    return first;
}

// The records an MGET read, for the devices at `positions` in batch_.devices (in its order): each
// restored into the core; a nil one, when this attempt's nil replies prove absence, marks a
// device of the batch known to have no record (or, not in the core yet, marked after process()).
void redis_store::restore_records(alert_core& core, const redisReply* values,
                                  const std::vector<std::uint32_t>& positions) {
    for (std::size_t j = 0; j < positions.size(); ++j) {
        const std::uint32_t i = positions[j];
        const redisReply* value = values->element[j];
        if (value && value->type == REDIS_REPLY_STRING) {
            restore(core, i, value);
        } else if (batch_.mark_absent && i < batch_.batch_devices) {
            if (batch_.devices[i].index != string_interner::npos) {
                mark(batch_.devices[i].index, ABSENT);
            } else {
                batch_.nil_unknown.push_back(i);
            }
        }
    }
}

// What the second round trip reads (batch_.second): skipped devices the log named (or all of them,
// when it could not vouch), and due holds of devices outside the batch.
void redis_store::list_second_reads(const alert_core& core, bool knowledge_held,
                                    const redisReply* due) {
    batch_.second.clear();
    for (std::uint32_t i : batch_.skipped) {
        const std::uint32_t index = batch_.devices[i].index;
        if (!knowledge_held || known_[index] != ABSENT) batch_.second.push_back(i);
    }
    counters_.skipped -= batch_.second.size();
    batch_.extra_keys.reserve(
        due->elements);  // batch_.devices views into these strings: no reallocation
    batch_.due_positions.clear();
    batch_.due_all.clear();
    for (std::size_t i = 0; i < due->elements; ++i) {
        const redisReply* member = due->element[i];
        if (!member || member->type != REDIS_REPLY_STRING)
            throw redis_error("redis: unexpected reply to ZRANGE");
        add_due_device(std::string_view(member->str, member->len));
    }
    // A due device's bridge and cameras, also when it is in batch_.devices already (a bridge read
    // only as a camera's has its cameras read now that it is due).
    for (std::uint32_t at : batch_.due_positions) add_linked(core, at, at + 1, true);
}

// A device the due set names: added to batch_.devices and batch_.second unless it is in the batch
// (read already, or known without a record as of T0, as a device read without one by the MGET is as
// of that read: a hold due since is matured later).
void redis_store::add_due_device(std::string_view key) {
    std::string_view account;
    std::string_view device;
    if (!parse_redis_device_key(options_.prefix, key, account, device)) {
        batch_.damaged.add(key, "a member of " + due_key_ +
                                    " that is no device key (left there: remove it "
                                    "with ZREM)");
        return;
    }
    const std::uint64_t h = alert_core::device_key_hash(account, device);
    grow_table();
    const std::size_t before = batch_.devices.size();
    const std::size_t at = find_or_add(account, device, h);
    if (!links_.empty()) batch_.due_positions.push_back(static_cast<std::uint32_t>(at));
    batch_.due_all.push_back(static_cast<std::uint32_t>(at));
    if (batch_.devices.size() == before) return;
    batch_.extra_keys.emplace_back(key);
    parse_redis_device_key(options_.prefix, batch_.extra_keys.back(), batch_.devices[at].account,
                           batch_.devices[at].device);
    batch_.second.push_back(static_cast<std::uint32_t>(at));
}

// The second round trip: the records of batch_.second (one MGET), kept in batch_.held.
void redis_store::read_second(alert_core& core) {
    std::vector<std::string_view> args{"MGET"};
    std::vector<std::string> keys;
    keys.reserve(batch_.second.size());
    for (std::uint32_t i : batch_.second) {
        keys.push_back(
            redis_device_key(options_.prefix, batch_.devices[i].account, batch_.devices[i].device));
    }
    args.insert(args.end(), keys.begin(), keys.end());
    client_.append(args);
    std::vector<redis_reply> values = client_.replies(1);
    expect_array(values[0].get(), batch_.second.size(), "MGET");
    restore_records(core, values[0].get(), batch_.second);
    batch_.held.push_back(std::move(values[0]));
}

// A text that is no record (damaged_keys.hpp) is skipped: the device is decided as never seen,
// and its first change replaces the text (compared as read, like any record).
void redis_store::restore(alert_core& core, std::uint32_t position, const redisReply* value) {
    if (!value || value->type != REDIS_REPLY_STRING) return;  // never changed: a blank device
    const batch_device& d = batch_.devices[position];
    const std::string_view text(value->str, value->len);
    indexing_restorer restorer(core);
    if (!decode_redis_value(text, d.account, d.device, restorer)) {
        batch_.damaged.add(
            redis_device_key(options_.prefix, d.account, d.device),
            "holds no device record (decided as a device never seen; its next change "
            "replaces it)");
        batch_.damaged_texts.emplace(position, text);
        return;
    }
    if (restorer.device == string_interner::npos) return;  // its account left the config
    touched_.push_back(restorer.device);
    if (device_notable(core.slot(restorer.device))) batch_.was_notable.push_back(restorer.device);
    mark(restorer.device, PRESENT);
    batch_.read.emplace(restorer.device, text);
}

// After process(): a device whose text is no record and that the core now knows (the batch
// named it) is compared against that text by the commit, which replaces it.
void redis_store::keep_damaged_texts(alert_core& core) {
    for (const auto& [position, text] : batch_.damaged_texts) {
        const batch_device& d = batch_.devices[position];
        const std::uint32_t index = core.find_device(d.account, d.device, d.hash);
        if (index == string_interner::npos) continue;
        batch_.read.emplace(index, text);
        mark(index, PRESENT);
    }
}

// The text of the device at `at` in batch_.devices when it was no record ("": it was none, or one):
// a checked device the core does not know is compared as that text.
std::string_view redis_store::damaged_text_at(std::uint32_t at) const {
    const auto it = batch_.damaged_texts.find(at);
    return it == batch_.damaged_texts.end() ? std::string_view() : it->second;
}

// Bridges. A camera's decisions read its bridge's record (its Offline waits for the bridge's,
// or comes holds.offline after the bridge's return), and a bridge's read its cameras' (its
// Offline inhibits those down with it; its return reschedules them). So every device read —
// for the batch or for a due time — brings the records of its bridge and of its cameras into
// the same read (the batch's in the first MGET, the due devices' in the second), and a commit
// that changes a device compares the records of its bridge and cameras as read too (and sets
// their due times again: they depend on the changed record). A container that changed one of
// them in between makes the commit conflict, and the batch is decided again. The bridge a
// camera's hold waits on is due no later than the camera, so it is read as a due device (with
// its cameras, even when it was read as a camera's already) whenever the core may send its
// Offline. A config without bridges has no links (bridge_links.hpp): nothing is looked up.
//
// Adds to batch_.devices the bridge and cameras of the devices at [from, to) not in it yet (and,
// for the second read, to batch_.second).
void redis_store::add_linked(const alert_core& core, std::size_t from, std::size_t to,
                             bool second) {
    for (std::size_t i = from; i < to; ++i) {
        const batch_device& d = batch_.devices[i];
        const bridge_links::range linked = d.index == string_interner::npos
                                               ? links_.of(d.account, d.device, d.hash)
                                               : links_of_seen(core, d.index);
        for (const bridge_links::linked& t : linked) {
            grow_table();  // may move batch_.devices (d is not used after)
            const std::size_t before = batch_.devices.size();
            const std::size_t at = find_or_add(t.account, t.device, t.hash);
            if (batch_.devices.size() == before) continue;
            batch_.devices[at].index = linked_device(core, t);
            if (second) batch_.second.push_back(static_cast<std::uint32_t>(at));
        }
    }
}

// The links of a device the core has seen, by its config index. (Looked up by names, the links
// and linked devices of a fleet behind bridges were most of a batch's CPU: perf of
// bench/alerts/redis_bench --bridge-size 20.)
bridge_links::range redis_store::links_of_seen(const alert_core& core, std::uint32_t index) const {
    const std::int32_t cfg = core.slot(index).cfg;
    return cfg < 0 ? bridge_links::range{} : links_.of_config(static_cast<std::uint32_t>(cfg));
}

// The core's index of a linked device (npos: not seen yet).
std::uint32_t redis_store::linked_device(const alert_core& core, const bridge_links::linked& t) {
    return t.cfg == bridge_links::NO_CONFIG ? core.find_device(t.account, t.device, t.hash)
                                            : core.configured_device(t.cfg);
}

// Keeps batch_.table at most half full: rebuilds it twice as large over every device so far.
void redis_store::grow_table() {
    if (batch_.devices.size() * 2 + 2 <= batch_.table.size()) return;
    batch_.table.assign(batch_.table.size() * 2, 0);
    reindex_devices();
}

// The position of a device in batch_.devices, or npos when this batch did not read it.
std::size_t redis_store::find_position(std::string_view account, std::string_view device,
                                       std::uint64_t h) const {
    const std::size_t mask = batch_.table.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
        const std::uint32_t slot = batch_.table[i];
        if (slot == 0) return std::string::npos;
        const batch_device& d = batch_.devices[slot - 1];
        if (d.hash == h && d.account == account && d.device == device) return slot - 1;
    }
}

// batch_.checks: the bridges and cameras of the devices the commit writes (`written`, sorted) that
// it does not write itself, and that this batch read (a bridge read only as a camera's was not
// due: the core decided nothing of it that needs its cameras, which are not read then).
void redis_store::list_checks(const alert_core& core, const std::vector<std::uint32_t>& written) {
    for (std::uint32_t d : written) {
        for (const bridge_links::linked& t : links_of_seen(core, d)) {
            const std::size_t at = find_position(t.account, t.device, t.hash);
            if (at == std::string::npos) continue;
            const std::uint32_t index = linked_device(core, t);
            if (index != string_interner::npos &&
                std::binary_search(written.begin(), written.end(), index)) {
                continue;
            }
            batch_.checks.push_back(static_cast<std::uint32_t>(at));
        }
    }
    std::sort(batch_.checks.begin(), batch_.checks.end());
    batch_.checks.erase(std::unique(batch_.checks.begin(), batch_.checks.end()),
                        batch_.checks.end());
}

}  // namespace alerts
