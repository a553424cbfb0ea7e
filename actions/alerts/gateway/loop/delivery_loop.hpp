// delivery_loop.hpp — the one thread that wires alertgw's layers: reads the outbox
// (outbox_stream) into the ledger, starts what the ledger says is due on the transports,
// hands their reports back, writes what the ledger says to write, logs and counts what
// happened. Every rule is the ledger's; this only moves things between the pieces.
// Waiting: new entries are asked for on a connection of their own (XREADGROUP … BLOCK, sent
// without waiting for the answer), and the loop sleeps in one poll on the transfers' sockets
// and that connection together: a new entry, a transfer's progress, the next retry or a
// SIGTERM (at most 100 ms) wakes it. Writes (progress, acks) use the other connection, so an
// open read never delays them.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "gateway/ledger/delivery_ledger.hpp"
#include "gateway/ledger/refresh_schedule.hpp"
#include "gateway/ledger/write_pacing.hpp"
#include "gateway/options.hpp"
#include "gateway/outbox/outbox_stream.hpp"
#include "gateway/report/delay_timeline.hpp"
#include "gateway/report/gateway_metrics.hpp"
#include "gateway/transport/curl_transport.hpp"
#include "redis/redis_client.hpp"
#include "redis/redis_memory.hpp"

namespace alerts::gateway {

class delivery_loop {
public:
    delivery_loop(const options& settings, const std::atomic<bool>& stop_requested);
    /// Until a stop is requested and the deliveries in flight have ended; returns 0.
    int run();
    std::string render_metrics() const { return metrics_.render(); }
    /// The delays of the last hours, minute by minute (the console's plot; any thread).
    const delay_timeline& delays() const { return delays_; }

private:
    bool start_up();
    bool turn();
    void start_sends();
    void send(const send_order& order);
    void collect_reports();
    void report_events();
    void report_event(const ledger_event& event);
    void talk_to_redis(steady_time now);
    void housekeeping(steady_time now);
    void ask_for_more(steady_time now);
    void take_answer();
    void drop_read();
    std::size_t free_room() const;
    int wait_ms(steady_time now) const;
    void wait();
    void take(const std::vector<outbox_record>& records, bool claimed);
    void set_aside(const outbox_record& record, const std::string& problem);
    void write_out();
    void redis_failed(const std::exception& error);
    void watch_memory(steady_time now);
    void finish();
    void update_gauges();

    const options& settings_;
    const std::atomic<bool>& stop_requested_;
    std::vector<std::string> target_names_;
    redis_client redis_;
    outbox_stream outbox_;
    redis_client reader_redis_;
    outbox_stream reader_;  // its XREADGROUP … BLOCK is answered while the loop does the rest
    bool asking_ = false;
    std::size_t asked_ = 0;  // how many entries the open read may bring
    steady_time answer_due_{};
    delivery_ledger ledger_;
    // When each held entry is claimed again: every --claim-after / 3 (0.1 to 10 s) from when
    // it was taken, one command (1,000 ids) a turn.
    refresh_schedule refreshes_;
    write_pacing pacing_;
    curl_transport transport_;
    gateway_metrics metrics_;
    delay_timeline delays_;
    bool stopping_ = false;
    steady_time redis_retry_at_{};
    steady_time last_redis_log_{};
    steady_time next_claim_{};
    steady_time next_backlog_{};
    memory_watch memory_watch_{std::chrono::seconds(10)};
};

}  // namespace alerts::gateway
