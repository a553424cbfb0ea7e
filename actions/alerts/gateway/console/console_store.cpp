// console_store.cpp — see console_store.hpp.
#include "gateway/console/console_store.hpp"

#include <algorithm>
#include <random>
#include <tuple>

namespace alerts::gateway {

namespace {

using json = nlohmann::json;

constexpr std::chrono::milliseconds REDIS_TIMEOUT{2000};

// Stores a silence unless SILENCES_MAX are kept (KEYS: the hash, the version; ARGV: id, JSON,
// the most, a new version token).
constexpr const char* ADD_SILENCE = R"lua(
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[4])
return 1
)lua";

// Ends a silence whose text is still ARGV[2], and brings the future timers of the devices it
// may hold back (every one of its account, or every one without an account matcher) to
// ARGV[5], now: the next batch looks at them, announces what the silence held back and writes
// the others' due times again. KEYS: the hash, the version, the due set; ARGV: id, text as
// read, new text, new version token, now, the device keys' prefix ("" for all), the most
// timers moved.
constexpr const char* END_SILENCE = R"lua(
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
local later = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[5], '+inf', 'LIMIT', 0,
                         tonumber(ARGV[7]))
local moved = 0
for _, key in ipairs(later) do
  if ARGV[6] == '' or string.sub(key, 1, #ARGV[6]) == ARGV[6] then
    redis.call('ZADD', KEYS[3], ARGV[5], key)
    moved = moved + 1
  end
end
return moved
)lua";

// A dead letter back to the outbox, removed in the same step (KEYS: the dead letters, the
// outbox; ARGV: the dead letter's id). Returns the new entry's id, or false when it is gone.
constexpr const char* REPLAY = R"lua(
local found = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1])
if #found == 0 then return false end
local f = found[1][2]
local v = {}
for i = 1, #f, 2 do v[f[i]] = f[i + 1] end
local args = {'XADD', KEYS[2], '*', 'key', v['key'] or '', 'n', v['n'] or ''}
if v['target'] and v['target'] ~= 'all' then
  args[#args + 1] = 'only'
  args[#args + 1] = v['target']
  if v['recipient'] and v['recipient'] ~= '' then
    args[#args + 1] = 'to'
    args[#args + 1] = v['recipient']
  end
end
local id = redis.call(unpack(args))
redis.call('XDEL', KEYS[1], ARGV[1])
return id
)lua";

std::string text(const redisReply* r) {
    if (!r) return {};
    if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) return {r->str, r->len};
    if (r->type == REDIS_REPLY_INTEGER) return std::to_string(r->integer);
    return {};
}

std::string new_token() { return random_hex(16); }

// A stream entry [id, [field, value, ...]] as {id, fields...}, `n` parsed when it is JSON.
json entry_json(const redisReply* item, const char* id_name) {
    json j = json::object();
    if (!item || item->type != REDIS_REPLY_ARRAY || item->elements < 2) return j;
    j[id_name] = text(item->element[0]);
    const redisReply* fields = item->element[1];
    if (!fields || fields->type != REDIS_REPLY_ARRAY) return j;
    for (std::size_t i = 0; i + 1 < fields->elements; i += 2) {
        const std::string name = text(fields->element[i]);
        const std::string value = text(fields->element[i + 1]);
        if (name == "n") {
            j["n"] = json::parse(value, nullptr, false);
            if (j["n"].is_discarded()) j["n"] = value;  // not JSON: as it is
        } else if (name == "attempts") {
            j[name] = std::atoi(value.c_str());
        } else {
            j[name] = value;
        }
    }
    return j;
}

}  // namespace

std::string random_hex(std::size_t digits) {
    std::random_device random;
    const char* const hex_digits = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < digits; ++i) out += hex_digits[random() & 15];
    return out;
}

console_store::console_store(redis_url url, std::string prefix)
    : redis_(std::move(url), REDIS_TIMEOUT), prefix_(std::move(prefix)) {}

std::vector<redis_reply> console_store::run(const std::vector<std::vector<std::string>>& commands) {
    for (const auto& command : commands) {
        std::vector<std::string_view> args(command.begin(), command.end());
        redis_.append(args);
    }
    return redis_.replies(commands.size());
}

std::vector<silence> console_store::silences() {
    const auto r = run({{"HGETALL", prefix_ + "silences"}});
    std::vector<silence> out;
    const redisReply* all = r[0].get();
    for (std::size_t i = 0; all->type == REDIS_REPLY_ARRAY && i + 1 < all->elements; i += 2) {
        try {
            out.push_back(silence_from_json(json::parse(text(all->element[i + 1]))));
        } catch (const std::exception&) {
            // Not a silence (a key the API did not write): the monitors skip it too.
        }
    }
    std::sort(out.begin(), out.end(), [](const silence& a, const silence& b) {
        return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
    });
    return out;
}

void console_store::add_silence(const silence& s) {
    const auto r = run({{"EVAL", ADD_SILENCE, "2", prefix_ + "silences", prefix_ + "silences:v",
                         s.id, silence_json(s).dump(), std::to_string(SILENCES_MAX), new_token()}});
    if (r[0]->type != REDIS_REPLY_INTEGER || r[0]->integer != 1) {
        throw console_refusal(409, "there are " + std::to_string(SILENCES_MAX) +
                                       " silences already: delete ended ones first");
    }
}

