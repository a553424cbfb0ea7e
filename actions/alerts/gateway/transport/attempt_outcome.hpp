// attempt_outcome.hpp — a finished transfer's numbers turned into an attempt_result (pure):
// which failures are worth another attempt and which are final.
#pragma once

#include <string>
#include <vector>

#include "gateway/ledger/attempt_result.hpp"

namespace alerts::gateway {

/// A webhook: 2xx accepted; 4xx other than 408, 425 and 429 permanent; the rest (transport
/// errors included, `transport_error` non-empty) temporary.
attempt_result webhook_outcome(const std::string& transport_error, long http_status);

/// An e-mail: accepted when libcurl finished (the refused recipients listed on their own);
/// a 5xx reply permanent; anything else temporary.
attempt_result email_outcome(const std::string& transport_error, long smtp_reply,
                             std::vector<refused_recipient> refused);

}  // namespace alerts::gateway
