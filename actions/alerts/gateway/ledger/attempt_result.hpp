// attempt_result.hpp — what one delivery attempt came to, as a value: the transports
// (transport/) produce it, the ledger (delivery_ledger.hpp) decides what follows from it.
#pragma once

#include <string>
#include <vector>

namespace alerts::gateway {

/// One recipient the SMTP server refused at RCPT TO while others were accepted.
struct refused_recipient {
    std::string address;
    long reply_code = 0;  // 550: refused for good; 4xx: try again later
    std::string reply;    // the server's words
};

enum class verdict {
    accepted,   // the target has it (webhook 2xx, SMTP 250 for at least one recipient)
    temporary,  // a failure that may pass: retried after a back-off
    permanent,  // a refusal that will not change (HTTP 4xx but 408/425/429, SMTP 5xx)
};

struct attempt_result {
    verdict outcome = verdict::accepted;
    std::string error;                       // empty when accepted
    std::vector<refused_recipient> refused;  // e-mail: the recipients refused on their own
};

}  // namespace alerts::gateway