silence console_store::expire_silence(const std::string& id, const std::string& who, double now) {
    const auto r = run({{"HGET", prefix_ + "silences", id}});
    const std::string was = text(r[0].get());
    if (was.empty()) throw console_refusal(404, "no silence " + id);
    silence s = silence_from_json(json::parse(was));
    if (s.expired_at > 0 || s.end() <= now) return s;
    s.expired_at = now;
    s.ended_by = who.empty() ? "expired" : "expired by " + who;
    std::string devices;  // the device keys' prefix of its account (redis_records.cpp's form)
    if (!s.match.account.empty()) {
        devices =
            prefix_ + "d:" + std::to_string(s.match.account.size()) + ":" + s.match.account + ":";
    }
    char now_text[32];
    std::snprintf(now_text, sizeof now_text, "%.3f", now);
    const auto e = run(
        {{"EVAL", END_SILENCE, "3", prefix_ + "silences", prefix_ + "silences:v", prefix_ + "due",
          id, was, silence_json(s).dump(), new_token(), now_text, devices, "100000"}});
    if (e[0]->type == REDIS_REPLY_INTEGER && e[0]->integer < 0) {
        throw console_refusal(409, "silence " + id + " changed meanwhile: try again");
    }
    return s;
}

json console_store::dead_letters(std::size_t count) {
    const auto r =
        run({{"XREVRANGE", prefix_ + "deadletter", "+", "-", "COUNT", std::to_string(count)}});
    json out = json::array();
    const redisReply* list = r[0].get();
    for (std::size_t i = 0; list->type == REDIS_REPLY_ARRAY && i < list->elements; ++i) {
        out.push_back(entry_json(list->element[i], "id"));
    }
    return out;
}

std::size_t console_store::dead_letter_count() {
    const auto r = run({{"XLEN", prefix_ + "deadletter"}});
    return r[0]->type == REDIS_REPLY_INTEGER ? static_cast<std::size_t>(r[0]->integer) : 0;
}

std::optional<json> console_store::dead_letter(const std::string& id) {
    const auto r = run({{"XRANGE", prefix_ + "deadletter", id, id}});
    const redisReply* list = r[0].get();
    if (list->type != REDIS_REPLY_ARRAY || list->elements == 0) return std::nullopt;
    return entry_json(list->element[0], "id");
}

std::string console_store::replay(const std::string& id) {
    const auto r = run({{"EVAL", REPLAY, "2", prefix_ + "deadletter", prefix_ + "outbox", id}});
    if (r[0]->type != REDIS_REPLY_STRING) throw console_refusal(404, "no dead letter " + id);
    return text(r[0].get());
}

bool console_store::purge(const std::string& id) {
    const auto r = run({{"XDEL", prefix_ + "deadletter", id}});
    return r[0]->type == REDIS_REPLY_INTEGER && r[0]->integer > 0;
}

std::size_t console_store::purge_all() {
    const std::size_t n = dead_letter_count();
    run({{"XTRIM", prefix_ + "deadletter", "MAXLEN", "0"}});
    return n;
}

std::vector<json> console_store::devices_now(const std::string& account) {
    const auto r = run({{"HGETALL", prefix_ + "now"}});
    std::vector<json> out;
    const redisReply* all = r[0].get();
    for (std::size_t i = 0; all->type == REDIS_REPLY_ARRAY && i + 1 < all->elements; i += 2) {
        json d = json::parse(text(all->element[i + 1]), nullptr, false);
        if (!d.is_object() || !d.contains("account") || !d["account"].is_string()) continue;
        if (!account.empty() && d["account"] != account) continue;
        out.push_back(std::move(d));
    }
    std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
        return std::tie(a["account"].get_ref<const std::string&>(),
                        a["device"].get_ref<const std::string&>()) <
               std::tie(b["account"].get_ref<const std::string&>(),
                        b["device"].get_ref<const std::string&>());
    });
    return out;
}

json console_store::explanations(const std::string& account, const std::string& device, double from,
                                 double to) {
    const std::string key =
        prefix_ + "why:" + std::to_string(account.size()) + ":" + account + ":" + device;
    const auto r = run({{"LRANGE", key, "0", "-1"}});
    json out = json::array();
    const redisReply* list = r[0].get();
    for (std::size_t i = 0; list->type == REDIS_REPLY_ARRAY && i < list->elements; ++i) {
        json e = json::parse(text(list->element[i]), nullptr, false);
        if (!e.is_object() || !e.contains("ts") || !e["ts"].is_number()) continue;
        const double ts = e["ts"].get<double>();
        if (ts < from || ts > to) continue;
        out.push_back(std::move(e));
    }
    return out;
}

json console_store::recent(std::size_t count) {
    const auto r =
        run({{"XREVRANGE", prefix_ + "outbox", "+", "-", "COUNT", std::to_string(count)}});
    json out = json::array();
    const redisReply* list = r[0].get();
    for (std::size_t i = 0; list->type == REDIS_REPLY_ARRAY && i < list->elements; ++i) {
        out.push_back(entry_json(list->element[i], "entry"));
    }
    return out;
}

}  // namespace alerts::gateway
