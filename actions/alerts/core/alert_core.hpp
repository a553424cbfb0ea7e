// alert_core.hpp — the pure decision core: (state, batch of ETags, now) -> (state,
// notifications, stats). No I/O, no environment, no clock: the caller passes `now`.
//
// One activation = process(): ETags are resolved to accounts and devices (unknown and foreign
// accounts are counted and skipped without creating any state), sorted by (device, ts) with
// the batch order breaking ties, checked for duplicates (recent ids) and staleness, and applied
// to each device's state machine; a device's pending hold that is due by an event's time
// matures before that event is applied. Then every hold due by `now` matures (timer heap).
// After process(), changes() lists what a state store must persist.
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/batch_result.hpp"
#include "core/config.hpp"
#include "core/device_machine.hpp"
#include "core/etag.hpp"
#include "core/recent_ids.hpp"
#include "core/records.hpp"
#include "core/silence.hpp"
#include "core/string_interner.hpp"
#include "core/timer_heap.hpp"

namespace alerts {

struct core_options {
    std::string datacenter;  // EEN_AGENT_DATACENTER; empty: every account
    bool motion = true;      // handle motion ETags (the `motion` and `monitor` actions)
    bool state = true;       // handle status/heartbeat ETags (`state` and `monitor`)
    /// Times in a device's state more than this after `now` are not trusted: they come from an
    /// ETag that ALERT_MAX_FUTURE_SECONDS now rejects (a ts in milliseconds), applied before the
    /// bound existed. The device's next ETag repairs them (docs/alerts.md, "Timestamps").
    /// Infinity (the default of the bare core): every time is trusted.
    double trusted_future = std::numeric_limits<double>::infinity();
    /// List what the rules hold back (batch_result::held): for a store that keeps it.
    bool explain = false;
};

/// What process() changed that a restart would lose.
struct change_set {
    std::vector<std::uint32_t> devices;    // device indices whose record changed
    std::vector<std::uint64_t> cooldowns;  // keys into the cooldown table
    std::vector<std::uint64_t> ids;        // ids of events that had an effect
};

class alert_core {
public:
    explicit alert_core(core_options options = {});

    /// Installs a config (a no-op when its fingerprint equals the installed one).
    void set_config(std::shared_ptr<const alert_config> config);
    const alert_config* config() const { return config_.get(); }
    /// Installs the silences made at run time (docs/alerts.md, "Silences"); devices held back
    /// by the ones before are looked at again from the next process(). Null: none.
    void set_silences(std::shared_ptr<const silence_set> silences);
    const silence_set* silences() const { return silences_.get(); }
    const core_options& options() const { return options_; }

    /// Applies a batch (possibly empty: a tick) at evaluation time `now`.
    const batch_result& process(const std::vector<etag>& batch, double now);
    const batch_result& result() const { return result_; }
    const change_set& changes() const { return changes_; }

    std::string_view account_id(std::uint32_t account) const { return account_names_.key(account); }
    std::string_view device_id(std::uint32_t device) const {
        return device_keys_.key(device).substr(4);
    }
    /// The device's config, or nullptr when its account's config does not list it.
    const device_config* device_cfg(std::uint32_t device) const;
    /// The config of a device of an account (by the account's index), or nullptr.
    const device_config* device_cfg_of(std::uint32_t account, std::string_view device) const;
    const device_slot& slot(std::uint32_t device) const { return slots_[device]; }
    std::uint32_t find_device(std::string_view account, std::string_view device) const;
    /// The same when the caller has device_key_hash(account, device) already.
    std::uint32_t find_device(std::string_view account, std::string_view device,
                              std::uint64_t device_key_hash) const;
    /// The device of the config's device `cfg` (an index into config()->devices), or
    /// string_interner::npos while it has not been seen: find_device without hashing or
    /// comparing names (bridges and their cameras are looked up by their config index).
    std::uint32_t configured_device(std::uint32_t cfg) const { return cfg_devices_[cfg]; }

