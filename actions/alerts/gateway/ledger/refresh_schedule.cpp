#include "gateway/ledger/refresh_schedule.hpp"

namespace alerts::gateway {

void refresh_schedule::taken(std::string id, time_point now) {
    queue_.emplace_back(now + every_, std::move(id));
}

std::vector<std::string> refresh_schedule::due(
    time_point now, const std::function<bool(const std::string&)>& held) {
    std::vector<std::string> ids;
    const bool behind = !queue_.empty() && queue_.front().first + every_ / 2 <= now;
    // Appended at now + every_, after every entry due earlier: the queue stays in due order.
    while (!queue_.empty() && queue_.front().first <= now && (behind || ids.size() < per_turn_)) {
        std::string id = std::move(queue_.front().second);
        queue_.pop_front();
        if (!held(id)) continue;
        ids.push_back(id);
        queue_.emplace_back(now + every_, std::move(id));
    }
    return ids;
}

}  // namespace alerts::gateway
