// state_store.hpp — where the core's state goes between activations.
//
// The core itself lives in the warm action process, so the embedded default keeps state in
// memory (memory_store). A store that must survive a restart (file_store under
// ALERT_STATE_DIR) persists, after each activation and before it answers, what process()
// reports in alert_core::changes(), and gives it all back to a fresh core in load(). A store
// shared by many containers (redis_store) overrides process() itself: it reads the batch's
// devices before the core decides and commits the changes afterwards (docs/alerts.md,
// "Persistence").
#pragma once

#include "core/alert_core.hpp"

namespace alerts {

class state_store {
public:
    virtual ~state_store() = default;
    /// Restores saved state into `core`, whose config must be installed. Called once.
    virtual void load(alert_core& core) = 0;
    /// Persists what the core's last process() changed.
    virtual void commit(const alert_core& core) = 0;
    /// One activation: decide with the core and persist; throws when nothing could be stored
    /// (then nothing that changes a later outcome was stored either).
    virtual batch_result process(alert_core& core, const std::vector<etag>& batch, double now) {
        batch_result result = core.process(batch, now);
        commit(core);
        return result;
    }
};

/// In-process only: the state lives as long as the action process.
class memory_store : public state_store {
public:
    void load(alert_core&) override {}
    void commit(const alert_core&) override {}
};

/// Adapts a core as a record_sink, to restore records into it.
class core_restorer : public record_sink {
public:
    explicit core_restorer(alert_core& core) : core_(core) {}
    void on_device(const device_record& r) override { core_.restore_device(r); }
    void on_cooldown(const cooldown_record& r) override { core_.restore_cooldown(r); }
    void on_id(std::uint64_t id_hash) override { core_.restore_id(id_hash); }

private:
    alert_core& core_;
};

/// Writes the core's changes of the last activation into `sink`.
inline void export_changes(const alert_core& core, record_sink& sink) {
    const change_set& c = core.changes();
    for (std::uint32_t d : c.devices) core.export_device(d, sink);
    for (std::uint64_t k : c.cooldowns) core.export_cooldown(k, sink);
    for (std::uint64_t id : c.ids) sink.on_id(id);
}

}  // namespace alerts
