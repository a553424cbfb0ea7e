// gateway_metrics.cpp — see gateway_metrics.hpp.
#include "gateway/report/gateway_metrics.hpp"

#include <prometheus/text_serializer.h>

namespace alerts::gateway {

namespace {

prometheus::Family<prometheus::Counter>& counters(prometheus::Registry& registry, const char* name,
                                                  const char* help) {
    return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

}  // namespace

gateway_metrics::gateway_metrics(const std::vector<std::string>& target_names)
    : registry_(std::make_shared<prometheus::Registry>()) {
    add_targets(target_names);
    auto gauge = [this](const char* name, const char* help) {
        return &prometheus::BuildGauge().Name(name).Help(help).Register(*registry_).Add({});
    };
    auto counter = [this](const char* name, const char* help) {
        return &counters(*registry_, name, help).Add({});
    };
    lag = gauge("alertgw_outbox_lag",
                "Outbox entries not yet read by the consumer group alertgw (XINFO GROUPS lag)");
    pending = gauge("alertgw_outbox_pending",
                    "Outbox entries read by some gateway and not yet acknowledged");
    in_flight = gauge("alertgw_in_flight", "Deliveries in flight in this gateway");
    held = gauge("alertgw_entries_held", "Outbox entries this gateway holds (read, not acked)");
    read = counter("alertgw_read_total", "Outbox entries read (new)");
    claimed = counter("alertgw_claimed_total",
                      "Outbox entries claimed from a gateway that stopped (XAUTOCLAIM)");
    acked = counter("alertgw_acked_total", "Outbox entries acknowledged");
    unreadable = counter("alertgw_unreadable_total",
                         "Outbox entries that hold no readable notification (dead-lettered)");
    redis_errors = counter("alertgw_redis_errors_total", "Redis commands that failed");
    dead_letters_dropped =
        counter("alertgw_dead_letters_dropped_total",
                "Old dead letters trimmed from <prefix>deadletter by its cap (--dead-letter-max)");
    redis_used_memory = gauge("alertgw_redis_used_memory_bytes",
                              "Redis's used_memory (INFO memory), asked every 10 s");
    redis_maxmemory = gauge("alertgw_redis_maxmemory_bytes",
                            "Redis's maxmemory (0: no limit); at it, with noeviction, Redis "
                            "refuses every commit of the actions");
}

void gateway_metrics::add_targets(const std::vector<std::string>& target_names) {
    auto& delivered = counters(*registry_, "alertgw_delivered_total",
                               "Notifications a target accepted (webhook 2xx, SMTP 250)");
    auto& failed = counters(*registry_, "alertgw_failed_total",
                            "Delivery attempts that failed (error, time-out, refusal)");
    auto& retried = counters(*registry_, "alertgw_retried_total",
                             "Failed attempts scheduled again after a backoff");
    auto& dead = counters(*registry_, "alertgw_dead_lettered_total",
                          "Dead letters written for a target (one per refused recipient)");
    auto& skipped = counters(*registry_, "alertgw_skipped_total",
                             "Notifications with nothing to send to a target (e-mail: no "
                             "recipients)");
    auto& delay = prometheus::BuildHistogram()
                      .Name("alertgw_delivery_delay_seconds")
                      .Help("From the outbox commit (the entry id's time) to the target's "
                            "acceptance")
                      .Register(*registry_);
    auto& parked = prometheus::BuildGauge()
                       .Name("alertgw_parked")
                       .Help("Entries waiting beyond a target's window (--window)")
                       .Register(*registry_);
    const prometheus::Histogram::BucketBoundaries bounds = {
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600};
    for (const std::string& name : target_names) {
        const prometheus::Labels labels = {{"target", name}};
        targets.push_back({&delivered.Add(labels), &failed.Add(labels), &retried.Add(labels),
                           &dead.Add(labels), &skipped.Add(labels), &delay.Add(labels, bounds),
                           &parked.Add(labels)});
    }
}

std::string gateway_metrics::render() const {
    return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace alerts::gateway
