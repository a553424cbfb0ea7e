// Routing of the HTTP layer: /init, /run and /health on the exact path, the query string
// ignored.
#include <doctest/doctest.h>

#include "protocol/error_answer.hpp"
#include "protocol/router.hpp"

using actionloop::route;
using actionloop::route_of;

TEST_CASE("routing: /init and /run on the exact path, the query string ignored") {
    CHECK(route_of("/init") == route::init);
    CHECK(route_of("/run") == route::run);
    CHECK(route_of("/run?blocking=true") == route::run);
    CHECK(route_of("/init?") == route::init);
    CHECK(route_of("/health") == route::health);
    CHECK(route_of("/health?probe=readiness") == route::health);
    for (const char* other : {"/", "", "/run/", "/RUN", "/init/x", "run", "/runx", "?/run",
                              "/health/", "/healthz", "/metrics"}) {
        INFO("target: " << other);
        CHECK(route_of(other) == route::other);
    }
}

TEST_CASE("routing: the 413 text names the limit and its setting") {
    const actionloop::answer a = actionloop::too_large_answer(1000);
    CHECK(a.status == 413);
    CHECK(
        a.body ==
        "{\"error\":\"The request body exceeds the limit of 1000 bytes (OW_MAX_BODY_BYTES).\"}\n");
}
