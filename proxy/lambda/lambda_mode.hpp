// Lambda mode's start: the action is started (LAMBDA_TASK_ROOT/exec, or a dedicated image's
// baked code), its failure posted to `…/runtime/init/error` (exit 1); then one poller per
// worker (AWS_LAMBDA_MAX_CONCURRENCY) serves invocations until SIGTERM (ops/shutdown.hpp).
#pragma once

#include "host/action_host.hpp"

namespace actionloop::lambda {

/// Serves invocations from AWS_LAMBDA_RUNTIME_API until the process is stopped; returns the
/// exit status when it cannot start (1: the action failed to start, after its init error
/// was posted; 2: AWS_LAMBDA_RUNTIME_API is not an address).
int run(action_host& host);

}  // namespace actionloop::lambda
