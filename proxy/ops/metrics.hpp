// The proxy's metrics (docs/DEPLOY.md, "Metrics"): counted at the HTTP boundary, where an
// /init or /run answer is known (its outcome travels with it: ops/outcome.hpp), with relaxed atomic
// increments only (no lock the activations share with a scrape), and rendered in the Prometheus
// text format by prometheus-cpp's TextSerializer when /metrics is scraped.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ops/outcome.hpp"

namespace actionloop {

/// The label value of `o` ("success", "application_error", …).
const char* outcome_name(activation_outcome o);

/// A latency histogram with fixed buckets (seconds), lock-free: observe() is one relaxed
/// increment per bucket passed plus the count and the sum.
class latency_histogram {
public:
    static constexpr std::array<double, 15> BOUNDS = {
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0, 300.0};
    void observe(std::chrono::nanoseconds elapsed);

    /// Cumulative counts per bound (as Prometheus wants them), the count and the sum.
    std::array<std::uint64_t, BOUNDS.size()> cumulative() const;
    std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }
    double sum_seconds() const;

private:
    std::array<std::atomic<std::uint64_t>, BOUNDS.size()> buckets_{};  // not cumulative
    std::atomic<std::uint64_t> count_{0};
    std::atomic<std::uint64_t> sum_ns_{0};
};

/// Everything counted per activation.
class activation_metrics {
public:
    /// One /init or /run answered: its outcome (the answer's own), latency and bytes.
    void record(bool is_run, activation_outcome o, std::size_t request_bytes,
                std::size_t answer_bytes, std::chrono::nanoseconds elapsed);

    std::uint64_t activations(bool is_run, activation_outcome o) const {
        return counts_[is_run][static_cast<std::size_t>(o)].load(std::memory_order_relaxed);
    }
    const latency_histogram& latency(bool is_run) const { return latency_[is_run]; }
    std::uint64_t bytes_in() const { return bytes_in_.load(std::memory_order_relaxed); }
    std::uint64_t bytes_out() const { return bytes_out_.load(std::memory_order_relaxed); }

    /// A request refused by a bound before any work: 503 past OW_MAX_QUEUED (`queue`) or
    /// OW_MAX_CONNECTIONS (`connections`), 429 past OW_MAX_INFLIGHT (`inflight`). Not an
    /// activation: not in activations().
    enum class refusal_reason : std::size_t { queue = 0, connections = 1, inflight = 2 };
    static constexpr std::size_t REFUSAL_REASONS = 3;
    void refused(refusal_reason why) {
        refused_[static_cast<std::size_t>(why)].fetch_add(1, std::memory_order_relaxed);
    }
    std::uint64_t refusals(refusal_reason why) const {
        return refused_[static_cast<std::size_t>(why)].load(std::memory_order_relaxed);
    }

private:
    std::array<std::array<std::atomic<std::uint64_t>, OUTCOMES>, 2> counts_{};  // [is_run]
    std::array<latency_histogram, 2> latency_;
    std::atomic<std::uint64_t> bytes_in_{0};
    std::atomic<std::uint64_t> bytes_out_{0};
    std::array<std::atomic<std::uint64_t>, REFUSAL_REASONS> refused_{};
};

/// One worker of the action (host/action_host.hpp's worker_state) as a scrape sees it.
struct worker_gauge {
    unsigned index = 0;
    bool busy = false;                 // an activation is in it
    std::uint64_t resident_bytes = 0;  // its process's RSS (0: none running)
    std::uint64_t restarts = 0;        // its process started again after dying
};

/// What a scrape reads besides the counters.
struct metrics_gauges {
    std::uint64_t restarts = 0;           // action processes started again after dying
    std::size_t queue_depth = 0;          // activations waiting for the action
    int in_flight = 0;                    // /init and /run accepted, answer not yet written
    std::uint64_t resident_bytes = 0;     // the proxy's RSS
    std::size_t open_connections = 0;     // HTTP connections open on the action port
    std::uint64_t log_dropped_lines = 0;  // the proxy's own log lines dropped (logging.hpp)
    std::uint64_t log_dropped_bytes = 0;
    std::uint64_t log_backlog_bytes = 0;  // the proxy's own log bytes not written yet
    std::vector<worker_gauge> workers;    // the action's workers, by index (none before /init)
};

/// The Prometheus text exposition (format 0.0.4) of `counted` and `gauges`.
std::string render_metrics(const activation_metrics& counted, const metrics_gauges& gauges);

/// This process's resident set size in bytes (from /proc/self/statm; 0 when unreadable).
std::uint64_t resident_bytes();

/// Process `pid`'s resident set size in bytes (from /proc/<pid>/statm; 0 when `pid` is not
/// positive or the file is unreadable, e.g. the process is gone).
std::uint64_t resident_bytes_of(pid_t pid);

}  // namespace actionloop
