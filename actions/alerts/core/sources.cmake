# The decision core's sources, relative to this folder: one list for the alert build and the
# fuzz build (tests/fuzz), which compiles the same core with clang's sanitizers.
set(ALERT_CORE_FILES
    alert_core.cpp
    batch_text.cpp
    config.cpp
    core_apply.cpp
    core_groups.cpp
    core_noise.cpp
    core_records.cpp
    core_routes.cpp
    core_sites.cpp
    dedup_key.cpp
    device_status.cpp
    etag_fields.cpp
    log_text.cpp
    notification_log.cpp
    recent_ids.cpp
    record_codec.cpp
    result_json.cpp
    route_tree.cpp
    silence.cpp
    string_interner.cpp
    time_interval.cpp
    ts_bounds.cpp
    types.cpp)
