// outbox_stream.cpp — see outbox_stream.hpp.
#include "gateway/outbox/outbox_stream.hpp"

#include <cstring>

namespace alerts::gateway {

namespace {

const char* const GROUP = "alertgw";
const char* const PROGRESS_TTL_SECONDS = "604800";
constexpr std::size_t KEEP_ALIVE_CHUNK = 1000;

std::string text(const redisReply* reply) {
    return reply && (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS)
               ? std::string(reply->str, reply->len)
               : std::string();
}

outbox_record record_of(const redisReply* item) {
    outbox_record record;
    record.id = text(item->element[0]);
    const redisReply* fields = item->elements > 1 ? item->element[1] : nullptr;
    if (!fields || fields->type != REDIS_REPLY_ARRAY) {
        record.trimmed = true;
        return record;
    }
    for (std::size_t field = 0; field + 1 < fields->elements; field += 2) {
        const std::string name = text(fields->element[field]);
        if (name == "key") record.dedup_key = text(fields->element[field + 1]);
        if (name == "n") record.notification = text(fields->element[field + 1]);
        if (name == "only") record.only = text(fields->element[field + 1]);
        if (name == "to") record.to = text(fields->element[field + 1]);
    }
    return record;
}

/// [[id, [field, value, ...]], ...] (a nil field list: trimmed away meanwhile).
std::vector<outbox_record> records_of(const redisReply* list) {
    std::vector<outbox_record> records;
    if (!list || list->type != REDIS_REPLY_ARRAY) return records;
    for (std::size_t i = 0; i < list->elements; ++i) {
        const redisReply* item = list->element[i];
        if (!item || item->type != REDIS_REPLY_ARRAY || item->elements < 1) continue;
        outbox_record record = record_of(item);
        if (!record.id.empty()) records.push_back(std::move(record));
    }
    return records;
}

/// XREADGROUP's [[stream, entries]] → the entries.
const redisReply* first_stream_entries(const redisReply* reply) {
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) return nullptr;
    const redisReply* stream = reply->element[0];
    if (!stream || stream->type != REDIS_REPLY_ARRAY || stream->elements != 2) return nullptr;
    return stream->element[1];
}

}  // namespace

outbox_stream::outbox_stream(redis_client& redis, const std::string& prefix, std::string consumer)
    : redis_(redis),
      prefix_(prefix),
      outbox_(prefix + "outbox"),
      dead_letters_(prefix + "deadletter"),
      consumer_(std::move(consumer)) {}

void outbox_stream::create_group() {
    redis_.append({"XGROUP", "CREATE", outbox_, GROUP, "0", "MKSTREAM"});
    redis_reply reply = redis_.reply_or_error();
    if (reply->type == REDIS_REPLY_ERROR && std::strncmp(reply->str, "BUSYGROUP", 9) != 0) {
        throw redis_error("XGROUP CREATE " + outbox_ + ": " + std::string(reply->str, reply->len));
    }
}

std::vector<outbox_record> outbox_stream::read_new(std::size_t count, int block_ms) {
    ask_new(count, block_ms);
    return new_records();
}

void outbox_stream::ask_new(std::size_t count, int block_ms) {
    const std::string how_many = std::to_string(count);
    if (block_ms > 0) {
        const std::string block = std::to_string(block_ms);
        redis_.append({"XREADGROUP", "GROUP", GROUP, consumer_, "COUNT", how_many, "BLOCK", block,
                       "STREAMS", outbox_, ">"});
    } else {
        redis_.append(
            {"XREADGROUP", "GROUP", GROUP, consumer_, "COUNT", how_many, "STREAMS", outbox_, ">"});
    }
    redis_.send_queued();
}

std::vector<outbox_record> outbox_stream::new_records() {
    redis_reply reply = redis_.reply_or_error();
    if (reply->type == REDIS_REPLY_ERROR) {
        const std::string error(reply->str, reply->len);
        if (error.rfind("NOGROUP", 0) != 0) throw redis_error("XREADGROUP: " + error);
        create_group();  // the stream or the group was deleted: made again
        return {};
    }
    return records_of(first_stream_entries(reply.get()));
}

void outbox_stream::confirm_replicated(int replicas, std::chrono::milliseconds wait) {
    if (replicas <= 0) return;
    redis_.append({"WAIT", std::to_string(replicas), std::to_string(wait.count())});
    const redis_reply reply = redis_.reply();
    const long long confirmed = reply->type == REDIS_REPLY_INTEGER ? reply->integer : -1;
    if (confirmed < replicas) {
        throw redis_error(
            "redis " + redis_.label() +
            ": entries read there not confirmed by a replica (WAIT: " + std::to_string(confirmed) +
            " of " + std::to_string(replicas) + " within " + std::to_string(wait.count()) +
            " ms): not delivered from a primary a failover may discard; read again");
    }
}

std::vector<outbox_record> outbox_stream::read_own_pending(std::string& cursor, std::size_t count) {
    redis_.append({"XREADGROUP", "GROUP", GROUP, consumer_, "COUNT", std::to_string(count),
                   "STREAMS", outbox_, cursor});
    redis_reply reply = redis_.reply();
    std::vector<outbox_record> records = records_of(first_stream_entries(reply.get()));
    if (!records.empty()) cursor = records.back().id;
    return records;
}

