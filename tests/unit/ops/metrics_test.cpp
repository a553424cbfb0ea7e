// The pure parts of ops/metrics: outcomes from answers, the lock-free histogram, and the
// Prometheus text a scrape renders.
#include <doctest/doctest.h>

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

TEST_CASE("metrics: the outcome of an answer comes from its status and top-level error") {
    CHECK(outcome_of(true, 200, "{\"a\":1}\n") == outcome::success);
    CHECK(outcome_of(true, 200, "[1,2]\n") == outcome::success);
    CHECK(outcome_of(true, 200, "{\"error\":\"boom\"}\n") == outcome::application_error);
    CHECK(outcome_of(true, 200, "{\"a\":1, \"error\":{\"code\":3}}\n") ==
          outcome::application_error);
    CHECK(outcome_of(false, 200, "{\"ok\":true}\n") == outcome::success);
    CHECK(outcome_of(true, 400, "{\"error\":\"command exited\"}\n") == outcome::crash);
    CHECK(outcome_of(false, 400, "{\"error\":\"bad\"}\n") == outcome::rejected);
    CHECK(outcome_of(true, 502, "{\"error\":\"x\"}\n") == outcome::action_error);
    CHECK(outcome_of(false, 502, "{\"error\":\"x\"}\n") == outcome::action_error);
    CHECK(outcome_of(false, 403, "{\"error\":\"x\"}\n") == outcome::rejected);
    CHECK(outcome_of(true, 500, "{\"error\":\"x\"}\n") == outcome::rejected);
    CHECK(outcome_of(true, 503, "{\"error\":\"x\"}\n") == outcome::shutting_down);
    CHECK(std::string(outcome_name(outcome::application_error)) == "application_error");
    CHECK(std::string(outcome_name(outcome::shutting_down)) == "shutting_down");
}

TEST_CASE("metrics: only a top-level \"error\" member is an application error") {
    CHECK(has_top_level_error("{\"error\":null}"));
    CHECK(has_top_level_error(" { \"x\" : [1, {\"y\":2}], \"error\" : \"late\" } "));
    CHECK_FALSE(has_top_level_error("{\"x\":{\"error\":1}}"));
    CHECK_FALSE(has_top_level_error("[{\"error\":1}]"));
    CHECK_FALSE(has_top_level_error("{\"message\":\"\\\"error\\\"\"}"));
    CHECK_FALSE(has_top_level_error("{\"errors\":1}"));
    CHECK_FALSE(has_top_level_error("{\"x\":\"error\"}"));
    CHECK_FALSE(has_top_level_error("not json \"error\""));
    CHECK_FALSE(has_top_level_error(""));
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
    counted.record(true, 200, "{\"a\":1}\n", 20, milliseconds(2));
    counted.record(true, 200, "{\"error\":\"no\"}\n", 30, milliseconds(3));
    counted.record(false, 200, "{\"ok\":true}\n", 100, seconds(2));
    counted.record(true, 503, "{\"error\":\"x\"}\n", 5, seconds(0));
    CHECK(counted.bytes_in() == 155);
    CHECK(counted.bytes_out() == 8 + 15 + 12 + 14);
    metrics_gauges gauges;
    gauges.restarts = 3;
    gauges.queue_depth = 2;
    gauges.in_flight = 1;
    gauges.resident_bytes = 4096;
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
         }) {
        CHECK_MESSAGE(has_line(text, line), line);
    }
}

TEST_CASE("metrics: this process's resident size is read from /proc") {
    CHECK(resident_bytes() > 1024 * 1024);
}
