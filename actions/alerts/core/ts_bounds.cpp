// ts_bounds.cpp — ETags too far from `now` become rejections.
#include "core/ts_bounds.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace alerts {

namespace {

std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return buf;
}

std::string seconds_text(double v) { return number_text(v) + " s"; }

// Why `e` is out of range, or "" when it is not.
std::string out_of_range(const etag& e, double now, const ts_bounds& b, ts_rejections& n) {
    if (e.ts > now + b.max_future) {
        ++n.future;
        return "ts " + number_text(e.ts) + " is more than " + seconds_text(b.max_future) +
               " after now (" + number_text(now) +
               "): is it in milliseconds? (ALERT_MAX_FUTURE_SECONDS)";
    }
    if (e.ts < now - b.max_past) {
        ++n.past;
        return "ts " + number_text(e.ts) + " is more than " + seconds_text(b.max_past) +
               " before now (" + number_text(now) + ") (ALERT_MAX_PAST_SECONDS)";
    }
    return {};
}

bool in_range(const etag& e, double now, const ts_bounds& b) {
    return e.ts <= now + b.max_future && e.ts >= now - b.max_past;
}

}  // namespace

ts_rejections reject_out_of_range(parsed_batch& batch, double now, const ts_bounds& bounds) {
    ts_rejections counts;
    std::vector<etag>& etags = batch.etags;
    const auto first = std::find_if(etags.begin(), etags.end(),
                                    [&](const etag& e) { return !in_range(e, now, bounds); });
    if (first == etags.end()) return counts;
    // The ETags and the earlier rejections share the batch's indices, both in order: walk them
    // together to know each ETag's index.
    std::vector<rejection> added;
    std::size_t kept = 0;
    std::size_t index = 0;
    std::size_t r = 0;
    for (const etag& e : etags) {
        while (r < batch.rejected.size() && batch.rejected[r].index == index) {
            ++r;
            ++index;
        }
        std::string why = out_of_range(e, now, bounds, counts);
        if (why.empty()) {
            etags[kept++] = e;
        } else {
            added.push_back({index, "etag " + std::to_string(index) + ": " + why});
        }
        ++index;
    }
    etags.resize(kept);
    const std::size_t middle = batch.rejected.size();
    batch.rejected.insert(batch.rejected.end(), added.begin(), added.end());
    std::inplace_merge(batch.rejected.begin(),
                       batch.rejected.begin() + static_cast<std::ptrdiff_t>(middle),
                       batch.rejected.end(),
                       [](const rejection& a, const rejection& b) { return a.index < b.index; });
    return counts;
}

}  // namespace alerts
