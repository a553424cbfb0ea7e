// redis_records.hpp — the Redis store's keys and values (docs/alerts.md, "Persistence").
//
//   <prefix>d:<len>:<account>:<device>   a device's record (string; absent = never changed)
//   <prefix>due                          pending holds: sorted set, member = the device key,
//                                        score = when the hold matures
//   <prefix>i:<16 hex digits>            a recent event id (hash of account, device, id), TTL
//   <prefix>devices                      how many device records exist (counter)
//
// A device record is one line of text: "2 <state> <notified> <hold_ts> <last_ts> <last_id>
// <notified_ts>" followed, per region cooldown, by " <last_alert> <len>:<region>" (older
// versions wrote "1 …" without <notified_ts>: still read; notified_ts is "nan" when unknown).
// A device with noise-rule state (flapping, silenced, inhibited, reminders) is written as
// version 3: "3 …<notified_ts> <noise bits> <reminders sent> <reminder base> <n> <change>*n"
// then its cooldowns. A site's group (docs/alerts.md, "Grouping") is version 4: version 3's fields,
// then " <down> <updates> <last_sent> <n>" and per change not yet announced
// " <ts> <d|u> <len>:<device>" (d: went down, u: came back), then its cooldowns (none).
// States are one letter (n online, f offline, i internet_offline); times print as the shortest text
// that reads back exactly (std::to_chars; records written with 17 significant digits read the
// same). The account's length in the key keeps any two (account, device) pairs apart whatever
// characters they hold.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/records.hpp"

namespace alerts {

std::string redis_device_key(std::string_view prefix, std::string_view account,
                             std::string_view device);
/// Splits a device key made by redis_device_key; false when `key` is not one (what it splits
/// rebuilds `key` exactly).
bool parse_redis_device_key(std::string_view prefix, std::string_view key,
                            std::string_view& account, std::string_view& device);
std::string redis_id_key(std::string_view prefix, std::uint64_t id_hash);
/// The same keys appended to `out` (no temporary strings), and a device key's length.
std::size_t redis_device_key_size(std::string_view prefix, std::string_view account,
                                  std::string_view device);
void append_redis_device_key(std::string& out, std::string_view prefix, std::string_view account,
                             std::string_view device);
void append_redis_id_key(std::string& out, std::string_view prefix, std::uint64_t id_hash);
/// A time as the records (and the due set's scores) write it: the shortest text that reads
/// back as exactly `v` ("-inf" included).
void append_redis_number(std::string& out, double v);

/// Builds one device's record from export_device() and export_cooldowns_of().
class redis_value_encoder : public record_sink {
public:
    void on_device(const device_record& r) override;
    void on_cooldown(const cooldown_record& r) override;
    void on_id(std::uint64_t) override {}
    /// The record; resets the encoder.
    std::string finish();

private:
    std::string device_;
    std::string cooldowns_;
};

/// Replays one record read at the key of (account, device) into `sink`; false (and nothing
/// replayed) when the text is not a record this version wrote.
bool decode_redis_value(std::string_view text, std::string_view account, std::string_view device,
                        record_sink& sink);

}  // namespace alerts