std::vector<outbox_record> outbox_stream::claim(std::chrono::milliseconds idle, std::string& cursor,
                                                std::size_t count) {
    redis_.append({"XAUTOCLAIM", outbox_, GROUP, consumer_, std::to_string(idle.count()), cursor,
                   "COUNT", std::to_string(count)});
    redis_reply reply = redis_.reply();
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2) {
        cursor = "0-0";
        return {};
    }
    cursor = text(reply->element[0]);
    // Ids whose entries were trimmed away come third: XAUTOCLAIM dropped them from the
    // pending list, so there is nothing to deliver nor to acknowledge.
    return records_of(reply->element[1]);
}

std::vector<std::map<std::string, std::string>> outbox_stream::progress_of(
    const std::vector<std::string>& ids) {
    for (const std::string& id : ids) redis_.append({"HGETALL", progress_key(id)});
    std::vector<redis_reply> replies = redis_.replies(ids.size());
    std::vector<std::map<std::string, std::string>> out(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const redisReply* reply = replies[i].get();
        if (!reply || reply->type != REDIS_REPLY_ARRAY) continue;
        for (std::size_t field = 0; field + 1 < reply->elements; field += 2) {
            out[i][text(reply->element[field])] = text(reply->element[field + 1]);
        }
    }
    return out;
}

void outbox_stream::keep_alive(const std::vector<std::string>& ids) {
    std::size_t commands = 0;
    for (std::size_t start = 0; start < ids.size(); start += KEEP_ALIVE_CHUNK) {
        std::vector<std::string_view> args = {"XCLAIM", outbox_, GROUP, consumer_, "0"};
        const std::size_t end = std::min(ids.size(), start + KEEP_ALIVE_CHUNK);
        for (std::size_t i = start; i < end; ++i) args.push_back(ids[i]);
        args.push_back("JUSTID");
        redis_.append(args);
        ++commands;
    }
    if (commands > 0) redis_.replies(commands);
}

group_backlog outbox_stream::backlog() {
    redis_.append({"XINFO", "GROUPS", outbox_});
    redis_reply reply = redis_.reply_or_error();
    group_backlog found;
    if (reply->type != REDIS_REPLY_ARRAY) return found;
    for (std::size_t i = 0; i < reply->elements; ++i) {
        const redisReply* group = reply->element[i];
        if (!group || group->type != REDIS_REPLY_ARRAY) continue;
        group_backlog candidate;
        bool ours = false;
        for (std::size_t field = 0; field + 1 < group->elements; field += 2) {
            const std::string name = text(group->element[field]);
            const redisReply* value = group->element[field + 1];
            const bool number = value && value->type == REDIS_REPLY_INTEGER;
            if (name == "name") ours = text(value) == GROUP;
            if (name == "lag" && number) candidate.lag = static_cast<double>(value->integer);
            if (name == "pending" && number)
                candidate.pending = static_cast<double>(value->integer);
        }
        if (ours) found = candidate;
    }
    return found;
}

long long outbox_stream::write(const ledger_writes& writes, std::size_t dead_letter_max) {
    std::size_t commands = 0;
    for (const dead_letter& letter : writes.dead_letters) {
        std::vector<std::string_view> args = {
            "XADD",           dead_letters_, "*",           "entry", letter.entry_id, "key",
            letter.dedup_key, "target",      letter.target, "error", letter.error};
        const std::string attempts = std::to_string(letter.attempts);
        if (!letter.recipient.empty()) {
            args.push_back("recipient");
            args.push_back(letter.recipient);
        }
        args.insert(args.end(), {"attempts", attempts, "n", letter.notification});
        redis_.append(args);
        ++commands;
    }
    const bool trim = !writes.dead_letters.empty();
    if (trim) {
        redis_.append({"XTRIM", dead_letters_, "MAXLEN", std::to_string(dead_letter_max)});
        ++commands;
    }
    for (const auto& [id, fields] : writes.progress) {
        const std::string key = progress_key(id);
        std::vector<std::string_view> args = {"HSET", key};
        for (const auto& [name, word] : fields) args.insert(args.end(), {name, word});
        redis_.append(args);
        redis_.append({"EXPIRE", key, PROGRESS_TTL_SECONDS});
        commands += 2;
    }
    for (const std::string& id : writes.acknowledge) {
        redis_.append({"XACK", outbox_, GROUP, id});
        ++commands;
    }
    for (const std::string& id : writes.forget_progress) {
        redis_.append({"DEL", progress_key(id)});
        ++commands;
    }
    if (commands == 0) return 0;
    const std::vector<redis_reply> replies = redis_.replies(commands);
    if (!trim) return 0;
    const redisReply* trimmed = replies[writes.dead_letters.size()].get();
    return trimmed && trimmed->type == REDIS_REPLY_INTEGER ? trimmed->integer : 0;
}

}  // namespace alerts::gateway
