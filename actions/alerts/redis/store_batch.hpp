// store_batch.hpp — what the Redis store holds for one batch only (redis_store.hpp).
//
// Everything here is about the batch being read, decided and committed: the devices it reads,
// the replies the records as read point into, the commit's contents. Nothing of it is trusted
// after the batch (or a failed attempt): the store clears it, and only the buffers' capacity
// is reused — commands are written in the protocol's form into them, no string per key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "redis/commit_args.hpp"
#include "redis/damaged_keys.hpp"
#include "redis/redis_client.hpp"

namespace alerts {

/// A device the batch reads: one of its own, a bridge or camera of one, or a due device.
struct batch_device {
    std::string_view account, device;  // into the batch, the config, or extra_keys
    std::uint64_t hash = 0;            // alert_core::device_key_hash
    std::uint32_t index = 0;           // in the core, or string_interner::npos
};

struct store_batch {
    // The devices and ids the batch reads (collect_keys, then the due devices outside it).
    std::vector<batch_device> devices;  // the batch's distinct devices, then due ones outside it
    std::size_t batch_devices = 0;      // how many of devices are the batch's (and its links')
    std::vector<std::uint32_t> table;   // open addressing over devices: index + 1, 0 = empty
    std::string id_args;                // RESP arguments: the id keys
    std::size_t id_count = 0;
    std::vector<std::uint64_t> id_hashes;
    double max_ts = 0;  // the batch's latest ts (due devices are read up to it)
    const redisReply* silences_version = nullptr;  // GET <prefix>silences:v, in held

    // The read (its first and second round trips).
    std::string device_args;                   // RESP arguments: the batch's device keys
    std::string head;                          // a command's RESP header
    std::vector<std::uint32_t> read_list;      // positions in devices read by the first MGET
    std::vector<std::uint32_t> skipped;        // positions in devices not read
    std::vector<std::uint32_t> second;         // positions in devices read in a second trip
    std::vector<std::uint32_t> nil_unknown;    // read, no record, not yet in the core
    std::vector<std::uint32_t> due_positions;  // positions in devices of the due devices
    std::vector<std::uint32_t> due_all;        // the same, with or without bridges
    double due_horizon = 0;                    // the due set was read up to this time
    std::vector<std::string> extra_keys;       // due device keys outside the batch
    bool mark_absent = false;                  // this attempt's nil replies prove absence
    std::uint64_t read_pending = 0;            // the due set's size, as read
    std::uint64_t read_devices = 0;            // the device counter, as read
    std::vector<redis_reply> held;             // the replies the records as read point into
    std::unordered_map<std::uint32_t, std::string_view> read;  // device index -> record as read

    // Damaged keys (docs/alerts.md, "Damaged keys"): this attempt's, and the device keys whose
    // text is no record (position in devices -> the text as read: what the commit compares).
    damaged_keys damaged;
    std::unordered_map<std::uint32_t, std::string_view> damaged_texts;

    // The commit: the devices it writes (core indices) and compares (positions in devices),
    // the records it writes (one buffer), its contents and its arguments.
    std::vector<std::uint32_t> commit_devices;
    std::vector<std::uint32_t> checks;
    std::string records;
    std::vector<std::size_t> record_ends;  // in records, per written device
    std::vector<std::string> notes;        // per notification: its key, then its JSON
    commit_contents contents;
    std::string command;  // the commit's arguments (commit_args.hpp)
    // The console's extras (commit_args.hpp): the texts they point into, and the core indices
    // of the devices that were notable (device_status.hpp) as read.
    std::vector<std::string> extra_texts;
    std::vector<std::uint32_t> was_notable;
    bool wrote = false;  // the last commit wrote something
};

}  // namespace alerts
