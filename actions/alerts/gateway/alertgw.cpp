// alertgw — delivers the alert pipeline's notifications (the Redis outbox) by e-mail and
// webhook. See gateway.hpp and `alertgw --help`.
#include <cstdio>
#include <exception>

#include "gateway/gateway.hpp"

int main(int argc, char** argv) {
    bool help = false;
    alerts::gateway::options opt;
    try {
        opt = alerts::gateway::parse_options(argc, argv, help);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "alertgw: %s\n(alertgw --help lists the flags)\n", e.what());
        return 2;
    }
    if (help) {
        std::fputs(alerts::gateway::usage().c_str(), stdout);
        return 0;
    }
    try {
        return alerts::gateway::run(opt);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "alertgw: %s\n", e.what());
        return 1;
    }
}
