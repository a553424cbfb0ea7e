#include "lambda_api/recent_ids.hpp"

#include <utility>

namespace actionloop::lambda_api {

// A deque keeps its elements where they are when it grows or shrinks at its ends, so the
// map's keys can view the strings it holds.
void recent_ids::remember(std::string id, state s) {
    if (capacity_ == 0) return;
    if (order_.size() == capacity_) {
        states_.erase(order_.front());
        order_.pop_front();
    }
    order_.push_back(std::move(id));
    states_.emplace(order_.back(), s);
}

std::optional<recent_ids::state> recent_ids::find(std::string_view id) const {
    const auto found = states_.find(id);
    if (found == states_.end()) return std::nullopt;
    return found->second;
}

void recent_ids::consume(std::string_view id) {
    const auto found = states_.find(id);
    if (found != states_.end()) found->second = state::answered;
}

}  // namespace actionloop::lambda_api
