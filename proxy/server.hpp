// The HTTP side: every cpp-httplib knob set explicitly in one place, and the one place
// where http_error becomes an HTTP answer.
#pragma once

#include <httplib.h>

#include "action_proxy.hpp"

namespace actionloop {

void configure_server(httplib::Server& server, action_proxy& proxy);

}  // namespace actionloop
