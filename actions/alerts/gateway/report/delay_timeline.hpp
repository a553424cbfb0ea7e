// delay_timeline.hpp — the delivery delays of the last hours, minute by minute, for the
// console's plot (/delay): per minute of delivery, how many notifications, alertDelay's p50, p99
// and max (from due to delivered, what a customer feels) and deliveryDelay's p99 (from the
// commit). Each minute keeps a log-scale histogram (buckets 5 % apart from 1 ms to 3 days), not
// the samples: bounded memory whatever the rate, percentiles to 5 %. Thread-safe: the delivery
// loop adds, the console's thread reads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace alerts::gateway {

class delay_timeline {
public:
    static constexpr std::size_t BUCKETS = 400;  // 1 ms × 1.05^399: about 3 days

    explicit delay_timeline(std::size_t minutes = 180);

    /// One notification delivered at `now` (seconds since the epoch).
    void add(double now, double alert_delay, double delivery_delay);

    struct point {
        double minute = 0;  // its start, seconds since the epoch
        std::uint64_t count = 0;
        double alert_p50 = 0, alert_p99 = 0, alert_max = 0, delivery_p99 = 0;
    };
    /// The minutes with deliveries, oldest first (at most the last `minutes`).
    std::vector<point> points() const;

private:
    struct minute_slot {
        std::int64_t minute = -1;
        std::uint64_t count = 0;
        double alert_max = 0;
        std::array<std::uint32_t, BUCKETS> alert{};
        std::array<std::uint32_t, BUCKETS> delivery{};
    };

    mutable std::mutex mutex_;
    std::vector<minute_slot> slots_;
};

}  // namespace alerts::gateway
