// redis_store.cpp — read, decide, compare-and-set commit (see redis_store.hpp).
#include "redis_store.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <unordered_set>

#include "../core/device_machine.hpp"
#include "../core/string_interner.hpp"
#include "redis_records.hpp"
#include "redis_scripts.hpp"

namespace alerts {

namespace {

std::string number_text(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

std::uint64_t integer_of(const redisReply* r) {
    if (r->type == REDIS_REPLY_INTEGER) return static_cast<std::uint64_t>(r->integer);
    if (r->type == REDIS_REPLY_STRING) return std::strtoull(r->str, nullptr, 10);
    return 0;
}

void expect_array(const redisReply* r, std::size_t n, const char* what) {
    if (r->type != REDIS_REPLY_ARRAY || r->elements != n) {
        throw redis_error(std::string("redis: unexpected reply to ") + what);
    }
}

}  // namespace

redis_store::redis_store(redis_store_options options)
    : options_(std::move(options)),
      client_(options_.url, options_.timeout),
      due_key_(options_.prefix + "due"),
      devices_key_(options_.prefix + "devices") {}

batch_result redis_store::process(alert_core& core, const std::vector<etag>& batch, double now) {
    ++counters_.batches;
    try {
        collect_keys(batch);
        for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
            core.forget(touched_);
            touched_.clear();
            read_reconnecting(core, now);
            batch_result result = core.process(batch, now);
            remember_touched(core);
            if (options_.before_commit) options_.before_commit();
            if (commit_changes(core, result)) return result;
            ++counters_.conflicts;
        }
        throw redis_error("redis " + options_.url.text + ": gave up after " +
                          std::to_string(options_.max_attempts) +
                          " commits lost to other containers");
    } catch (const std::exception& e) {
        ++counters_.failures;
        client_.disconnect();
        remember_touched(core);  // whatever was restored is forgotten before the next batch
        std::cerr << "alerts: state store failed, the activation answers an error and stored "
                     "nothing: "
                  << e.what() << std::endl;
        throw;
    }
}

void redis_store::collect_keys(const std::vector<etag>& batch) {
    keys_.clear();
    id_keys_.clear();
    id_hashes_.clear();
    std::unordered_set<std::string_view> seen;
    std::vector<std::string> keys;
    keys.reserve(batch.size());
    for (const etag& e : batch) {
        keys.push_back(redis_device_key(options_.prefix, e.account, e.device));
        // Heartbeats (most of the stream) are not looked up in the shared window: one that
        // changed its device set the device's stale horizon and last id, which catch its
        // re-delivery (stale, or same time and id); one that changed nothing changes nothing.
        if (e.id.empty() || e.type == etag_type::heartbeat) continue;
        const std::uint64_t h =
            alert_core::id_hash(alert_core::device_key_hash(e.account, e.device), e.id);
        id_hashes_.push_back(h);
        id_keys_.push_back(redis_id_key(options_.prefix, h));
    }
    for (std::string& k : keys) {
        if (seen.insert(k).second) keys_.push_back(std::move(k));
    }
    batch_keys_ = keys_.size();
}

void redis_store::read_reconnecting(alert_core& core, double now) {
    const bool reused = client_.connected();
    try {
        read(core, now);
    } catch (const redis_error&) {
        if (!reused) throw;
        // A connection kept from an earlier activation may have died with a Redis restart (or
        // an idle time-out): reads change nothing, so read once more on a fresh connection.
        client_.disconnect();
        remember_touched(core);
        core.forget(touched_);
        touched_.clear();
        read(core, now);
    }
}

void redis_store::read(alert_core& core, double now) {
    read_.clear();
    keys_.resize(batch_keys_);  // due keys of an earlier attempt: read again below
    std::vector<std::string_view> args;
    std::size_t queued = 0;
    if (!keys_.empty()) {
        args.assign({"MGET"});
        args.insert(args.end(), keys_.begin(), keys_.end());
        client_.append(args);
        ++queued;
    }
    if (!id_keys_.empty()) {
        args.assign({"MGET"});
        args.insert(args.end(), id_keys_.begin(), id_keys_.end());
        client_.append(args);
        ++queued;
    }
    const std::string max = number_text(now);
    client_.append({"ZRANGEBYSCORE", due_key_, "-inf", max});
    client_.append({"ZCARD", due_key_});
    client_.append({"GET", devices_key_});
    const std::vector<redis_reply> replies = client_.replies(queued + 3);

    std::size_t next = 0;
    if (!keys_.empty()) {
        const redisReply* values = replies[next++].get();
        expect_array(values, keys_.size(), "MGET");
        for (std::size_t i = 0; i < keys_.size(); ++i) restore(core, keys_[i], values->element[i]);
    }
    if (!id_keys_.empty()) {
        const redisReply* flags = replies[next++].get();
        expect_array(flags, id_keys_.size(), "MGET");
        for (std::size_t i = 0; i < id_keys_.size(); ++i) {
            if (flags->element[i]->type == REDIS_REPLY_STRING) core.restore_id(id_hashes_[i]);
        }
    }
    const redisReply* due = replies[next++].get();
    if (due->type != REDIS_REPLY_ARRAY) throw redis_error("redis: unexpected reply to ZRANGE");
    read_pending_ = integer_of(replies[next++].get());
    read_devices_ = integer_of(replies[next++].get());

    // Due holds of devices outside the batch: a second round trip, only when there are some.
    std::vector<std::string> extra;
    {
        const std::unordered_set<std::string_view> in_batch(keys_.begin(), keys_.end());
        for (std::size_t i = 0; i < due->elements; ++i) {
            std::string key(due->element[i]->str, due->element[i]->len);
            if (in_batch.count(key) == 0) extra.push_back(std::move(key));
        }
    }
    for (std::string& key : extra) keys_.push_back(std::move(key));
    if (keys_.size() == batch_keys_) return;
    args.assign({"MGET"});
    args.insert(args.end(), keys_.begin() + static_cast<std::ptrdiff_t>(batch_keys_), keys_.end());
    client_.append(args);
    const std::vector<redis_reply> values = client_.replies(1);
    expect_array(values[0].get(), keys_.size() - batch_keys_, "MGET");
    for (std::size_t i = batch_keys_; i < keys_.size(); ++i) {
        restore(core, keys_[i], values[0]->element[i - batch_keys_]);
    }
}

void redis_store::restore(alert_core& core, std::string_view key, const redisReply* value) {
    if (value->type != REDIS_REPLY_STRING) return;  // never changed: a blank device
    std::string_view account;
    std::string_view device;
    const std::string_view text(value->str, value->len);
    core_restorer restorer(core);
    if (!parse_redis_device_key(options_.prefix, key, account, device) ||
        !decode_redis_value(text, account, device, restorer)) {
        throw redis_error("redis: '" + std::string(key) + "' holds no device record: '" +
                          std::string(text.substr(0, 80)) + "'");
    }
    read_.emplace(std::string(key), std::string(text));
}

void redis_store::remember_touched(const alert_core& core) {
    for (const std::string& key : keys_) {
        std::string_view account;
        std::string_view device;
        if (!parse_redis_device_key(options_.prefix, key, account, device)) continue;
        const std::uint32_t i = core.find_device(account, device);
        if (i != string_interner::npos) touched_.push_back(i);
    }
}

bool redis_store::commit_changes(const alert_core& core, batch_result& result) {
    const change_set& changes = core.changes();
    std::vector<std::uint32_t> devices = changes.devices;
    for (std::uint64_t key : changes.cooldowns) devices.push_back(core.cooldown_device(key));
    // A device that raised an alert is written too (its last event), even without a cooldown:
    // the compare-and-set on its record is what keeps two containers from both sending it.
    for (const notification& n : result.notifications) devices.push_back(n.device);
    std::sort(devices.begin(), devices.end());
    devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
    if (devices.empty() && changes.ids.empty()) {
        result.stats.pending = read_pending_;
        result.stats.devices = read_devices_;
        return true;
    }
    std::vector<std::string> keys{due_key_, devices_key_};
    std::vector<std::string> argv{std::to_string(devices.size()), std::to_string(options_.id_ttl)};
    redis_value_encoder encoder;
    for (std::uint32_t d : devices) {
        std::string key = redis_device_key(options_.prefix, core.account_id(core.slot(d).account),
                                           core.device_id(d));
        auto it = read_.find(key);
        argv.push_back(it == read_.end() ? std::string() : it->second);
        core.export_device(d, encoder);
        core.export_cooldowns_of(d, encoder);
        argv.push_back(encoder.finish());
        const device_slot& slot = core.slot(d);
        argv.push_back(hold_pending(slot) ? number_text(hold_due(slot, core.config()->holds))
                                          : std::string());
        keys.push_back(std::move(key));
    }
    for (std::uint64_t id : changes.ids) keys.push_back(redis_id_key(options_.prefix, id));

    std::vector<std::string_view> args{"EVAL", REDIS_COMMIT_SCRIPT};
    const std::string numkeys = std::to_string(keys.size());
    args.push_back(numkeys);
    args.insert(args.end(), keys.begin(), keys.end());
    args.insert(args.end(), argv.begin(), argv.end());
    client_.append(args);
    const std::vector<redis_reply> replies = client_.replies(1);
    const redisReply* r = replies[0].get();
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2) {
        throw redis_error("redis: unexpected reply to the commit script");
    }
    if (integer_of(r->element[0]) == 0) return false;
    ++counters_.commits;
    result.stats.pending = integer_of(r->element[1]);
    result.stats.devices = r->elements > 2 ? integer_of(r->element[2]) : 0;
    return true;
}

}  // namespace alerts
