// delivery_ledger.hpp — the pure core of alertgw: which outbox entries it holds, what each
// target still owes each of them, what is due when (retries with back-off), what to write to
// the dead-letter stream, what to record as progress and what to acknowledge. No I/O and no
// clock of its own: the caller passes `now`, hands over what the transports reported and
// writes what take_writes() returns (outbox/outbox_stream.hpp), so every rule is unit-tested
// without a server or a sleep (tests/gateway/delivery_ledger_test.cpp).
//
// Targets are independent: each has its own window of entries it is working on
// (`window_per_target`); an entry beyond a target's window is parked for that target alone and
// waits its turn there, while the other targets take it at once. An entry done for a target no
// longer counts against that target's window. The entry is acknowledged when every target is
// final (delivered, dead-lettered or skipped); until then its final targets are recorded in the
// progress hash <prefix>gw:<id>, so a restart or another gateway's claim never sends twice to a
// target that has it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gateway/ledger/attempt_result.hpp"
#include "gateway/ledger/retry_policy.hpp"

namespace alerts::gateway {

using steady_time = std::chrono::steady_clock::time_point;

struct target_spec {
    std::string name;  // the progress field, the metric label, the dead letter's target
    bool email = false;
};

enum class delivery_state { arriving, queued, parked, sending, waiting, delivered, dead, skipped };

bool is_final(delivery_state state);

/// One target's part of one entry.
struct target_progress {
    delivery_state state = delivery_state::arriving;
    int attempts = 0;
    std::string last_error;
    std::vector<std::string> recipients;  // e-mail: the recipients still to send to
    bool narrowed = false;                // e-mail: fewer recipients than the notification's
    bool saved = false;                   // this state is in the progress hash
};

/// An outbox entry as alertgw holds it.
struct held_entry {
    std::string id;
    std::int64_t commit_ms = 0;  // the entry id's time: when monitor committed it
    std::string dedup_key;
    std::string notification;  // compact JSON, as the outbox holds it
    std::vector<target_progress> targets;
    std::vector<std::string> delivered_to;  // target names that accepted it
    bool progress_may_exist = false;        // the progress hash was written or found
    bool listed_as_changed = false;         // in the ledger's list of writes to make
};

/// What add() needs from an outbox entry (outbox/outbox_entry.hpp reads it).
struct new_entry {
    std::string id;
    std::string dedup_key;
    std::string notification;
    std::vector<std::string> recipients;          // as the notification lists them
    std::map<std::string, std::string> progress;  // the progress hash, when claimed
    std::string only;  // a replayed dead letter: the one target it is for ("": every target)
    // The webhook targets the notification's routes name ("webhooks"); absent: every one.
    std::optional<std::vector<std::string>> webhooks;
};

struct dead_letter {
    std::string entry_id;
    std::string dedup_key;
    std::string target;
    std::string recipient;  // e-mail: the refused or malformed address(es); else empty
    std::string error;
    int attempts = 0;
    std::string notification;
};

/// One delivery to start now.
struct send_order {
    std::string entry_id;
    std::size_t target = 0;
    int attempt = 0;
    std::vector<std::string> recipients;  // e-mail
};

/// What happened, for the log and /metrics.
struct ledger_event {
    enum class kind { delivered, skipped, failed, retry, dead_letter, complete };
    kind what = kind::delivered;
    std::string entry_id;
    std::size_t target = 0;
    int attempts = 0;
    std::string error;
    std::string recipient;
};

/// One round of writes to Redis, in this order: dead letters, progress, acknowledgements.
struct ledger_writes {
    std::vector<dead_letter> dead_letters;
    std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>
        progress;                              // entry id → (target name, state word)
    std::vector<std::string> acknowledge;      // entry ids every target is done with
    std::vector<std::string> forget_progress;  // their progress hashes, to delete
    bool empty() const { return dead_letters.empty() && progress.empty() && acknowledge.empty(); }
};

/// What take_writes() would return, without building it (write_pacing.hpp decides by it).
enum class pending_writes { none, progress_only, urgent };  // urgent: dead letters or acks

struct ledger_limits {
    std::size_t window_per_target = 4096;  // entries one target works on at once
    std::size_t max_held = 65536;          // entries held in all (parked ones included)
    int concurrency = 64;                  // deliveries in flight per target
};

class delivery_ledger {
public:
    delivery_ledger(std::vector<target_spec> targets, retry_policy retry, ledger_limits limits);

