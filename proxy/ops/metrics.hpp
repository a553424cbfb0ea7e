// The proxy's metrics (docs/DEPLOY.md, "Metrics"): counted at the HTTP boundary, where an
// /init or /run answer is known, with relaxed atomic increments only (no lock the
// activations share with a scrape), and rendered in the Prometheus text format by
// prometheus-cpp's TextSerializer when /metrics is scraped.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace actionloop {

/// What an /init or /run came to, from its status and answer body.
enum class outcome : std::size_t {
    success,            // 200 and no top-level "error"
    application_error,  // 200 with a top-level "error": the action reported a failure
    crash,              // /run: 400, the action process died during the activation
    action_error,       // 502: bad or oversized answer, deadline, compile or start failure
    rejected,           // any other 4xx or 500: bad /init body, re-init, no action yet
    shutting_down,      // 503: refused during the drain
};
inline constexpr std::size_t OUTCOMES = 6;

/// The label value of `o` ("success", "application_error", …).
const char* outcome_name(outcome o);

/// The outcome of an answer (`is_run`: /run, else /init) with `status` and `body`.
outcome outcome_of(bool is_run, int status, std::string_view body);

/// True when `body` is a JSON object with an "error" member at its top level, found by the
/// shared scanner (actionloop/detail/json_scan.hpp), only when the text holds "error" at all.
bool has_top_level_error(std::string_view body);

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
    /// One /init or /run answered: its outcome, latency and bytes.
    void record(bool is_run, int status, std::string_view answer_body, std::size_t request_bytes,
                std::chrono::nanoseconds elapsed);

    std::uint64_t activations(bool is_run, outcome o) const {
        return counts_[is_run][static_cast<std::size_t>(o)].load(std::memory_order_relaxed);
    }
    const latency_histogram& latency(bool is_run) const { return latency_[is_run]; }
    std::uint64_t bytes_in() const { return bytes_in_.load(std::memory_order_relaxed); }
    std::uint64_t bytes_out() const { return bytes_out_.load(std::memory_order_relaxed); }

    /// A request refused with 503 by a bound before any work: OW_MAX_QUEUED (`queue`) or
    /// OW_MAX_CONNECTIONS (`connections`). Not an activation: not in activations().
    enum class refusal_reason : std::size_t { queue = 0, connections = 1 };
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
    std::array<std::atomic<std::uint64_t>, 2> refused_{};
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
};

/// The Prometheus text exposition (format 0.0.4) of `counted` and `gauges`.
std::string render_metrics(const activation_metrics& counted, const metrics_gauges& gauges);

/// This process's resident set size in bytes (from /proc/self/statm; 0 when unreadable).
std::uint64_t resident_bytes();

}  // namespace actionloop
