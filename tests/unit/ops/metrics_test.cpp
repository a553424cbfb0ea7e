// The pure parts of ops/metrics: outcome labels, the lock-free histogram, and the
// Prometheus text a scrape renders.
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <string>

#include "ops/metrics.hpp"

using namespace actionloop;
using namespace std::chrono;

namespace {

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

}  // namespace

TEST_CASE("metrics: each outcome has its label value") {
    CHECK(std::string(outcome_name(activation_outcome::success)) == "success");
    CHECK(std::string(outcome_name(activation_outcome::application_error)) == "application_error");
    CHECK(std::string(outcome_name(activation_outcome::crash)) == "crash");
    CHECK(std::string(outcome_name(activation_outcome::action_error)) == "action_error");
    CHECK(std::string(outcome_name(activation_outcome::rejected)) == "rejected");
    CHECK(std::string(outcome_name(activation_outcome::shutting_down)) == "shutting_down");
}

TEST_CASE("metrics: the histogram counts each observation in its bucket, cumulatively") {
    latency_histogram h;
    h.observe(microseconds(500));  // <= 0.001
    h.observe(milliseconds(1));    // <= 0.001 (bounds are inclusive)
    h.observe(milliseconds(30));   // <= 0.05
    h.observe(seconds(1000));      // above every bound: +Inf only
    const auto counts = h.cumulative();
    CHECK(counts[0] == 2);
    CHECK(counts[4] == 2);  // 0.025
    CHECK(counts[5] == 3);  // 0.05
    CHECK(counts.back() == 3);
    CHECK(h.count() == 4);
    CHECK(h.sum_seconds() == doctest::Approx(1000.0315));
}

TEST_CASE("metrics: a scrape renders every family in the Prometheus text format") {
    activation_metrics counted;
    // The outcome is the answer's own (protocol/exchange.hpp): recorded as given.
    counted.record(true, activation_outcome::success, 20, 8, milliseconds(2));
    counted.record(true, activation_outcome::application_error, 30, 15, milliseconds(3));
    counted.record(false, activation_outcome::success, 100, 12, seconds(2));
    counted.record(true, activation_outcome::shutting_down, 5, 14, seconds(0));
    counted.refused(activation_metrics::refusal_reason::inflight);
    counted.refused(activation_metrics::refusal_reason::inflight);
    CHECK(counted.bytes_in() == 155);
    CHECK(counted.bytes_out() == 8 + 15 + 12 + 14);
    metrics_gauges gauges;
    gauges.restarts = 3;
    gauges.queue_depth = 2;
    gauges.in_flight = 1;
    gauges.resident_bytes = 4096;
    gauges.workers = {{0, true, 1 << 20, 2}, {1, false, 3 << 20, 0}};
    const std::string text = render_metrics(counted, gauges);
    INFO(text);
    for (const std::string line : {
             "# TYPE actionloop_activations_total counter",
             "actionloop_activations_total{outcome=\"success\",route=\"run\"} 1",
             "actionloop_activations_total{outcome=\"application_error\",route=\"run\"} 1",
             "actionloop_activations_total{outcome=\"shutting_down\",route=\"run\"} 1",
             "actionloop_activations_total{outcome=\"success\",route=\"init\"} 1",
             "actionloop_activations_total{outcome=\"crash\",route=\"init\"} 0",
             "# TYPE actionloop_run_duration_seconds histogram",
             "actionloop_run_duration_seconds_count 2",
             "actionloop_run_duration_seconds_bucket{le=\"0.0025\"} 1",
             "actionloop_run_duration_seconds_bucket{le=\"0.005\"} 2",
             "actionloop_run_duration_seconds_bucket{le=\"+Inf\"} 2",
             "actionloop_init_duration_seconds_count 1",
             "actionloop_init_duration_seconds_bucket{le=\"1\"} 0",
             "actionloop_init_duration_seconds_bucket{le=\"2.5\"} 1",
             "actionloop_action_restarts_total 3",
             "actionloop_queue_depth 2",
             "actionloop_in_flight 1",
             "actionloop_received_bytes_total 155",
             "actionloop_sent_bytes_total 49",
             "process_resident_memory_bytes 4096",
             "actionloop_refused_total{reason=\"inflight\"} 2",
             "actionloop_refused_total{reason=\"queue\"} 0",
             "# TYPE actionloop_workers gauge",
             "actionloop_workers 2",
             "actionloop_workers_busy 1",
             "# TYPE actionloop_worker_resident_bytes gauge",
             "actionloop_worker_resident_bytes{worker=\"0\"} 1048576",
             "actionloop_worker_resident_bytes{worker=\"1\"} 3145728",
             "# TYPE actionloop_worker_restarts_total counter",
             "actionloop_worker_restarts_total{worker=\"0\"} 2",
             "actionloop_worker_restarts_total{worker=\"1\"} 0",
         }) {
        CHECK_MESSAGE(has_line(text, line), line);
    }
}

TEST_CASE("metrics: a process's resident size is read from /proc") {
    CHECK(resident_bytes() > 1024 * 1024);
    CHECK(resident_bytes_of(::getpid()) > 1024 * 1024);
    CHECK(resident_bytes_of(0) == 0);  // no process
    CHECK(resident_bytes_of(-1) == 0);
}
