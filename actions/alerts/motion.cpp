// motion.cpp — the `motion` action: motion ETags only (Alert notifications).
// Everything else lives in core/ (the pure decision core) and runtime/ (config, state store).
#include <string>
#include <string_view>

#include "runtime/alert_service.hpp"

// The launcher's raw entry point (actionloop/action.hpp): the batch is parsed straight from
// its JSON text into ETags, without a DOM, which is most of the time of an activation.
void main(std::string_view value, std::string& answer) {
    alerts::run_raw_activation(value, alerts::action_kind::motion, answer);
}
