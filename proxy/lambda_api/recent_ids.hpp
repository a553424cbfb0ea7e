// The ids of invocations that are over, remembered so that a runtime's late or repeated post
// is told apart from a post for an id never handed out: 400 for an answered one, 410 once for
// one that timed out (the emulator's timeout cache consumes it the same way: a second late
// post is a 400). Bounded: past `capacity` ids the oldest is forgotten (a post for it is then
// an unknown id's 400).
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace actionloop::lambda_api {

class recent_ids {
public:
    enum class state { answered, timed_out };

    explicit recent_ids(size_t capacity) : capacity_(capacity) {}

    /// Remembers `id` (not remembered yet: request ids are never handed out twice).
    void remember(std::string id, state s);
    /// What became of `id`, when it is still remembered.
    std::optional<state> find(std::string_view id) const;
    /// A timed-out id once its late post has had its 410: answered from now on.
    void consume(std::string_view id);
    size_t size() const { return order_.size(); }

private:
    size_t capacity_;
    std::deque<std::string> order_;  // oldest first; the map's keys view these strings
    std::unordered_map<std::string_view, state> states_;
};

}  // namespace actionloop::lambda_api
