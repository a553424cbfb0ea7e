// gateway.hpp — alertgw: the last mile of the alert pipeline. Reads the notifications that
// `monitor`'s Redis commit appended to the outbox stream (<prefix>outbox), through the
// consumer group `alertgw`, and delivers each to every target (one e-mail over SMTP, a POST
// to each webhook) with libcurl's multi interface. The layers, top down:
//   loop/        the one thread that wires the others (delivery_loop)
//   outbox/      Redis: read, claim, keep alive, write progress, dead letters, acks
//   transport/   SMTP and webhooks through libcurl's multi interface; outcomes as values
//   ledger/      the pure core: what is due when, retried, dead-lettered, acknowledged
// Per-target progress lives in Redis (<prefix>gw:<entry id>), so a retry or another gateway's
// claim never re-sends to a target that accepted; each target has its own window, so one that
// is slow or down never holds back another. docs: actions/alerts/README.md, "Delivering
// notifications".
#pragma once

#include "gateway/options.hpp"

namespace alerts::gateway {

/// Runs until SIGTERM/SIGINT; returns the exit code (0 after a clean shutdown).
int run(const options& opt);

}  // namespace alerts::gateway
