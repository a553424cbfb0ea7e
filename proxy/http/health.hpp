// GET /health for Kubernetes and Knative probes, and the 503 that /init and /run get while
// the proxy drains (ops/shutdown.hpp). Both are answered on the io thread: a busy or hung
// action never delays them.
#pragma once

#include <optional>
#include <string>

#include "action_proxy.hpp"

namespace actionloop {

/// The text of the 503 answers while the proxy shuts down.
inline constexpr const char* SHUTTING_DOWN = "The action container is shutting down.";

/// 200 {"ok":true} while serving; 503 {"error":SHUTTING_DOWN} while draining; 503
/// {"error":overrun} while an activation has run longer than OW_RUN_TIMEOUT_MS.
http_answer health_answer(bool draining, const std::optional<std::string>& overrun = {});

/// The 503 an /init or /run gets while the proxy drains.
http_answer shutting_down_answer();

}  // namespace actionloop
