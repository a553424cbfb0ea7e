// Single-entrypoint (Knative) mode: what the environment says at start-up. The switch
// (__OW_RUNTIME_PLATFORM), the enabled methods (__OW_HTTP_METHODS), the baked-in action of a
// dedicated runtime (__OW_ACTION_*) and the namespace shown to raw actions (__OW_NAMESPACE).
// Pure functions of their inputs; load_platform_config() is the one that reads getenv.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace actionloop::knative {

enum class platform { openwhisk, knative, unsupported };

/// __OW_RUNTIME_PLATFORM: unset or "openwhisk" → classic; "knative" → single entrypoint;
/// anything else (even "" or "Knative") → unsupported (the proxy exits 9).
platform platform_of(const char* value);

/// The text written to stderr before the exit of an unsupported platform.
std::string unsupported_platform_message(const std::string& value);

/// Exit status of an unsupported platform.
inline constexpr int UNSUPPORTED_PLATFORM_EXIT = 9;

/// Methods a request to / may use.
struct method_set {
    bool get = false;
    bool post = true;
    bool put = false;
    bool del = false;
    bool options = false;
    /// `method` as received (upper case, as HTTP sends it); HEAD goes with GET.
    bool allows(const std::string& method) const;
};

/// __OW_HTTP_METHODS: "[GET, post]" (names trimmed, case-insensitive); unset or without the
/// brackets: POST only. Unknown names are skipped, each added to `warnings`.
method_set parse_http_methods(const char* value, std::vector<std::string>& warnings);

/// The action of a dedicated runtime, from __OW_ACTION_*.
struct dedicated_action {
    std::string code;
    std::string main;  // "" → main
    bool binary = false;
    bool raw = false;
    std::string name;
};

using env_lookup = std::function<const char*(const char*)>;

/// A dedicated action when __OW_ACTION_CODE is non-empty (or, ours, when it is unset or empty
/// and OW_ACTION_CODE_FILE names a readable file: its bytes are the code); nullopt: a stem cell.
/// Throws std::runtime_error when OW_ACTION_CODE_FILE cannot be read.
std::optional<dedicated_action> dedicated_from_env(const env_lookup& env);

struct platform_config {
    method_set methods;
    std::optional<dedicated_action> dedicated;
    std::string user;  // __OW_NAMESPACE at start-up: the raw __ow_user
};

/// Everything above, from the process environment (warnings go to stderr).
platform_config load_platform_config();

}  // namespace actionloop::knative
