// gateway_metrics.hpp — alertgw's Prometheus metrics (prometheus-cpp's thread-safe counters:
// the loop counts, the /metrics thread renders). Targets are labelled by name, never by URL.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <vector>

namespace alerts::gateway {

struct target_metrics {
    prometheus::Counter* delivered = nullptr;
    prometheus::Counter* failed = nullptr;
    prometheus::Counter* retried = nullptr;
    prometheus::Counter* dead = nullptr;
    prometheus::Counter* skipped = nullptr;
    prometheus::Histogram* delay = nullptr;
    prometheus::Gauge* parked = nullptr;
};

class gateway_metrics {
public:
    explicit gateway_metrics(const std::vector<std::string>& target_names);
    std::string render() const;

    std::vector<target_metrics> targets;
    prometheus::Gauge* lag = nullptr;
    prometheus::Gauge* pending = nullptr;
    prometheus::Gauge* in_flight = nullptr;
    prometheus::Gauge* held = nullptr;
    prometheus::Counter* read = nullptr;
    prometheus::Counter* claimed = nullptr;
    prometheus::Counter* acked = nullptr;
    prometheus::Counter* unreadable = nullptr;
    prometheus::Counter* redis_errors = nullptr;
    prometheus::Counter* dead_letters_dropped = nullptr;
    prometheus::Gauge* redis_used_memory = nullptr;
    prometheus::Gauge* redis_maxmemory = nullptr;

private:
    void add_targets(const std::vector<std::string>& target_names);
    std::shared_ptr<prometheus::Registry> registry_;
};

}  // namespace alerts::gateway
