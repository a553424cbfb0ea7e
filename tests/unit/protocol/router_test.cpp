// Routing of the HTTP layer: /init, /run and /health on the exact path, the query string
// ignored; admission of an activation (the drain, OW_MAX_INFLIGHT, the count of its answer).
#include <doctest/doctest.h>

#include <optional>

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

namespace {

using namespace actionloop;

struct gate_fixture {
    explicit gate_fixture(size_t max_inflight) : inflight(max_inflight) {}
    drain_state drain;
    activation_metrics metrics;
    admission_limit inflight;
    activation_gate gate{drain, metrics, inflight};
};

// Admits one request; what a refusal answered goes to `refused`.
reply_fn try_admit(gate_fixture& f, bool is_run, std::optional<in_flight_ticket>& ticket,
                   std::optional<answer>& refused) {
    request req;
    req.body = "{}";
    req.ticket = &ticket;
    return admit(req, f.gate, is_run, [&refused](answer a) { refused = std::move(a); });
}

}  // namespace

TEST_CASE("admission: past OW_MAX_INFLIGHT runs a run is refused with 429, /init never") {
    gate_fixture f(1);
    std::optional<in_flight_ticket> t1, t2, t3, t4;
    std::optional<answer> refused;
    reply_fn first = try_admit(f, true, t1, refused);
    REQUIRE(first);
    CHECK(f.inflight.count() == 1);
    CHECK_FALSE(try_admit(f, true, t2, refused));  // refused at once, nothing held
    REQUIRE(refused);
    CHECK(refused->status == 429);
    CHECK(f.metrics.refusals(activation_metrics::refusal_reason::inflight) == 1);
    CHECK(t2);  // its place in the drain is held until the 429 is written
    t2.reset();
    CHECK(f.drain.in_flight() == 1);
    refused.reset();
    reply_fn init = try_admit(f, false, t3, refused);  // /init: not bounded by it
    CHECK(init);
    CHECK_FALSE(refused);
    first(answer{});  // the run answered: its place is free
    CHECK(f.inflight.count() == 0);
    CHECK(f.metrics.activations(true, activation_outcome::success) == 1);
    CHECK(try_admit(f, true, t4, refused));
}

TEST_CASE("admission: the outcome counted is the answer's own, not guessed from its body") {
    gate_fixture f(0);  // no bound
    std::optional<in_flight_ticket> t;
    std::optional<answer> refused;
    reply_fn done = try_admit(f, true, t, refused);
    REQUIRE(done);
    answer crash = error_answer(400, "command exited");
    crash.outcome = activation_outcome::crash;
    done(crash);
    CHECK(f.metrics.activations(true, activation_outcome::crash) == 1);
    CHECK(f.metrics.activations(true, activation_outcome::rejected) == 0);
    f.drain.begin_drain();
    std::optional<in_flight_ticket> late;
    CHECK_FALSE(try_admit(f, true, late, refused));
    REQUIRE(refused);
    CHECK(refused->status == 503);
    CHECK(f.metrics.activations(true, activation_outcome::shutting_down) == 1);
}
