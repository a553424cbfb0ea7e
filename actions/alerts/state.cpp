// state.cpp — the `state` action: status and heartbeat ETags only (Offline, Online,
// InternetOffline).
// Everything else lives in core/ (the pure decision core) and runtime/ (config, state store).
#include <nlohmann/json.hpp>

#include "runtime/alert_service.hpp"

nlohmann::json main(const nlohmann::json& args) {
    return alerts::run_activation(args, alerts::action_kind::state);
}
