// monitor.cpp — the entry point of the three alert actions, one file compiled once per action
// (CMakeLists.txt defines ALERT_ACTION_KIND for each):
//   motion   motion ETags only (Alert notifications)
//   state    status and heartbeat ETags only (Offline, Online, InternetOffline)
//   monitor  a mixed batch, routed to both motion and state rules; the kind when
//            ALERT_ACTION_KIND is not defined, as when `compile` builds this file from an upload
//            with core/ and runtime/ (README.md, "Building an action with `compile`")
// Everything else lives in core/ (the pure decision core) and runtime/ (config, state store).
#include <string>
#include <string_view>

#include "runtime/alert_service.hpp"

#ifndef ALERT_ACTION_KIND
#define ALERT_ACTION_KIND monitor
#endif

namespace {
constexpr alerts::action_kind KIND = alerts::action_kind::ALERT_ACTION_KIND;
}  // namespace

// The SDK's start hook (docs/SDK.md), before the ack: the environment and the config are
// checked here, so a bad one fails /init with its reason ("… on_init: alerts: cannot start:
// …"), and the config this process decides with is named on stderr. It runs again in a
// process the proxy starts after a crash, which reads the copy of the config kept at /init.
void on_init() { alerts::start_service(KIND); }

// The launcher's raw entry point (actionloop/action.hpp): the batch is parsed straight from
// its JSON text into ETags, without a DOM, which is most of the time of an activation.
void main(std::string_view value, std::string& answer) {
    alerts::run_raw_activation(value, KIND, answer);
}
