// The action's environment map (docs/protocol.md, "Environment of the action").
#include "payload/env_map.hpp"

#include <cstring>

namespace actionloop {

env_map::env_map(const std::string& proxy_version, const std::string& execution_env,
                 const std::string& wait_for_ack, char** environ_entries, bool whole_environment) {
    values_["__OW_PROXY_VERSION"] = proxy_version;
    if (!execution_env.empty()) values_["__OW_EXECUTION_ENV"] = execution_env;
    if (!wait_for_ack.empty()) values_["__OW_WAIT_FOR_ACK"] = wait_for_ack;
    for (char** entry = environ_entries; entry != nullptr && *entry != nullptr; ++entry) {
        const char* eq = std::strchr(*entry, '=');
        if (eq == nullptr) continue;
        std::string name(*entry, static_cast<size_t>(eq - *entry));
        if (whole_environment || name.rfind("__OW_", 0) == 0) {
            values_[name] = eq + 1;  // whole value: upstream cut it at a second '='
        } else if (name == "PATH") {
            path_ = eq + 1;
        } else if (name == "HOME") {
            home_ = eq + 1;
        }
    }
}

void env_map::apply(const nlohmann::json& init_env) {
    if (!init_env.is_object()) return;
    for (auto it = init_env.begin(); it != init_env.end(); ++it) {
        values_[it.key()] =
            it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
    }
}

std::vector<std::string> env_map::for_action() const {
    std::vector<std::string> out;
    out.reserve(values_.size() + 2);
    if (!path_.empty() && values_.count("PATH") == 0) out.push_back("PATH=" + path_);
    if (!home_.empty() && values_.count("HOME") == 0) out.push_back("HOME=" + home_);
    for (const auto& [name, value] : values_) {
        std::string entry;
        entry.reserve(name.size() + 1 + value.size());
        entry.append(name).append(1, '=').append(value);
        out.push_back(std::move(entry));
    }
    return out;
}

}  // namespace actionloop
