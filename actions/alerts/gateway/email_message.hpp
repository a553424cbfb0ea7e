// email_message.hpp — the e-mail alertgw sends for one notification: RFC 5322 text (headers
// and a plain-text body a person can read), built from the notification's JSON. Pure: no I/O,
// the send time given by the caller.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace alerts::gateway {

/// The Message-ID of the notification with `dedup_key`: "<alert.HEX@alertgw>", the same for
/// the same key (two 64-bit FNV-1a hashes of it), so a mail client or server that sees the
/// same notification twice sees the same id.
std::string message_id(std::string_view dedup_key);

/// The subject line (unencoded): "<camera>: <what happened>", for a site's group of cameras
/// (SiteOffline, SiteChanged, SiteOnline) "Site <site's name>: <how many cameras are down>".
std::string subject(const nlohmann::json& notification);

/// The whole message (CRLF line ends), From `from`, To the notification's recipients,
/// Date `now` (seconds since the epoch), with X-Alert-Dedup-Key and Message-ID; a notification
/// whose `threadKey` names another one (a reminder, an Online, a site's SiteChanged or
/// SiteOnline) answers it: In-Reply-To and References carry that one's Message-ID.
std::string email_text(const nlohmann::json& notification, std::string_view dedup_key,
                       std::string_view from, double now);

/// "2026-12-02 05:57:01 UTC" for seconds since the epoch (milliseconds shown when not whole).
std::string utc_text(double seconds);

}  // namespace alerts::gateway
