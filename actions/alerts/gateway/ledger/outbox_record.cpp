// outbox_record.cpp — see outbox_record.hpp.
#include "gateway/ledger/outbox_record.hpp"

#include <nlohmann/json.hpp>

namespace alerts::gateway {

namespace {

std::string key_problem(const std::string& key) {
    if (key.empty()) return "no dedup key";
    for (const unsigned char c : key) {
        if (c < 0x20 || c == 0x7f) return "the dedup key holds control characters";
    }
    return {};
}

}  // namespace

std::variant<new_entry, unreadable> read_record(const outbox_record& record) {
    nlohmann::json notification;
    try {
        notification = nlohmann::json::parse(record.notification);
    } catch (const std::exception& error) {
        return unreadable{std::string("the notification is not JSON: ") + error.what()};
    }
    if (!notification.is_object()) return unreadable{"the notification is not a JSON object"};
    if (std::string problem = key_problem(record.dedup_key); !problem.empty()) {
        return unreadable{std::move(problem)};
    }
    new_entry entry;
    entry.id = record.id;
    entry.dedup_key = record.dedup_key;
    entry.notification = record.notification;
    entry.only = record.only;
    if (!record.only.empty() && !record.to.empty())
        entry.progress[record.only] = "retry:" + record.to;
    if (const auto list = notification.find("recipients");
        list != notification.end() && list->is_array()) {
        for (const auto& address : *list) {
            if (address.is_string()) entry.recipients.push_back(address.get<std::string>());
        }
    }
    if (const auto hooks = notification.find("webhooks");
        hooks != notification.end() && hooks->is_array()) {
        entry.webhooks.emplace();
        for (const auto& name : *hooks) {
            if (name.is_string()) entry.webhooks->push_back(name.get<std::string>());
        }
    }
    return entry;
}

}  // namespace alerts::gateway
