// motion.cpp — the `motion` action: motion ETags only (Alert notifications).
// Everything else lives in core/ (the pure decision core) and runtime/ (config, state store).
#include <nlohmann/json.hpp>

#include "runtime/alert_service.hpp"

nlohmann::json main(const nlohmann::json& args) {
    return alerts::run_activation(args, alerts::action_kind::motion);
}
