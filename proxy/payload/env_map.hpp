// The environment handed to the action and the compiler (docs/protocol.md, "Environment of the
// action"), built in upstream's order: __OW_PROXY_VERSION, __OW_EXECUTION_ENV, __OW_WAIT_FOR_ACK,
// every __OW_* of the proxy's own environment (values kept whole, even with '='), then /init's env.
// Unlike upstream, PATH and HOME reach the action too.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace actionloop {

class env_map {
public:
    /// Seeds the map from `environ`-style entries ("NAME=value"): the __OW_* ones, PATH and
    /// HOME, or with `whole_environment` (Lambda mode) every one.
    env_map(const std::string& proxy_version, const std::string& execution_env,
            const std::string& wait_for_ack, char** environ_entries,
            bool whole_environment = false);

    /// Adds /init's env object: strings as they are, other values as compact JSON.
    /// Later calls override earlier values (the map persists across re-inits).
    void apply(const nlohmann::json& init_env);

    /// "NAME=value" strings for the action and the compiler: the map plus PATH and HOME
    /// from the proxy's environment (unless /init's env set them).
    std::vector<std::string> for_action() const;

    const std::map<std::string, std::string>& values() const { return values_; }

private:
    std::map<std::string, std::string> values_;
    std::string path_;
    std::string home_;
};

}  // namespace actionloop
