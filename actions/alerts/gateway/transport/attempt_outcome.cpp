// attempt_outcome.cpp — see attempt_outcome.hpp.
#include "gateway/transport/attempt_outcome.hpp"

namespace alerts::gateway {

attempt_result webhook_outcome(const std::string& transport_error, long http_status) {
    if (!transport_error.empty()) return {verdict::temporary, transport_error, {}};
    if (http_status >= 200 && http_status < 300) return {};
    const bool may_pass = http_status == 408 || http_status == 425 || http_status == 429;
    const bool refused = http_status >= 400 && http_status < 500 && !may_pass;
    return {refused ? verdict::permanent : verdict::temporary,
            "HTTP " + std::to_string(http_status),
            {}};
}

attempt_result email_outcome(const std::string& transport_error, long smtp_reply,
                             std::vector<refused_recipient> refused) {
    if (transport_error.empty()) return {verdict::accepted, "", std::move(refused)};
    std::string error = transport_error;
    if (smtp_reply != 0) error += " (SMTP " + std::to_string(smtp_reply) + ")";
    const bool refused_for_good = smtp_reply >= 500 && smtp_reply < 600;
    return {refused_for_good ? verdict::permanent : verdict::temporary, error, {}};
}

}  // namespace alerts::gateway
