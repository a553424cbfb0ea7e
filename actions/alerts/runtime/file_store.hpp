// file_store.hpp — the on-disk state store under ALERT_STATE_DIR.
//
// Layout: `journal` (append-only frames, one per activation that changed anything: the changed
// devices, cooldowns and ids of effective events), `snapshot` (one frame with the whole
// persistent state, written to `snapshot.tmp` and renamed), `lock` (flock: one process per
// directory). A frame's sequence number tells which journal frames a snapshot already holds,
// so a crash between the snapshot's rename and the journal's truncation replays nothing twice.
// Same-state heartbeats change nothing persistent and write nothing. The write is one
// write(2) per activation; fsync(2) only when asked (a killed process loses nothing already
// written; fsync protects against a machine crash): then the journal after each write, the
// snapshot before its rename, and the directory after the rename (before the journal is
// emptied) and when the store opens (the journal may be new; a new directory's parent too).
#pragma once

#include <cstdint>
#include <string>

#include "core/state_store.hpp"

namespace alerts {

struct file_store_options {
    std::string dir;
    bool fsync = false;
    std::size_t compact_bytes = 16u << 20;  // compact once the journal is over this size
};

class file_store : public state_store {
public:
    explicit file_store(file_store_options options);
    ~file_store() override;
    file_store(const file_store&) = delete;
    file_store& operator=(const file_store&) = delete;

    void load(alert_core& core) override;
    void commit(const alert_core& core) override;
    /// Writes a snapshot of the whole state and empties the journal.
    void compact(const alert_core& core);

    std::size_t journal_bytes() const { return journal_bytes_; }

private:
    std::string path(const char* name) const { return options_.dir + "/" + name; }
    void lock_dir();
    void append(const std::string& frame);

    file_store_options options_;
    int lock_fd_ = -1;
    int journal_fd_ = -1;
    std::uint64_t seq_ = 0;
    std::size_t journal_bytes_ = 0;
};

}  // namespace alerts
