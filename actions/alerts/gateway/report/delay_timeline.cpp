// delay_timeline.cpp — see delay_timeline.hpp.
#include "gateway/report/delay_timeline.hpp"

#include <algorithm>
#include <cmath>

namespace alerts::gateway {

namespace {

constexpr double SMALLEST = 0.001;  // the first bucket: up to 1 ms
constexpr double GROWTH = 1.05;

std::size_t bucket_of(double seconds) {
    if (!(seconds > SMALLEST)) return 0;
    const double b = std::ceil(std::log(seconds / SMALLEST) / std::log(GROWTH));
    return std::min<std::size_t>(delay_timeline::BUCKETS - 1, static_cast<std::size_t>(b));
}

double upper_edge(std::size_t bucket) { return SMALLEST * std::pow(GROWTH, double(bucket)); }

double percentile(const std::array<std::uint32_t, delay_timeline::BUCKETS>& h, std::uint64_t n,
                  double q) {
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n)));
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < h.size(); ++b) {
        seen += h[b];
        if (seen >= std::max<std::uint64_t>(rank, 1)) return upper_edge(b);
    }
    return upper_edge(h.size() - 1);
}

}  // namespace

delay_timeline::delay_timeline(std::size_t minutes) : slots_(std::max<std::size_t>(minutes, 1)) {}

void delay_timeline::add(double now, double alert_delay, double delivery_delay) {
    const auto minute = static_cast<std::int64_t>(std::floor(now / 60));
    std::lock_guard<std::mutex> lock(mutex_);
    minute_slot& s = slots_[static_cast<std::size_t>(minute) % slots_.size()];
    if (s.minute != minute) s = minute_slot{minute, 0, 0, {}, {}};
    ++s.count;
    s.alert_max = std::max(s.alert_max, alert_delay);
    ++s.alert[bucket_of(alert_delay)];
    ++s.delivery[bucket_of(delivery_delay)];
}

std::vector<delay_timeline::point> delay_timeline::points() const {
    std::vector<point> out;
    std::lock_guard<std::mutex> lock(mutex_);
    std::int64_t newest = -1;
    for (const minute_slot& s : slots_) newest = std::max(newest, s.minute);
    for (const minute_slot& s : slots_) {
        if (s.minute < 0 || s.count == 0 ||
            s.minute <= newest - static_cast<std::int64_t>(slots_.size())) {
            continue;
        }
        point p;
        p.minute = static_cast<double>(s.minute) * 60;
        p.count = s.count;
        p.alert_p50 = std::min(percentile(s.alert, s.count, 0.50), s.alert_max);
        p.alert_p99 = std::min(percentile(s.alert, s.count, 0.99), s.alert_max);
        p.alert_max = s.alert_max;
        p.delivery_p99 = percentile(s.delivery, s.count, 0.99);
        out.push_back(p);
    }
    std::sort(out.begin(), out.end(),
              [](const point& a, const point& b) { return a.minute < b.minute; });
    return out;
}

}  // namespace alerts::gateway
