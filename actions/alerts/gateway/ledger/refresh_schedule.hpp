// refresh_schedule.hpp — when alertgw claims each entry it holds again (XCLAIM … JUSTID), so
// that another gateway's claim (of entries idle past --claim-after) never takes an entry this
// one still works on. Each entry is due `every` after it was taken, then `every` after each
// refresh, so the refreshes are spread as the entries arrived: a turn of the loop refreshes at
// most `per_turn` ids (one Redis command), where refreshing every held entry at once (up to
// 65,536 behind a hanging webhook, 66 commands) held the loop for tens of milliseconds every
// 10 s (issue 34). Only when refreshes fall behind by half of `every` does a turn take every
// due id, so an entry is never left to go idle. Pure: the caller passes `now` and says which
// ids it still holds.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace alerts::gateway {

class refresh_schedule {
public:
    using time_point = std::chrono::steady_clock::time_point;

    refresh_schedule(std::chrono::milliseconds every, std::size_t per_turn)
        : every_(every), per_turn_(per_turn == 0 ? 1 : per_turn) {}

    /// `id` was taken (read or claimed) now: due `every` from now.
    void taken(std::string id, time_point now);

    /// The ids to refresh now, oldest first: the due ones `held` still says are held, at most
    /// `per_turn` of them unless the oldest is late by half of `every` or more. Each returned
    /// id is due again `every` from now; a due id no longer held is forgotten.
    std::vector<std::string> due(time_point now,
                                 const std::function<bool(const std::string&)>& held);

    /// Ids scheduled (held or not yet found released).
    std::size_t size() const { return queue_.size(); }

private:
    std::chrono::milliseconds every_;
    std::size_t per_turn_;
    std::deque<std::pair<time_point, std::string>> queue_;  // by due time: appended in order
};

}  // namespace alerts::gateway
