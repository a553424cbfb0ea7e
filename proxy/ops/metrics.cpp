#include "ops/metrics.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

namespace actionloop {
namespace {

constexpr auto RELAXED = std::memory_order_relaxed;

prometheus::ClientMetric::Label label(const char* name, const char* value) { return {name, value}; }

prometheus::MetricFamily family(const char* name, const char* help, prometheus::MetricType type) {
    prometheus::MetricFamily f;
    f.name = name;
    f.help = help;
    f.type = type;
    return f;
}

prometheus::MetricFamily single(const char* name, const char* help, prometheus::MetricType type,
                                double value) {
    prometheus::MetricFamily f = family(name, help, type);
    prometheus::ClientMetric m;
    if (type == prometheus::MetricType::Counter) {
        m.counter.value = value;
    } else {
        m.gauge.value = value;
    }
    f.metric.push_back(m);
    return f;
}

prometheus::MetricFamily activations_family(const activation_metrics& counted) {
    prometheus::MetricFamily f =
        family("actionloop_activations_total", "/init and /run answered, by route and outcome",
               prometheus::MetricType::Counter);
    for (bool is_run : {false, true}) {
        for (std::size_t i = 0; i < OUTCOMES; ++i) {
            const auto o = static_cast<activation_outcome>(i);
            prometheus::ClientMetric m;
            m.label = {label("outcome", outcome_name(o)), label("route", is_run ? "run" : "init")};
            m.counter.value = static_cast<double>(counted.activations(is_run, o));
            f.metric.push_back(m);
        }
    }
    return f;
}

prometheus::MetricFamily refusals_family(const activation_metrics& counted) {
    using reason = activation_metrics::refusal_reason;
    prometheus::MetricFamily f =
        family("actionloop_refused_total",
               "requests refused by a bound before any work (503 past OW_MAX_QUEUED: queue, "
               "OW_MAX_CONNECTIONS: connections; 429 past OW_MAX_INFLIGHT: inflight)",
               prometheus::MetricType::Counter);
    for (const auto& [why, name] :
         {std::pair{reason::queue, "queue"}, std::pair{reason::connections, "connections"},
          std::pair{reason::inflight, "inflight"}}) {
        prometheus::ClientMetric m;
        m.label = {label("reason", name)};
        m.counter.value = static_cast<double>(counted.refusals(why));
        f.metric.push_back(m);
    }
    return f;
}

prometheus::MetricFamily histogram_family(const char* name, const char* help,
                                          const latency_histogram& h) {
    prometheus::MetricFamily f = family(name, help, prometheus::MetricType::Histogram);
    prometheus::ClientMetric m;
    const auto counts = h.cumulative();
    for (std::size_t i = 0; i < counts.size(); ++i) {
        m.histogram.bucket.push_back({counts[i], latency_histogram::BOUNDS[i]});
    }
    // Read after the buckets: +Inf is never below the last bucket.
    m.histogram.sample_count = std::max(h.count(), counts.back());
    m.histogram.bucket.push_back(
        {m.histogram.sample_count, std::numeric_limits<double>::infinity()});
    m.histogram.sample_sum = h.sum_seconds();
    f.metric.push_back(m);
    return f;
}

// The second field of a statm file (resident pages) in bytes; 0 when unreadable.
std::uint64_t resident_of(const std::string& statm_path) {
    std::ifstream statm(statm_path);
    std::uint64_t size_pages = 0;
    std::uint64_t resident_pages = 0;
    if (!(statm >> size_pages >> resident_pages)) return 0;
    return resident_pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// A family with one sample per worker, labelled worker="<index>".
prometheus::MetricFamily per_worker(const char* name, const char* help, prometheus::MetricType type,
                                    const std::vector<worker_gauge>& workers,
                                    std::uint64_t worker_gauge::*field) {
    prometheus::MetricFamily f = family(name, help, type);
    for (const worker_gauge& w : workers) {
        prometheus::ClientMetric m;
        m.label = {{"worker", std::to_string(w.index)}};
        const auto value = static_cast<double>(w.*field);
        if (type == prometheus::MetricType::Counter) {
            m.counter.value = value;
        } else {
            m.gauge.value = value;
        }
        f.metric.push_back(m);
    }
    return f;
}

void add_worker_families(std::vector<prometheus::MetricFamily>& families,
                         const std::vector<worker_gauge>& workers) {
    using prometheus::MetricType;
    const auto busy =
        std::count_if(workers.begin(), workers.end(), [](const worker_gauge& w) { return w.busy; });
    families.push_back(single("actionloop_workers",
                              "the action's worker processes (OW_WORKERS; 0 before /init)",
                              MetricType::Gauge, static_cast<double>(workers.size())));
    families.push_back(single("actionloop_workers_busy", "workers with an activation in them",
                              MetricType::Gauge, static_cast<double>(busy)));
    families.push_back(per_worker("actionloop_worker_resident_bytes",
                                  "each worker process's resident set size", MetricType::Gauge,
                                  workers, &worker_gauge::resident_bytes));
    families.push_back(per_worker("actionloop_worker_restarts_total",
                                  "each worker's process started again after it died",
                                  MetricType::Counter, workers, &worker_gauge::restarts));
}

}  // namespace

const char* outcome_name(activation_outcome o) {
    switch (o) {
        case activation_outcome::success:
            return "success";
        case activation_outcome::application_error:
            return "application_error";
        case activation_outcome::crash:
            return "crash";
        case activation_outcome::action_error:
            return "action_error";
        case activation_outcome::rejected:
            return "rejected";
        case activation_outcome::shutting_down:
            return "shutting_down";
    }
    return "rejected";
}

void latency_histogram::observe(std::chrono::nanoseconds elapsed) {
    const double seconds = std::chrono::duration<double>(elapsed).count();
    for (std::size_t i = 0; i < BOUNDS.size(); ++i) {
        if (seconds <= BOUNDS[i]) {
            buckets_[i].fetch_add(1, RELAXED);
            break;
        }
    }
    sum_ns_.fetch_add(static_cast<std::uint64_t>(std::max<std::int64_t>(elapsed.count(), 0)),
                      RELAXED);
    count_.fetch_add(1, RELAXED);
}

std::array<std::uint64_t, latency_histogram::BOUNDS.size()> latency_histogram::cumulative() const {
    std::array<std::uint64_t, BOUNDS.size()> out{};
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < BOUNDS.size(); ++i) {
        running += buckets_[i].load(RELAXED);
        out[i] = running;
    }
    return out;
}

double latency_histogram::sum_seconds() const {
    return static_cast<double>(sum_ns_.load(RELAXED)) / 1e9;
}

void activation_metrics::record(bool is_run, activation_outcome o, std::size_t request_bytes,
                                std::size_t answer_bytes, std::chrono::nanoseconds elapsed) {
    counts_[is_run][static_cast<std::size_t>(o)].fetch_add(1, RELAXED);
    if (o != activation_outcome::shutting_down) latency_[is_run].observe(elapsed);
    bytes_in_.fetch_add(request_bytes, RELAXED);
    bytes_out_.fetch_add(answer_bytes, RELAXED);
}

std::string render_metrics(const activation_metrics& counted, const metrics_gauges& gauges) {
    using prometheus::MetricType;
    std::vector<prometheus::MetricFamily> families;
    families.push_back(activations_family(counted));
    families.push_back(histogram_family("actionloop_init_duration_seconds",
                                        "/init latency: request read to answer ready",
                                        counted.latency(false)));
    families.push_back(histogram_family("actionloop_run_duration_seconds",
                                        "/run latency: request read to answer ready (queue "
                                        "wait included)",
                                        counted.latency(true)));
    families.push_back(single("actionloop_action_restarts_total",
                              "action processes started again after they died", MetricType::Counter,
                              static_cast<double>(gauges.restarts)));
    families.push_back(single("actionloop_queue_depth", "/run activations waiting for the action",
                              MetricType::Gauge, static_cast<double>(gauges.queue_depth)));
    families.push_back(single("actionloop_in_flight",
                              "/init and /run accepted whose answer is not yet written",
                              MetricType::Gauge, gauges.in_flight));
    families.push_back(single("actionloop_received_bytes_total", "/init and /run request bodies",
                              MetricType::Counter, static_cast<double>(counted.bytes_in())));
    families.push_back(single("actionloop_sent_bytes_total", "/init and /run answer bodies",
                              MetricType::Counter, static_cast<double>(counted.bytes_out())));
    families.push_back(refusals_family(counted));
    families.push_back(single("actionloop_open_connections",
                              "HTTP connections open on the action port", MetricType::Gauge,
                              static_cast<double>(gauges.open_connections)));
    families.push_back(single("actionloop_log_dropped_lines_total",
                              "the proxy's own log lines dropped because its stdout/stderr was "
                              "not read (OW_LOG_BUFFER_BYTES); the action's output is never "
                              "dropped",
                              MetricType::Counter, static_cast<double>(gauges.log_dropped_lines)));
    families.push_back(single("actionloop_log_dropped_bytes_total", "the bytes of those lines",
                              MetricType::Counter, static_cast<double>(gauges.log_dropped_bytes)));
    families.push_back(single("actionloop_log_backlog_bytes",
                              "the proxy's own log bytes waiting for its stdout/stderr",
                              MetricType::Gauge, static_cast<double>(gauges.log_backlog_bytes)));
    families.push_back(single("process_resident_memory_bytes", "the proxy's resident set size",
                              MetricType::Gauge, static_cast<double>(gauges.resident_bytes)));
    add_worker_families(families, gauges.workers);
    return prometheus::TextSerializer().Serialize(families);
}

std::uint64_t resident_bytes() { return resident_of("/proc/self/statm"); }

std::uint64_t resident_bytes_of(pid_t pid) {
    if (pid <= 0) return 0;
    return resident_of("/proc/" + std::to_string(pid) + "/statm");
}

}  // namespace actionloop
std::uint64_t resident_pages = 0;
