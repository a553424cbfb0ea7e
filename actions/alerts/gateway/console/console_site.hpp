// console_site.hpp — the console's whole HTTP surface: /api/v1/ (console_api) and the pages
// (console_pages), each page a view over the API's own JSON answer, and /health.
#pragma once

#include <functional>
#include <vector>

#include "gateway/console/console_api.hpp"
#include "gateway/report/delay_timeline.hpp"
#include "http/http_server.hpp"

namespace alerts::gateway {

class console_site {
public:
    /// `delays`: this gateway's delivery delays (the /delay page), read on the console's thread.
    console_site(console_api& api, const delay_timeline& delays, std::function<double()> clock);

    actionloop::http_response handle(const actionloop::http_request& request);

private:
    console_api& api_;
    const delay_timeline& delays_;
    std::function<double()> clock_;
};

}  // namespace alerts::gateway
