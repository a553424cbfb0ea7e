// delivery_loop.cpp — see delivery_loop.hpp.
#include "gateway/loop/delivery_loop.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "gateway/email_message.hpp"
#include "gateway/report/delivery_log.hpp"

namespace alerts::gateway {

namespace {

using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;

constexpr auto REDIS_TIMEOUT = std::chrono::seconds(5);
constexpr int LONGEST_WAIT_MS = 100;  // SIGTERM is seen within it
// How long an XREADGROUP waits in Redis for new entries: the loop does not wait on it (it
// polls its socket), so this only sets how often an idle gateway asks again.
constexpr int READ_BLOCK_MS = 1000;
constexpr std::size_t CLAIM_BATCH = 100;
// Held entries claimed again per turn of the loop: one XCLAIM … JUSTID command, about a
// millisecond of Redis (refresh_schedule.hpp).
constexpr std::size_t REFRESH_PER_TURN = 1000;
// How long progress alone may wait to share a round trip with more (write_pacing.hpp).
constexpr milliseconds PROGRESS_DELAY(50);

double wall_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void log_out(const std::string& line) {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
}

void log_err(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

std::vector<target_spec> specs_of(const options& settings) {
    std::vector<target_spec> specs;
    specs.reserve(settings.webhooks.size() + 1);
    if (!settings.smtp.url.empty()) specs.push_back({"email", true});
    for (const webhook_target& webhook : settings.webhooks) specs.push_back({webhook.name, false});
    return specs;
}

std::vector<std::string> names_of(const std::vector<target_spec>& specs) {
    std::vector<std::string> names;
    names.reserve(specs.size());
    for (const target_spec& spec : specs) names.push_back(spec.name);
    return names;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
    return out;
}

}  // namespace

delivery_loop::delivery_loop(const options& settings, const std::atomic<bool>& stop_requested)
    : settings_(settings),
      stop_requested_(stop_requested),
      target_names_(names_of(specs_of(settings))),
      redis_(settings.redis, std::chrono::duration_cast<milliseconds>(REDIS_TIMEOUT)),
      outbox_(redis_, settings.prefix, settings.consumer),
      reader_redis_(settings.redis, std::chrono::duration_cast<milliseconds>(REDIS_TIMEOUT)),
      reader_(reader_redis_, settings.prefix, settings.consumer),
      ledger_(specs_of(settings),
              retry_policy{settings.max_attempts, settings.backoff_first, settings.backoff_max},
              ledger_limits{settings.window, settings.max_held, settings.concurrency}),
      refreshes_(std::clamp(settings.claim_after / 3, milliseconds(100), milliseconds(10000)),
                 REFRESH_PER_TURN),
      pacing_(PROGRESS_DELAY),
      transport_(settings.timeout,
                 static_cast<long>(settings.concurrency) * static_cast<long>(target_names_.size())),
      metrics_(target_names_) {}

int delivery_loop::run() {
    log_err(fields_log({{"event", "start"},
                        {"consumer", settings_.consumer},
                        {"outbox", outbox_.outbox_key()},
                        {"targets", joined(target_names_)}}));
    if (!start_up()) return 0;
    while (turn()) {
    }
    finish();
    return 0;
}

// The group (from the stream's start) and this consumer's own pending entries; Redis not
// there yet is waited for (until SIGTERM).
bool delivery_loop::start_up() {
    for (;;) {
        if (stop_requested_.load()) return false;
        try {
            outbox_.create_group();
            std::string cursor = "0";
            for (;;) {
                const auto records = outbox_.read_own_pending(cursor, 256);
                if (records.empty()) break;
                outbox_.confirm_replicated(settings_.min_replicas, settings_.wait_for_replicas);
                take(records, true);
                if (ledger_.room() == 0) break;
            }
            return true;
        } catch (const redis_error& error) {
            redis_failed(error);
            std::this_thread::sleep_for(milliseconds(200));
        }
    }
}

bool delivery_loop::turn() {
    const steady_time now = steady::now();
    if (stop_requested_.load() && !stopping_) {
        stopping_ = true;
        drop_read();
        log_err(fields_log(
            {{"event", "stopping"}, {"inFlight", std::to_string(transport_.in_flight())}}));
    }
    if (!stopping_) {
        ledger_.wake_due(now);
        start_sends();
    }
    collect_reports();
    if (stopping_ && transport_.in_flight() == 0) return false;
    talk_to_redis(now);
    update_gauges();
    wait();
    return true;
}

void delivery_loop::start_sends() {
    for (const send_order& order : ledger_.take_sends()) send(order);
}

void delivery_loop::send(const send_order& order) {
    const held_entry* entry = ledger_.find(order.entry_id);
    if (!entry) return;
    delivery_request request{order.entry_id, order.target, "", order.recipients, entry->dedup_key};
    const bool has_email = !settings_.smtp.url.empty();
    if (has_email && order.target == 0) {
        const auto notification = nlohmann::json::parse(entry->notification, nullptr, false);
        request.body = email_text(notification, entry->dedup_key, settings_.from, wall_seconds());
        transport_.send_email(std::move(request), settings_.smtp, settings_.from);
        return;
    }
    request.body = entry->notification;
    transport_.send_webhook(std::move(request),
                            settings_.webhooks[order.target - (has_email ? 1 : 0)]);
}

void delivery_loop::collect_reports() {
    const steady_time now = steady::now();
    for (const delivery_report& report : transport_.collect()) {
        ledger_.record(report.entry_id, report.target, report.result, now);
    }
    report_events();
}

void delivery_loop::report_events() {
    for (const ledger_event& event : ledger_.take_events()) report_event(event);
}

void delivery_loop::report_event(const ledger_event& event) {
    target_metrics& counts = metrics_.targets[event.target];
    const held_entry* entry = ledger_.find(event.entry_id);
    const double now = wall_seconds();
    switch (event.what) {
        case ledger_event::kind::delivered:
            counts.delivered->Increment();
            if (entry) counts.delay->Observe(now - static_cast<double>(entry->commit_ms) / 1000.0);
            break;
        case ledger_event::kind::skipped:
            counts.skipped->Increment();
            break;
        case ledger_event::kind::failed:
            counts.failed->Increment();
            break;
        case ledger_event::kind::retry:
            counts.retried->Increment();
            log_out(event_log(event, entry, target_names_[event.target]));
            break;
        case ledger_event::kind::dead_letter:
            counts.dead->Increment();
            log_out(event_log(event, entry, target_names_[event.target]));
            break;
        case ledger_event::kind::complete:
            if (!entry) break;
            const notification_lines lines =
                notification_log(*entry, now, settings_.alert_delay_threshold);
            log_out(lines.delivered);
            if (!lines.over_threshold.empty()) log_out(lines.over_threshold);
            delays_.add(now, lines.alert_delay, lines.delivery_delay);
            break;
    }
}

void delivery_loop::talk_to_redis(steady_time now) {
    if (now < redis_retry_at_) return;
    try {
        write_out();
        if (stopping_) return;
        housekeeping(now);
        ask_for_more(now);
    } catch (const redis_error& error) {
        redis_failed(error);
    }
}

void delivery_loop::housekeeping(steady_time now) {
    const milliseconds claim_every =
        std::clamp(settings_.claim_after / 4, milliseconds(100), milliseconds(5000));
    if (now >= next_claim_) {
        next_claim_ = now + claim_every;
        std::string cursor = "0-0";
        for (int round = 0; round < 8 && free_room() > 0; ++round) {
            const std::vector<outbox_record> claimed =
                outbox_.claim(settings_.claim_after, cursor, std::min(CLAIM_BATCH, free_room()));
            if (!claimed.empty())
                outbox_.confirm_replicated(settings_.min_replicas, settings_.wait_for_replicas);
            take(claimed, true);
            if (cursor == "0-0" || cursor.empty()) break;
        }
    }
    // The held entries due for it, at most one command's worth a turn (refresh_schedule.hpp).
    const std::vector<std::string> due =
        refreshes_.due(now, [this](const std::string& id) { return ledger_.holds(id); });
    if (!due.empty()) outbox_.keep_alive(due);
    if (now >= next_backlog_) {
        next_backlog_ = now + milliseconds(1000);
        const group_backlog backlog = outbox_.backlog();
        if (backlog.lag >= 0) metrics_.lag->Set(backlog.lag);
        if (backlog.pending >= 0) metrics_.pending->Set(backlog.pending);
    }
    watch_memory(now);
}

// How close Redis is to refusing the actions' commits (maxmemory with noeviction): two gauges,
// and a line on stderr from 80 % (redis/redis_memory.hpp), once per check.
void delivery_loop::watch_memory(steady_time now) {
    if (!memory_watch_.due(now)) return;
    const redis_memory memory = query_redis_memory(redis_);
    metrics_.redis_used_memory->Set(static_cast<double>(memory.used));
    metrics_.redis_maxmemory->Set(static_cast<double>(memory.maxmemory));
    if (const std::string warning = memory_warning(memory, redis_.label()); !warning.empty()) {
        log_err("alertgw: warning: " + warning);
    }
}

// New entries are asked for once at a time, on the reader's connection; wait() reads the answer
// when it arrives. An answer overdue (Redis hanging) drops that connection.
void delivery_loop::ask_for_more(steady_time now) {
    if (asking_) {
        if (now < answer_due_) return;
        drop_read();
        throw redis_timeout("redis " + reader_redis_.label() + ": XREADGROUP not answered");
    }
    const std::size_t count = std::min(static_cast<std::size_t>(settings_.batch), free_room());
    if (count == 0) return;
    reader_.ask_new(count, READ_BLOCK_MS);
    asking_ = true;
    asked_ = count;
    answer_due_ = now + milliseconds(READ_BLOCK_MS) + REDIS_TIMEOUT;
}

void delivery_loop::take_answer() {
    try {
        const std::vector<outbox_record> records = reader_.new_records();
        // Not confirmed by a replica: the read fails, its connection goes (the next one asks
        // the sentinels where the primary is), and the entries stay pending for this consumer,
        // claimed again once idle for --claim-after (from the new primary after a failover).
        if (!records.empty())
            reader_.confirm_replicated(settings_.min_replicas, settings_.wait_for_replicas);
        asking_ = false;
        asked_ = 0;
        take(records, false);
    } catch (const redis_error& error) {
        drop_read();
        redis_failed(error);
    }
}

// What the open read might bring is not there yet: the connection goes (Redis keeps what it
// had handed out pending for this consumer, delivered after a restart or claimed by another).
void delivery_loop::drop_read() {
    if (asking_) reader_redis_.disconnect();
    asking_ = false;
    asked_ = 0;
}

// The ledger's room, less what the open read may still bring.
std::size_t delivery_loop::free_room() const {
    const std::size_t room = ledger_.room();
    return room > asked_ ? room - asked_ : 0;
}

// Until the next thing to do: at once when sends are ready; else up to the next retry, the
// progress waiting to be written, the end of a pause after a Redis error, or LONGEST_WAIT_MS.
int delivery_loop::wait_ms(steady_time now) const {
    if (!stopping_ && ledger_.has_sends_ready()) return 0;
    steady_time until = now + milliseconds(LONGEST_WAIT_MS);
    if (const auto wake = ledger_.next_wake(); wake && !stopping_) until = std::min(until, *wake);
    if (redis_retry_at_ > now) until = std::min(until, redis_retry_at_);
    if (const auto write = pacing_.next_due()) until = std::min(until, *write);
    const auto left = std::chrono::duration_cast<milliseconds>(until - now).count();
    return static_cast<int>(std::clamp<long long>(left, 0, LONGEST_WAIT_MS));
}

// One poll on the transfers and the open read together.
void delivery_loop::wait() {
    const int reader_fd = asking_ ? reader_.fd() : -1;
    if (transport_.wait(wait_ms(steady::now()), reader_fd)) take_answer();
}

void delivery_loop::take(const std::vector<outbox_record>& records, bool claimed) {
    std::vector<new_entry> fresh;
    for (const outbox_record& record : records) {
        if (ledger_.holds(record.id)) continue;
        if (record.trimmed) {  // pending, but gone from the stream: nothing to deliver
            ledger_.acknowledge_unusable(record.id, std::nullopt);
            continue;
        }
        auto read = read_record(record);
        if (auto* problem = std::get_if<unreadable>(&read)) {
            set_aside(record, problem->problem);
            continue;
        }
        fresh.push_back(std::move(std::get<new_entry>(read)));
    }
    // A claimed entry may have progress: a target that already has it is not sent again.
    if (claimed && !fresh.empty()) {
        std::vector<std::string> ids;
        ids.reserve(fresh.size());
        for (const new_entry& entry : fresh) ids.push_back(entry.id);
        auto progress = outbox_.progress_of(ids);
        for (std::size_t i = 0; i < fresh.size(); ++i) fresh[i].progress = std::move(progress[i]);
    }
    const steady_time now = steady::now();
    for (new_entry& entry : fresh) {
        (claimed ? metrics_.claimed : metrics_.read)->Increment();
        refreshes_.taken(entry.id, now);
        ledger_.add(std::move(entry));
    }
    report_events();
}

void delivery_loop::set_aside(const outbox_record& record, const std::string& problem) {
    metrics_.unreadable->Increment();
    log_out(fields_log({{"level", "error"},
                        {"event", "deadLetter"},
                        {"target", "all"},
                        {"entry", record.id},
                        {"dedupKey", record.dedup_key},
                        {"error", problem}}));
    ledger_.acknowledge_unusable(record.id, dead_letter{record.id, record.dedup_key, "all", "",
                                                        problem, 0, record.notification});
}

void delivery_loop::write_out() {
    if (!pacing_.due(ledger_.pending(), steady::now(), stopping_)) return;
    const ledger_writes writes = ledger_.take_writes();
    const long long dropped = outbox_.write(writes, settings_.dead_letter_max);
    pacing_.written();
    ledger_.writes_done(writes);
    metrics_.acked->Increment(static_cast<double>(writes.acknowledge.size()));
    if (dropped > 0) metrics_.dead_letters_dropped->Increment(static_cast<double>(dropped));
}

void delivery_loop::redis_failed(const std::exception& error) {
    metrics_.redis_errors->Increment();
    // With sentinels, the next command asks them again where the primary is (a READONLY or
    // LOADING answer keeps the connection otherwise).
    if (!redis_.url().sentinels.empty()) redis_.disconnect();
    const steady_time now = steady::now();
    redis_retry_at_ = now + milliseconds(500);
    if (now - last_redis_log_ > std::chrono::seconds(5)) {
        last_redis_log_ = now;
        log_err(fields_log({{"level", "error"}, {"event", "redisError"}, {"error", error.what()}}));
    }
}

// Everything in flight has ended: write what it came to. Redis gone now leaves the entries
// pending (another gateway, or this one restarted, delivers them). At most a few seconds: a
// Redis that does not answer must not hold the exit for long.
void delivery_loop::finish() {
    const steady_time give_up = steady::now() + std::chrono::seconds(3);
    while (!ledger_.take_writes().empty() && steady::now() < give_up) {
        try {
            write_out();
        } catch (const redis_error& error) {
            redis_failed(error);
            std::this_thread::sleep_for(milliseconds(100));
        }
    }
    log_err(fields_log({{"event", "stopped"}, {"unacknowledged", std::to_string(ledger_.held())}}));
}

void delivery_loop::update_gauges() {
    metrics_.in_flight->Set(transport_.in_flight());
    metrics_.held->Set(static_cast<double>(ledger_.held()));
    for (std::size_t target = 0; target < target_names_.size(); ++target) {
        metrics_.targets[target].parked->Set(static_cast<double>(ledger_.parked(target)));
    }
}

}  // namespace alerts::gateway
