// ts_bounds.hpp — how far an ETag's `ts` may be from the batch's `now` (docs/alerts.md,
// "Timestamps"): an ETag from further in the future (a clock in milliseconds, a device whose
// clock runs ahead) or further in the past (a clock never set: 0, negative) is rejected with
// its index and reason, like a malformed one, and never reaches the core, where it would move
// the device's stale horizon (a future ts would make every later ETag of the device stale).
#pragma once

#include <cstddef>

#include "core/etag_fields.hpp"

namespace alerts {

struct ts_bounds {
    double max_future = 300;   // ALERT_MAX_FUTURE_SECONDS
    double max_past = 604800;  // ALERT_MAX_PAST_SECONDS (7 days)
};

/// How many ETags reject_out_of_range() moved to the rejections, by reason.
struct ts_rejections {
    std::size_t future = 0;
    std::size_t past = 0;
};

/// Moves the ETags of `batch` whose ts is over `bounds.max_future` after `now` or over
/// `bounds.max_past` before it to `batch.rejected` (which stays in index order, as the parser
/// left it). One comparison per ETag when none is out of range.
ts_rejections reject_out_of_range(parsed_batch& batch, double now, const ts_bounds& bounds);

}  // namespace alerts
