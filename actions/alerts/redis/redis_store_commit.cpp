// redis_store_commit.cpp — a batch's commit (see redis_store.hpp): what it writes and compares,
// its arguments (commit_args.hpp), the script's run and its reply.
#include "core/device_status.hpp"
#include "redis/redis_store.hpp"

#include <algorithm>
#include <iostream>
#include <limits>

#include "core/result_json.hpp"
#include "core/string_interner.hpp"
#include "redis/redis_records.hpp"
#include "redis/redis_scripts.hpp"
#include "redis/reply_values.hpp"
#include "redis/resp_write.hpp"

namespace alerts {

// The commit's key at `index` (1-based, as the script counts): a written device, then a checked
// one.
std::string redis_store::key_at(const alert_core& core, std::size_t index,
                                const std::vector<std::uint32_t>& devices) const {
    if (index >= 1 && index <= devices.size()) {
        const std::uint32_t d = devices[index - 1];
        return redis_device_key(options_.prefix, core.account_id(core.slot(d).account),
                                core.device_id(d));
    }
    const std::size_t check = index - devices.size() - 1;
    if (index == 0 || check >= batch_.checks.size()) return std::string();
    const batch_device& d = batch_.devices[batch_.checks[check]];
    return redis_device_key(options_.prefix, d.account, d.device);
}

// A record that changed since it was read: what this process knew of it (no record, say) no
// longer holds, so the next attempt reads it whatever the creations log says.
void redis_store::forget_conflicting(const alert_core& core, const redisReply* indices,
                                     const std::vector<std::uint32_t>& devices) {
    if (!indices || indices->type != REDIS_REPLY_ARRAY) return;
    for (std::size_t i = 0; i < indices->elements; ++i) {
        const std::uint64_t at = integer_of(indices->element[i]);
        if (at >= 1 && at <= devices.size()) {
            mark(devices[at - 1], UNKNOWN);
        } else if (at > devices.size() && at - devices.size() - 1 < batch_.checks.size()) {
            const batch_device& d = batch_.devices[batch_.checks[at - devices.size() - 1]];
            mark(core.find_device(d.account, d.device, d.hash), UNKNOWN);
        }
    }
}

// Device keys of another type than a string, which the commit replaced by their records.
void redis_store::note_replaced(const alert_core& core, const redisReply* indices,
                                const std::vector<std::uint32_t>& devices) {
    if (!indices || indices->type != REDIS_REPLY_ARRAY) return;
    for (std::size_t i = 0; i < indices->elements; ++i) {
        batch_.damaged.add(key_at(core, integer_of(indices->element[i]), devices),
                           "was no string (another type): replaced by the device's record");
    }
}

void redis_store::remember_touched(const alert_core& core) {
    // The batch's devices the core resolved, and what it changed (the restored ones are in
    // touched_ already): together every device whose state differs from a blank one.
    core.batch_devices(touched_);
    const change_set& changes = core.changes();
    touched_.insert(touched_.end(), changes.devices.begin(), changes.devices.end());
}

// The commit (redis_scripts.hpp): what the batch changed, written compare-and-set in one
// script. False when a record changed since it was read (nothing written).
bool redis_store::commit_changes(const alert_core& core, batch_result& result) {
    list_commit_devices(core, result);
    const std::vector<std::uint32_t>& devices = batch_.commit_devices;
    if (devices.empty() && core.changes().ids.empty()) {
        result.stats.pending = batch_.read_pending;
        result.stats.devices = batch_.read_devices;
        return true;
    }
    batch_.checks.clear();
    if (!links_.empty()) list_checks(core, devices);
    gather_commit(core, result);
    batch_.command.clear();
    const std::size_t args =
        append_commit_args(batch_.command, commit_settings_of_store(), batch_.contents);
    const redis_reply reply = run_commit(2 + args);  // EVALSHA and the script's SHA first
    return take_commit_reply(core, reply.get(), devices, batch_.contents.notes.size(), result);
}

// The devices the commit writes (core indices, sorted): those the core changed, those whose
// cooldowns it changed, and every device that raised an alert (its last event), even without
// a cooldown: the compare-and-set on its record is what keeps two containers from both
// sending it.
void redis_store::list_commit_devices(const alert_core& core, const batch_result& result) {
    const change_set& changes = core.changes();
    std::vector<std::uint32_t>& devices = batch_.commit_devices;
    devices.assign(changes.devices.begin(), changes.devices.end());
    for (std::uint64_t key : changes.cooldowns) devices.push_back(core.cooldown_device(key));
    for (const notification& n : result.notifications) devices.push_back(n.device);
    // A device whose notification was held back: its explanation is committed with its record
    // (compare-and-set), so two containers do not both write it.
    for (const held_back& h : result.held) devices.push_back(h.device);
    // A due device with nothing due (a silence ended early moved its time to now): its due
    // time is written again, or it would be read by every batch. Only one whose record was
    // read: a member of the due set with no record is left as it is (a damaged key).
    for (std::uint32_t at : batch_.due_all) {
        const std::uint32_t index = batch_.devices[at].index;
        if (index != string_interner::npos && batch_.read.count(index) != 0 &&
            core.next_due(index) > batch_.due_horizon) {
            devices.push_back(index);
        }
    }
    std::sort(devices.begin(), devices.end());
    devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
}

// The keys and bounds every commit shares (commit_args.hpp).
commit_settings redis_store::commit_settings_of_store() const {
    commit_settings s;
    s.prefix = options_.prefix;
    s.due_key = due_key_;
    s.devices_key = devices_key_;
    s.log_key = log_key_;
    s.outbox_key = outbox_key_;
    s.id_ttl = options_.id_ttl;
    s.log_length = options_.log_length;
    s.outbox_maxlen = options_.outbox_maxlen;
    s.outbox_trim_above = options_.outbox_trim_above;
    s.now_key = now_key_;
    return s;
}

// The commit's contents: per written device its record as read, its new record and due time;
// per checked device its record as read and due time; the ids; the outbox's notifications.
void redis_store::gather_commit(const alert_core& core, const batch_result& result) {
    commit_contents& c = batch_.contents;
    c.clear();
    encode_records(core);
    std::size_t start = 0;
    for (std::size_t i = 0; i < batch_.commit_devices.size(); ++i) {
        const std::uint32_t d = batch_.commit_devices[i];
        const std::size_t end = batch_.record_ends[i];
        c.writes.push_back({core.account_id(core.slot(d).account), core.device_id(d),
                            record_as_read(d),
                            std::string_view(batch_.records).substr(start, end - start),
                            core.next_due(d)});  // a hold, a flapping's end, a reminder
        start = end;
    }
    for (std::uint32_t at : batch_.checks) {
        const batch_device& d = batch_.devices[at];
        const std::uint32_t index = core.find_device(d.account, d.device, d.hash);
        const bool known = index != string_interner::npos;
        c.checks.push_back(
            {d.account, d.device,
             known && batch_.read.count(index) ? record_as_read(index) : damaged_text_at(at),
             known ? core.next_due(index) : std::numeric_limits<double>::infinity()});
    }
    const std::vector<std::uint64_t>& ids = core.changes().ids;
    c.ids.assign(ids.begin(), ids.end());
    if (options_.outbox) gather_notes(core, result);
    gather_extras(core, result);
}

// The console's state and explanations (docs/alerts.md, "State and explanations"): each written
// device's entry in <prefix>now, set while it is notable and removed when it no longer is, and
// each held-back notification pushed onto its device's history.
void redis_store::gather_extras(const alert_core& core, const batch_result& result) {
    std::vector<std::string>& texts = batch_.extra_texts;
    texts.clear();
    std::vector<char> ops;
    std::sort(batch_.was_notable.begin(), batch_.was_notable.end());
    for (std::uint32_t d : batch_.commit_devices) {
        const bool now = device_notable(core.slot(d));
        const bool before =
            std::binary_search(batch_.was_notable.begin(), batch_.was_notable.end(), d);
        if (!now && !before) continue;
        const std::string_view account = core.account_id(core.slot(d).account);
        const std::string_view device = core.device_id(d);
        texts.push_back(std::to_string(account.size()) + ":" + std::string(account) + ":" +
                        std::string(device));
        texts.push_back(now ? device_status_json(core, d) : std::string());
        ops.push_back(now ? 'H' : 'D');
    }
    for (const held_back& h : result.held) {
        const std::string_view account = core.account_id(core.slot(h.device).account);
        texts.push_back(options_.prefix + "why:" + std::to_string(account.size()) + ":" +
                        std::string(account) + ":" + std::string(core.device_id(h.device)));
        texts.push_back(held_back_json(core, h));
        ops.push_back('W');
    }
    // Views only now: the texts no longer move.
    for (std::size_t i = 0; i < ops.size(); ++i) {
        batch_.contents.extras.push_back({ops[i], texts[2 * i], texts[2 * i + 1]});
    }
}

// The new records of the written devices, one after the other in batch_.records.
void redis_store::encode_records(const alert_core& core) {
    redis_value_encoder encoder;
    batch_.records.clear();
    batch_.record_ends.clear();
    for (std::uint32_t d : batch_.commit_devices) {
        core.export_device(d, encoder);
        core.export_cooldowns_of(d, encoder);
        batch_.records += encoder.finish();
        batch_.record_ends.push_back(batch_.records.size());
    }
}

// A device's record as read ("": it had none).
std::string_view redis_store::record_as_read(std::uint32_t index) const {
    const auto it = batch_.read.find(index);
    return it == batch_.read.end() ? std::string_view() : it->second;
}

// Per notification: its dedupKey and the JSON the answer carries for it, as compact text (the
// answer is dumped the same way: the entry's `n` is byte for byte the answer's object).
void redis_store::gather_notes(const alert_core& core, const batch_result& result) {
    std::vector<std::string>& texts = batch_.notes;
    texts.resize(2 * result.notifications.size());
    for (std::size_t i = 0; i < result.notifications.size(); ++i) {
        const notification& n = result.notifications[i];
        texts[2 * i].clear();
        append_notif_key(texts[2 * i], n.key);
        texts[2 * i + 1] = notification_json(core, n).dump(
            -1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    for (std::size_t i = 0; i < result.notifications.size(); ++i) {
        batch_.contents.notes.push_back({texts[2 * i], texts[2 * i + 1]});
    }
}

// EVALSHA of the script loaded on this connection, with batch_.command as its arguments (`args` in
// all); should Redis have lost it (SCRIPT FLUSH), EVAL in the same attempt (which loads it
// again). An error reply throws.
redis_reply redis_store::run_commit(std::size_t args) {
    resp_head(batch_.head, args, "EVALSHA");
    resp_arg(batch_.head, script_sha_);
    client_.append_resp({batch_.head, batch_.command});
    client_.count_round_trip();
    redis_reply reply = client_.reply_or_error();
    if (reply->type == REDIS_REPLY_ERROR &&
        std::string_view(reply->str, reply->len).substr(0, 8) == "NOSCRIPT") {
        resp_head(batch_.head, args, "EVAL");
        resp_arg(batch_.head, REDIS_COMMIT_SCRIPT);
        client_.append_resp({batch_.head, batch_.command});
        reply = std::move(client_.replies(1)[0]);
    }
    if (reply->type == REDIS_REPLY_ERROR) client_.error_reply(std::string(reply->str, reply->len));
    return reply;
}

// The script's reply (redis_scripts.hpp): false when a record changed since it was read.
bool redis_store::take_commit_reply(const alert_core& core, const redisReply* r,
                                    const std::vector<std::uint32_t>& devices, std::size_t m,
                                    batch_result& result) {
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2) {
        throw redis_error("redis: unexpected reply to the commit script");
    }
    if (options_.after_commit) options_.after_commit();
    if (integer_of(r->element[0]) == 0) {
        forget_conflicting(core, r->element[1], devices);
        return false;
    }
    if (r->elements > 4) note_replaced(core, r->element[4], devices);
    ++counters_.commits;
    batch_.wrote = true;
    counters_.outbox_entries += m;
    if (r->elements > 3 && integer_of(r->element[3]) > 0) warn_dropped(integer_of(r->element[3]));
    for (std::uint32_t d : devices) mark(d, PRESENT);
    result.stats.pending = integer_of(r->element[1]);
    result.stats.devices = r->elements > 2 ? integer_of(r->element[2]) : 0;
    if (r->elements > 5 && integer_of(r->element[5]) > 0) {
        batch_.damaged.add(
            now_key_ + " or a " + options_.prefix + "why: key",
            "not of the console's type: " + std::to_string(integer_of(r->element[5])) +
                " state or explanation writes skipped (delete the key)");
    }
    return true;
}

// Entries dropped over the cap were never acknowledged by every gateway (or no gateway reads
// the outbox): loud, but at most one line per 10 s (with the count since the last line).
void redis_store::warn_dropped(std::uint64_t dropped) {
    counters_.outbox_dropped += dropped;
    unwarned_drops_ += dropped;
    const auto now = std::chrono::steady_clock::now();
    if (last_drop_warning_ != std::chrono::steady_clock::time_point{} &&
        now - last_drop_warning_ < std::chrono::seconds(10)) {
        return;
    }
    last_drop_warning_ = now;
    std::cerr << "alerts: warning: the outbox " << outbox_key_ << " is over its cap of "
              << options_.outbox_maxlen << " entries (ALERT_OUTBOX_MAXLEN): dropped the oldest "
              << unwarned_drops_
              << " notifications, which no gateway had acknowledged (is alertgw running? "
                 "set ALERT_OUTBOX=0 if nothing reads the outbox)"
              << std::endl;
    unwarned_drops_ = 0;
}

}  // namespace alerts
