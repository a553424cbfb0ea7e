// write_pacing — when alertgw writes what the ledger says to write (ledger_writes).
// Acknowledgements and dead letters go at once, with whatever else is waiting. Progress alone
// (an entry one target has and another has not yet: a target slow, failing or hanging) waits
// up to `delay` from the first such write not yet made, so that the progress of many
// deliveries goes to Redis in one round trip instead of one per turn of the loop: behind a
// hanging webhook every delivery to the other targets is progress alone, and a round trip
// per turn held the loop while the next entries arrived (issue 34: the healthy target's
// delay p99 was 1.3× the same pair's without the hang). The cost: an alertgw killed within
// `delay` of a delivery may deliver it again to that target after a restart or a claim, with
// the same dedupKey (a kill between the delivery and its write could always do that).
// Stopping writes everything at once. Pure: the caller passes `now`.
#pragma once

#include <chrono>
#include <optional>

#include "gateway/ledger/delivery_ledger.hpp"

namespace alerts::gateway {

class write_pacing {
public:
    using time_point = std::chrono::steady_clock::time_point;

    explicit write_pacing(std::chrono::milliseconds delay) : delay_(delay) {}

    /// Whether the writes pending (the ledger's pending()) are to be written now.
    bool due(pending_writes writes, time_point now, bool stopping);
    /// They were written: the next progress waits from its own time.
    void written() { first_waiting_.reset(); }
    /// When the progress waiting is due, if any waits.
    std::optional<time_point> next_due() const;

private:
    std::chrono::milliseconds delay_;
    std::optional<time_point> first_waiting_;
};

}  // namespace alerts::gateway
