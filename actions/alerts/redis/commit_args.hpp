// commit_args.hpp — the commit script's arguments (redis_scripts.hpp), built from plain values.
//
// Pure: no Redis, no core, no clock. The store (redis_store_commit.cpp) gathers what a commit
// writes and compares, and this writes the EVALSHA/EVAL arguments that follow the script: numkeys,
//   KEYS: the due set, the device counter, the creations log, the outbox, the written device
//         keys, the checked device keys, the id keys;
//   ARGV: N, the id TTL, the creations log's length, M, the outbox's cap and trim length, C,
//         per written device its record as read, its new record and its due time, per checked
//         device its record as read and its due time, per notification its key and its JSON;
//         then, only when there are any, the extras: their count X, the devices-now hash, the
//         history's length and time to live, and per extra its op, key and value;
// in the protocol's form (RESP bulk strings), straight into one reused buffer. The creations
// log's entries (at most 1,000 keys each) are the script's own: it names the created keys from
// the written ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace alerts {

/// What every commit of a store shares: its keys and its bounds (redis_store_options).
struct commit_settings {
    std::string_view prefix;  // of the device and id keys
    std::string_view due_key, devices_key, log_key, outbox_key;
    int id_ttl = 600;                      // seconds (ALERT_REDIS_ID_TTL)
    int log_length = 10000;                // the creations log's approximate MAXLEN
    std::size_t outbox_maxlen = 1000000;   // ALERT_OUTBOX_MAXLEN
    std::size_t outbox_trim_above = 1000;  // trim acknowledged entries past this length
    std::string_view now_key;              // the devices-now hash (<prefix>now)
    int history_length = 50;               // explanations kept per device
    int history_ttl = 30 * 86400;          // seconds a device's history outlives its last one
};

/// A device the commit writes: its record as read ("": none), its new record, and when its
/// next hold, flapping's end or reminder is due (infinity: none).
struct commit_write {
    std::string_view account, device;
    std::string_view as_read, record;
    double due = 0;
};

/// A device the commit compares and does not write (a bridge or camera of a written one): its
/// record as read ("": none) and its due time (infinity: none), set again.
struct commit_check {
    std::string_view account, device;
    std::string_view as_read;
    double due = 0;
};

/// A notification for the outbox: its dedupKey and its JSON (compact, as the answer's).
struct commit_note {
    std::string_view key, json;
};

/// What the commit keeps for alertgw's console, after everything else (docs/alerts.md,
/// "State and explanations"): 'H' sets a device's entry in the devices-now hash (key: the
/// field, value: its JSON), 'D' removes it, 'W' pushes an explanation onto a device's history
/// (key: the history's key, value: its JSON; the history keeps its newest `history_length`).
struct commit_extra {
    char op = 'H';
    std::string_view key, value;
};

/// One commit's contents (the store keeps one, reused from batch to batch).
struct commit_contents {
    std::vector<commit_write> writes;
    std::vector<commit_check> checks;
    std::vector<std::uint64_t> ids;  // id hashes to remember (alert_core::id_hash)
    std::vector<commit_note> notes;  // empty when the outbox is off
    std::vector<commit_extra> extras;
    void clear();
};

/// Appends to `out` the arguments after the script (numkeys, KEYS, ARGV) as RESP bulk
/// strings; returns how many it appended (1 + numkeys + 7 + 3N + 2C + 2M, and 4 + 3X with
/// extras).
std::size_t append_commit_args(std::string& out, const commit_settings& settings,
                               const commit_contents& contents);

}  // namespace alerts