    std::size_t device_count() const { return slots_.size(); }
    std::size_t pending() const { return pending_; }
    /// When the device next needs the core without an event of its own: its hold matures,
    /// its flapping may stop, a reminder is due (+infinity: never). What a store that keeps
    /// timers outside the process (redis_store's due set) schedules it at.
    double next_due(std::uint32_t device) const;
    /// What holds a device's notification back now (SLOT_SILENCED): a silence's id, or
    /// "maintenance"; "" when nothing does.
    std::string held_by(std::uint32_t device) const;
    /// Bytes held by the per-device structures (table, slots, timers, ids, cooldowns).
    std::size_t memory_bytes() const;

    // Persistence: export (for a store) and restore (from a store; config must be installed).
    void export_device(std::uint32_t device, record_sink& sink) const;
    void export_cooldown(std::uint64_t key, record_sink& sink) const;
    void export_all(record_sink& sink) const;
    /// Returns the device's index, or string_interner::npos when the record was skipped (its
    /// account left the config).
    std::uint32_t restore_device(const device_record& r);
    void restore_cooldown(const cooldown_record& r);
    void restore_id(std::uint64_t id_hash);

    // A store that keeps the state outside the process (redis_store) loads the devices of each
    // batch before process() and, before the next one, calls forget() with every device it
    // loaded or the batch touched: they return to the state of a device never seen, and every
    // timer, cooldown and recent id is dropped (all of them belonged to those devices).
    void forget(const std::vector<std::uint32_t>& devices);
    /// The cooldowns of one device (for a store that keeps them in the device's record).
    void export_cooldowns_of(std::uint32_t device, record_sink& sink) const;
    /// Appends the distinct devices the last process() resolved from its batch (what a store
    /// that forgets devices between batches must forget, with those it restored).
    void batch_devices(std::vector<std::uint32_t>& out) const;
    /// The device a changed cooldown (a key of changes().cooldowns) belongs to.
    std::uint32_t cooldown_device(std::uint64_t key) const;

    /// The stable hash of an event id for (account, device); what recent ids hold.
    static std::uint64_t id_hash(std::uint64_t device_key_hash, std::string_view id);
    static std::uint64_t device_key_hash(std::string_view account, std::string_view device);

private:
    struct account_entry {
        std::uint64_t hash = 0;
        std::int32_t cfg = -1;  // index in config accounts, -1: not (or no longer) configured
        bool foreign = false;
    };
    struct work_item {
        double ts;
        std::uint32_t device;
        std::uint32_t pos;
        std::uint64_t id;  // id hash, 0 when the ETag has no id
    };
    struct cooldown_entry {
        double last_alert = 0;
        std::uint32_t device = 0;
        std::string region;
    };
    // The noise rules' per-device state beyond the slot, only for devices that changed state
    // (flap detection) or are reminded of: a device that never changes costs nothing here.
    struct noise_entry {
        std::vector<double> changes;  // the last flapping.changes state changes, oldest first
        double reminder_base = 0;     // publishTs of the Offline the reminders follow
        std::uint32_t reminders_sent = 0;
    };

