// outbox_record.hpp — one outbox entry as Redis gave it (id, key, n), and what alertgw makes of
// it (pure): a new_entry for the ledger, or the reason it holds no deliverable notification.
#pragma once

#include <string>
#include <variant>

#include "gateway/ledger/delivery_ledger.hpp"

namespace alerts::gateway {

struct outbox_record {
    std::string id;
    bool trimmed = false;      // the id is pending but the entry is gone (XTRIM)
    std::string dedup_key;     // field "key"
    std::string notification;  // field "n": the notification's compact JSON
    // A dead letter replayed (the console): the one target it is for (field "only"), and for
    // e-mail the recipients it is for (field "to", comma-separated; empty: all of them).
    std::string only;
    std::string to;
};

/// Why an entry cannot be delivered ("the notification is not JSON: ...").
struct unreadable {
    std::string problem;
};

/// The entry to hand to delivery_ledger::add (recipients from the notification's
/// "recipients"), or why there is nothing to deliver.
std::variant<new_entry, unreadable> read_record(const outbox_record& record);

}  // namespace alerts::gateway
