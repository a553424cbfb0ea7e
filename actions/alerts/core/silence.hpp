// silence.hpp — silences made at run time (docs/alerts.md, "Silences"): what an operator asks
// through alertgw's API to hold back for a while, with the semantics of the config's
// maintenance windows (held back, counted `silenced`, what is still down at the end announced
// then). Pure: the API's JSON in, the stored JSON out, and the matching the core does.
//
// A silence matches a notification when every matcher it has equals the notification's value:
// `account`, `device`, `bridge` (a device behind that bridge, or the bridge itself), `region`
// (motion only) and `notifType`. It holds from `startsAt` until `endsAt`; one made "until
// resolved" names one device and holds while that device is down: the device seen online ends it.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.hpp"

namespace alerts {

/// A silence request or record that does not have the documented shape; what() says why.
class silence_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

struct silence_matchers {
    std::string account, device, bridge, site, region, notif_type;
    bool empty() const {
        return account.empty() && device.empty() && bridge.empty() && site.empty() &&
               region.empty() && notif_type.empty();
    }
};

struct silence {
    std::string id;
    silence_matchers match;
    double starts_at = 0;
    double ends_at = std::numeric_limits<double>::infinity();  // until resolved: infinity
    bool until_resolved = false;
    double created_at = 0;
    std::string created_by, comment;
    double expired_at = 0;  // ended early (expired, or resolved): when; 0 = not
    std::string ended_by;   // "expired" (by whom) or "resolved"

    /// The time it stops holding: endsAt, or when it was ended early.
    double end() const { return expired_at > 0 ? std::min(expired_at, ends_at) : ends_at; }
    bool active_at(double t) const { return starts_at <= t && t < end(); }
};

/// The bounds a silence request is held to (before anything is stored).
constexpr std::size_t SILENCE_MAX_TEXT = 256;        // an id or matcher value
constexpr std::size_t SILENCE_MAX_COMMENT = 1024;    // the comment
constexpr double SILENCE_MAX_SECONDS = 366 * 86400;  // the longest a silence may last
constexpr std::size_t SILENCES_MAX = 10000;          // silences kept at once

/// A silence from the API's request body: `matchers` (at least one), `startsAt` (default
/// `now`), `endsAt` or `duration` (seconds) or `untilResolved: true` (with `account` and
/// `device`), `comment`, `createdBy`. Throws silence_error naming the member.
silence parse_silence_request(const nlohmann::json& request, double now, std::string id);

/// The silence as the API shows it and Redis keeps it.
nlohmann::json silence_json(const silence& s);
/// Back from that JSON; throws silence_error for one that is not a silence.
silence silence_from_json(const nlohmann::json& j);

/// What a notification is, for matching.
struct silence_subject {
    std::string_view account, device, bridge, site, region;
    notif_type type = notif_type::alert;
    bool down = false;  // the device's observed state is not online (for until-resolved)
};

bool silence_matches(const silence& s, const silence_subject& subject);

/// The silences a core applies: the active and future ones, with the version they were read at.
struct silence_set {
    std::vector<silence> silences;
    std::string version;
};

}  // namespace alerts
