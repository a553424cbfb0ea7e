// delivery_loop.hpp — the one thread that wires alertgw's layers: reads the outbox
// (outbox_stream) into the ledger, starts what the ledger says is due on the transports,
// hands their reports back, writes what the ledger says to write, logs and counts what
// happened. Every rule is the ledger's; this only moves things between the pieces.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "gateway/ledger/delivery_ledger.hpp"
#include "gateway/options.hpp"
#include "gateway/outbox/outbox_stream.hpp"
#include "gateway/report/gateway_metrics.hpp"
#include "gateway/transport/curl_transport.hpp"
#include "redis/redis_client.hpp"

namespace alerts::gateway {

class delivery_loop {
public:
    delivery_loop(const options& settings, const std::atomic<bool>& stop_requested);
    /// Until a stop is requested and the deliveries in flight have ended; returns 0.
    int run();
    std::string render_metrics() const { return metrics_.render(); }

private:
    bool start_up();
    bool turn();
    void start_sends();
    void send(const send_order& order);
    void collect_reports();
    void report_events();
    void report_event(const ledger_event& event);
    bool talk_to_redis(steady_time now);
    void housekeeping(steady_time now);
    bool read_more();
    int read_wait_ms() const;
    void take(const std::vector<outbox_record>& records, bool claimed);
    void set_aside(const outbox_record& record, const std::string& problem);
    void write_out();
    void idle_wait();
    void redis_failed(const std::exception& error);
    void finish();
    void update_gauges();

    const options& settings_;
    const std::atomic<bool>& stop_requested_;
    std::vector<std::string> target_names_;
    redis_client redis_;
    outbox_stream outbox_;
    delivery_ledger ledger_;
    curl_transport transport_;
    gateway_metrics metrics_;
    bool stopping_ = false;
    steady_time redis_retry_at_{};
    steady_time last_redis_log_{};
    steady_time next_claim_{};
    steady_time next_keep_alive_{};
    steady_time next_backlog_{};
};

}  // namespace alerts::gateway
