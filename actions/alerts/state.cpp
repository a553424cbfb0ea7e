// state.cpp — the `state` action: status and heartbeat ETags only (Offline, Online,
// InternetOffline).
// Everything else lives in core/ (the pure decision core) and runtime/ (config, state store).
#include <string>
#include <string_view>

#include "runtime/alert_service.hpp"

namespace {
// The config and environment are checked when the process starts, so /init fails on them.
[[maybe_unused]] const bool STARTED = (alerts::start_service(alerts::action_kind::state), true);
}  // namespace

// The launcher's raw entry point (actionloop/action.hpp): the batch is parsed straight from
// its JSON text into ETags, without a DOM, which is most of the time of an activation.
void main(std::string_view value, std::string& answer) {
    alerts::run_raw_activation(value, alerts::action_kind::state, answer);
}
