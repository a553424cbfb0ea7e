// /init (docs/protocol.md, /init): check → decode → build and start on the host → the answer,
// {"ok":true} or the failure in upstream's words (the raw text, or with OW_LOG_INIT_ERROR the
// text on stderr with the sentinels and a generic answer).
#pragma once

#include <mutex>
#include <string>

#include "host/action_host.hpp"
#include "protocol/exchange.hpp"

namespace actionloop {

/// On a worker: blocks while the action is built and started. Between
/// host.init_started() and host.init_finished() (on the loop), runs wait for it.
answer init_step(action_host& host, const std::string& body);

/// The same, for a caller that already holds the host's init turn (`turn`, from
/// host.init_turn()) to decide under it whether to init at all (single-entrypoint mode).
answer init_step(action_host& host, const std::string& body,
                 const std::unique_lock<std::mutex>& turn);

}  // namespace actionloop