    // alert_core.cpp: configuration and the activation pipeline.
    void bind_accounts();
    void bind_devices();
    void rebuild_timers();
    std::uint32_t intern_device(std::uint32_t account, std::string_view device, std::uint64_t h);
    void resolve(const std::vector<etag>& batch);
    bool accepts(etag_type t) const;
    void finish_stats();
    // core_apply.cpp: the rules.
    void apply(const etag& e, const work_item& w);
    void distrust_future(std::uint32_t device, double ts);
    bool is_duplicate(const device_slot& d, const etag& e, const work_item& w) const;
    void mature_if_due(std::uint32_t device, double t);
    void mature_due_timers();
    bool apply_state(std::uint32_t device, const etag& e);
    bool apply_motion(std::uint32_t device, const etag& e);
    bool cooled_down(std::uint32_t device, const region_config& region, double ts);
    /// Announces the pending state (as PossibleTamper when `tamper`).
    void emit_state(std::uint32_t device, double due_ts, bool tamper = false);
    // core_noise.cpp: flapping, bridges, maintenance windows, reminders.
    static bool counts_pending(const device_slot& d);
    void schedule(std::uint32_t device);
    void service(std::uint32_t device, double t, int depth = 0);
    bool step(std::uint32_t device, double t, int depth);
    double hold_next(std::uint32_t device) const;
    double flap_end(std::uint32_t device) const;
    double reminder_due(std::uint32_t device) const;
    bool may_silence() const;
    double silenced_until(std::uint32_t device, double t, notif_type type,
                          const region_config* region = nullptr,
                          std::string_view* by = nullptr) const;
    void explain(std::uint32_t device, notif_type type, const char* rule, double event_ts,
                 std::string by, std::string detail);
    void explain_silence(std::uint32_t device, notif_type type, double t, double event_ts,
                         const region_config* region = nullptr);
    bool silenced_at(std::uint32_t device, double t, notif_type type);
    void note_resolved_silences();
    std::uint32_t bridge_of(std::uint32_t device) const;
    std::uint32_t waits_on_bridge(std::uint32_t device) const;
    void note_change(std::uint32_t device, double ts);
    void start_flapping(std::uint32_t device, double ts);
    void inhibit(std::uint32_t device);
    void inhibit_members(std::uint32_t bridge, notification& n);
    void reschedule_members(std::uint32_t bridge);
    void sweep_noise();
    void emit(notification n, std::string_view event_id = {});
    // core_sites.cpp: sites' arming schedules and tamper detection.
    const site_config* site_of(std::uint32_t device) const;
    bool disarmed(std::uint32_t device, const site_config& site, double ts,
                  const region_config& region);
    bool note_motion(std::uint32_t device, double ts);
    double last_motion(std::uint32_t device) const;
    bool tampered(std::uint32_t device, const etag& e, device_state before);
    // core_groups.cpp: sites' groups (docs/alerts.md, "Grouping").
    struct group_change {
        std::string device;
        double ts = 0;
        bool down = true;
    };
    struct site_group {
        std::uint32_t down = 0;             // cameras announced down through the group
        std::uint32_t updates = 0;          // SiteChanged sent since its SiteOffline
        double last_sent = 0;               // the due time of its last notification
        std::vector<group_change> changes;  // not yet announced, in the order they came
    };
    std::uint32_t group_of(std::uint32_t device);
    bool join_group(std::uint32_t device, double due_ts);
    bool leave_group(std::uint32_t device, double due_ts);
    static void note_group_change(site_group& g, std::string_view device, double ts, bool down);
    double group_due(std::uint32_t group) const;
    void flush_group(std::uint32_t group, double at = std::numeric_limits<double>::quiet_NaN());
    void emit_group(std::uint32_t group, site_group& g, notif_type type, double due_ts);
    void close_group(std::uint32_t group);
    const site_config* group_site(std::uint32_t group) const;
    const group_config* group_cfg(std::uint32_t group) const;
    const recipient_list& recipients_for(std::uint32_t device, const region_config* r) const;
    // core_routes.cpp: the routing tree (docs/alerts.md, "Routing").
    bool route(notification& n);
    void mark_dirty(std::uint32_t device);

    core_options options_;
    std::shared_ptr<const alert_config> config_;
    std::shared_ptr<const silence_set> silences_;
    string_interner account_names_;
    std::vector<account_entry> accounts_;
    string_interner device_keys_;  // key: 4-byte account index + device id
    std::vector<device_slot> slots_;
    std::vector<std::uint32_t> cfg_devices_;  // config device index -> device (npos: not seen)
    timer_heap timers_;
    recent_ids ids_;
    std::unordered_map<std::uint64_t, cooldown_entry> cooldowns_;
    std::unordered_map<std::uint32_t, noise_entry> noise_;
    std::unordered_map<std::uint32_t, site_group> groups_;  // by group slot, open groups only
    std::size_t sweep_at_ = 4096;  // noise_ size at which sweep_noise() runs next
    double swept_ = 0;             // `now` of the last sweep (one runs at least every window)
    std::size_t pending_ = 0;
    double now_ = 0;

    std::vector<work_item> work_;
    std::vector<double> delays_;
    batch_result result_;
    change_set changes_;
};

}  // namespace alerts
