// The HTTP side: every cpp-httplib knob set explicitly in one place, and the one place
// where http_error becomes an HTTP answer.
#pragma once

#include <httplib.h>

#include "action_proxy.hpp"

namespace actionloop {

void configure_server(httplib::Server& server, action_proxy& proxy);

/// Binds (SO_REUSEADDR, not SO_REUSEPORT), raises the listen backlog to SOMAXCONN, and
/// serves until stopped. False when the port cannot be bound.
bool listen_on(httplib::Server& server, const std::string& host, int port);

}  // namespace actionloop
