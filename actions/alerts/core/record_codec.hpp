// record_codec.hpp — the binary form of the core's persistent records, in checksummed frames.
//
// A frame is: magic "ALJ1" (u32), payload length (u32), sequence number (u64), checksum of the
// payload (u64), payload. The payload is a run of records:
//   'E' account device state notified hold_ts last_ts last_id notified_ts   (a device)
//   'G' the same, then noise reminders_sent reminder_base n change*n (a device with noise-rule
//       state: flapping, silenced, inhibited, reminders; u8 u32 f64 u8 f64*n)
//   'S' the same as 'G', then down updates last_sent n (name ts down)*n   (a site's group:
//       u32 u32 f64 u32, then per change a name, f64 and u8)
//   'D' account device state notified hold_ts last_ts last_id   (a device, as older versions
//                                                               wrote it: read, never written)
//   'C' account device region last_alert                        (a region cooldown)
//   'I' id_hash                                                 (a recent id)
// with names as u8 length + bytes and numbers in native byte order (the file never leaves the
// machine that wrote it). Decoding stops at the first torn or corrupt frame.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/records.hpp"

namespace alerts {

/// Collects records into one frame.
class frame_encoder : public record_sink {
public:
    void on_device(const device_record& r) override;
    void on_cooldown(const cooldown_record& r) override;
    void on_id(std::uint64_t id_hash) override;

    bool empty() const { return payload_.empty(); }
    /// The complete frame, stamped with `seq`; resets the encoder.
    std::string finish(std::uint64_t seq);

private:
    std::string payload_;
};

struct decode_result {
    std::size_t valid_bytes = 0;  // length of the prefix made of whole, intact frames
    std::uint64_t last_seq = 0;   // sequence number of the last intact frame (0: none)
    std::size_t frames = 0;
};

/// Replays into `sink` every intact frame of `data` whose sequence number is > `after_seq`.
decode_result decode_frames(std::string_view data, std::uint64_t after_seq, record_sink& sink);

}  // namespace alerts
