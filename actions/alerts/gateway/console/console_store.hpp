// console_store.hpp — what alertgw's console reads and writes in Redis (docs: actions/alerts/
// README.md, "Operating the pipeline"): the silences (<prefix>silences, <prefix>silences:v),
// the dead letters (<prefix>deadletter) and their replay into <prefix>outbox, the recent
// notifications. One connection of its own, used on the console's thread only. Any Redis
// failure throws redis_error; a request the data refuses throws console_refusal.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/silence.hpp"
#include "redis/redis_client.hpp"

namespace alerts::gateway {

/// A request the stored data refuses: `status` is the HTTP answer (404, 409).
class console_refusal : public std::runtime_error {
public:
    console_refusal(int code, const std::string& what) : std::runtime_error(what), status(code) {}
    int status;
};

/// `digits` random hex digits (from the system's random source): silence ids, version tokens.
std::string random_hex(std::size_t digits);

class console_store {
public:
    console_store(redis_url url, std::string prefix);

    /// Every silence kept, oldest first.
    std::vector<silence> silences();
    /// Stores a new silence (refused past SILENCES_MAX) and tells every monitor.
    void add_silence(const silence& s);
    /// Ends a silence now (`who` ended it); devices it held back are looked at again from the
    /// next batch. Returns it as it is now; a silence already ended is returned as it is.
    silence expire_silence(const std::string& id, const std::string& who, double now);

    /// The newest `count` dead letters (newest first), each {id, entry, key, target, error,
    /// attempts, recipient?, n}; and how many there are in all.
    nlohmann::json dead_letters(std::size_t count);
    std::size_t dead_letter_count();
    /// One dead letter, or nullopt.
    std::optional<nlohmann::json> dead_letter(const std::string& id);
    /// Back to the outbox with its dedupKey, for its target only (and its refused recipients);
    /// the dead letter is removed in the same step, so a second replay finds nothing. Returns
    /// the new outbox entry's id; throws console_refusal(404) for an unknown id.
    std::string replay(const std::string& id);
    /// Removes one dead letter (false: none such), or all of them (how many).
    bool purge(const std::string& id);
    std::size_t purge_all();

    /// The notable devices now (<prefix>now, kept by the commits), of `account` ("": all).
    std::vector<nlohmann::json> devices_now(const std::string& account);
    /// What the rules held back for a device (its history, newest first) between `from` and
    /// `to` (seconds since the epoch, the decision's time).
    nlohmann::json explanations(const std::string& account, const std::string& device, double from,
                                double to);

    /// The newest `count` outbox entries, newest first: {entry, key, n}.
    nlohmann::json recent(std::size_t count);

private:
    std::vector<redis_reply> run(const std::vector<std::vector<std::string>>& commands);

    redis_client redis_;
    std::string prefix_;
};

}  // namespace alerts::gateway
