// redis_silences.cpp — the Redis store's side of the silences made at run time (docs/alerts.md,
// "Silences"). alertgw's API keeps them in the hash <prefix>silences (id -> JSON) and bumps
// <prefix>silences:v with every change (a new token each time, never a count: a Redis emptied
// and written again cannot give an old version back). Each batch's first round trip reads the
// version (one GET among its reads); only when it differs from the one the core has are the
// silences read again (HGETALL, a round trip of its own). An until-resolved silence whose device a
// batch saw back online is ended here, after that batch's commit, compare-and-set on its text.
#include <iostream>

#include "core/silence.hpp"
#include "redis/redis_store.hpp"
#include "redis/reply_values.hpp"

namespace alerts {

namespace {

// Ends a silence whose stored text is still ARGV[2] (KEYS: the hash, the version; ARGV: the
// id, the text as read, the new text, the new version).
constexpr const char* END_SILENCE_SCRIPT = R"lua(
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
return 1
)lua";

std::string text_of(const redisReply* r) {
    return r && r->type == REDIS_REPLY_STRING ? std::string(r->str, r->len) : std::string();
}

}  // namespace

void redis_store::load_silences(alert_core& core, const redisReply* version) {
    const std::string seen = text_of(version);
    if (silences_read_ && seen == silences_version_) return;
    auto set = std::make_shared<silence_set>();
    set->version = seen;
    if (!seen.empty()) {
        client_.append({"HGETALL", silences_key_});
        const std::vector<redis_reply> r = client_.replies(1);
        const redisReply* all = r[0].get();
        if (all->type != REDIS_REPLY_ARRAY) {
            batch_.damaged.add(silences_key_, "no hash of silences (left there: alertgw's API "
                                              "writes it)");
        } else {
            for (std::size_t i = 0; i + 1 < all->elements; i += 2) {
                const std::string id = text_of(all->element[i]);
                try {
                    silence s =
                        silence_from_json(nlohmann::json::parse(text_of(all->element[i + 1])));
                    if (s.id != id) throw silence_error("its id is not its field's name");
                    set->silences.push_back(std::move(s));
                } catch (const std::exception& error) {
                    batch_.damaged.add(silences_key_ + " " + id,
                                       std::string("not a silence, skipped: ") + error.what());
                }
            }
        }
    }
    core.set_silences(set->silences.empty() && seen.empty() ? nullptr : std::move(set));
    silences_version_ = seen;
    silences_read_ = true;
}

void redis_store::end_resolved_silences(const std::vector<std::string>& ids, double now) {
    try {
        for (const std::string& id : ids) {
            client_.append({"HGET", silences_key_, id});
            const std::vector<redis_reply> r = client_.replies(1);
            const std::string text = text_of(r[0].get());
            if (text.empty()) continue;
            silence s = silence_from_json(nlohmann::json::parse(text));
            if (s.expired_at > 0) continue;
            s.expired_at = now;
            s.ended_by = "resolved";
            const std::string token = "resolved-" + id + "-" + std::to_string(now);
            client_.append({"EVAL", END_SILENCE_SCRIPT, "2", silences_key_, silences_version_key_,
                            id, text, silence_json(s).dump(), token});
            (void)client_.replies(1);
        }
    } catch (const std::exception& error) {
        // The batch stands; the next batch that sees the device online ends the silence.
        std::cerr << "alerts: warning: could not end a resolved silence: " << error.what() << "\n";
    }
}

}  // namespace alerts