    /// How many new entries may be read now: none when every target's window is full or
    /// max_held entries are held.
    std::size_t room() const;
    bool holds(const std::string& entry_id) const { return entries_.count(entry_id) != 0; }
    std::size_t held() const { return entries_.size(); }
    const held_entry* find(const std::string& entry_id) const;
    std::vector<std::string> held_ids() const;

    /// Takes an entry: each target not already final in its progress is queued (or parked
    /// when its window is full); malformed e-mail addresses are dead-lettered on their own.
    void add(new_entry entry);
    /// An entry with nothing to deliver (trimmed away, unreadable): acknowledged next write,
    /// after its dead letter when it has one.
    void acknowledge_unusable(const std::string& entry_id, std::optional<dead_letter> letter);

    /// Retries whose wait is over are queued again.
    void wake_due(steady_time now);
    /// The next retry's time, if any is waiting.
    std::optional<steady_time> next_wake() const;
    /// The deliveries to start now, at most `concurrency` in flight per target.
    std::vector<send_order> take_sends();
    bool has_sends_ready() const;
    int in_flight() const;
    int in_flight(std::size_t target) const { return targets_.at(target).in_flight; }

    /// What the transport reported for one send_order.
    void record(const std::string& entry_id, std::size_t target, const attempt_result& result,
                steady_time now);

    std::vector<ledger_event> take_events();
    /// The writes due now (the same again until writes_done()).
    ledger_writes take_writes() const;
    /// Their kind, in one pass over the changed entries and no copies.
    pending_writes pending() const;
    /// They are in Redis: acknowledged entries are forgotten.
    void writes_done(const ledger_writes& writes);

    const std::vector<target_spec>& targets() const { return specs_; }
    std::size_t active(std::size_t target) const { return targets_.at(target).active; }
    std::size_t parked(std::size_t target) const { return targets_.at(target).parked.size(); }

private:
    struct target_queue {
        std::deque<std::string> ready;   // queued, in order
        std::deque<std::string> parked;  // beyond the window, in order
        std::size_t active = 0;          // queued, sending or waiting
        int in_flight = 0;
    };

    void restore_progress(held_entry& entry, const new_entry& source);
    void check_recipients(held_entry& entry, std::size_t target);
    void schedule_new(held_entry& entry);
    void enter(held_entry& entry, std::size_t target);
    void settle(held_entry& entry, std::size_t target, delivery_state state,
                const std::string& error);
    void record_email(held_entry& entry, std::size_t target, const attempt_result& result,
                      steady_time now);
    void fail(held_entry& entry, std::size_t target, const attempt_result& result, steady_time now);
    void retry_later(held_entry& entry, std::size_t target, const std::string& error,
                     steady_time now);
    void unpark(std::size_t target);
    void letter(const held_entry& entry, std::size_t target, const std::string& recipient,
                const std::string& error);
    void emit(ledger_event::kind what, const held_entry& entry, std::size_t target,
              const std::string& error = {}, const std::string& recipient = {});
    void changed(const held_entry& entry);
    bool all_final(const held_entry& entry) const;
    void progress_of(const held_entry& entry, ledger_writes& writes) const;

    std::vector<target_spec> specs_;
    retry_policy retry_;
    ledger_limits limits_;
    std::unordered_map<std::string, held_entry> entries_;
    std::vector<target_queue> targets_;
    std::multimap<steady_time, std::pair<std::string, std::size_t>> wakes_;
    std::vector<std::string> changed_;   // entries whose progress or completion is to write
    std::vector<dead_letter> letters_;   // dead letters not yet written
    std::vector<std::string> unusable_;  // entries to acknowledge with nothing delivered
    std::vector<ledger_event> events_;
};

/// The progress hash's word for a final state ("delivered", "dead", "skipped"), or for an
/// e-mail still owed to some recipients ("retry:a@x,b@y").
std::string progress_word(const target_progress& progress);

}  // namespace alerts::gateway
