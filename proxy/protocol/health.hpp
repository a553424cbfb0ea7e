// GET /health for Kubernetes and Knative probes, and the 503 that /init and /run get while
// the proxy drains (ops/shutdown.hpp). Both are answered on the event loop: a busy or hung
// action never delays them.
#pragma once

#include "engine/activation_queue.hpp"
#include "host/action_host.hpp"
#include "protocol/exchange.hpp"

namespace actionloop {

/// The text of the 503 answers while the proxy shuts down.
inline constexpr const char* SHUTTING_DOWN = "The action container is shutting down.";

/// On the loop: 200 {"ok":true} while serving; 503 {"error":SHUTTING_DOWN} while draining;
/// with `inflight` (single-entrypoint mode), 503 saturated_health_answer() while its bound
/// (OW_MAX_INFLIGHT) is reached; 503 {"error":"An activation has been running for …"} while
/// an activation submitted to the action is older than OW_RUN_TIMEOUT_MS (the action hangs,
/// or is being stopped and started again), whatever the activation's own deadline.
answer health_answer(bool draining, const action_host& host,
                     const admission_limit* inflight = nullptr);

/// The 503 an /init or /run gets while the proxy drains; the connection ends after it.
answer shutting_down_answer();

}  // namespace actionloop
