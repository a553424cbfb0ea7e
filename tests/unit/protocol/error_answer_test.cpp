// The one error renderer: the bodies and headers of the refusals by a bound, and the outcome
// each error answer carries to /metrics (ops/metrics.hpp).
#include <doctest/doctest.h>

#include <string>

#include "protocol/error_answer.hpp"

using namespace actionloop;

namespace {

std::string header(const answer& a, const std::string& name) {
    for (const auto& [field, value] : a.headers) {
        if (field == name) return value;
    }
    return {};
}

}  // namespace

TEST_CASE("error answer: past OW_MAX_INFLIGHT, 429 with Retry-After naming the setting") {
    const answer a = inflight_full_answer(2);
    CHECK(a.status == 429);
    CHECK(a.json);
    CHECK(a.body ==
          "{\"error\":\"The runtime is busy: OW_MAX_INFLIGHT (2) activations are running or "
          "waiting for the action; try again later.\"}\n");
    CHECK(header(a, "Retry-After") == "1");
    CHECK_FALSE(a.last);  // the connection stays: the client may retry on it
    CHECK(a.outcome == activation_outcome::rejected);
}

TEST_CASE("error answer: /health while OW_MAX_INFLIGHT is reached: 503, not ready") {
    const answer a = saturated_health_answer(64);
    CHECK(a.status == 503);
    CHECK(a.body ==
          "{\"error\":\"The runtime is busy: OW_MAX_INFLIGHT (64) activations are running or "
          "waiting for the action; not ready until one is answered.\"}\n");
}

TEST_CASE("error answer: each carries the outcome of its status") {
    CHECK(error_answer(400, "x").outcome == activation_outcome::rejected);
    CHECK(error_answer(403, "x").outcome == activation_outcome::rejected);
    CHECK(error_answer(413, "x").outcome == activation_outcome::rejected);
    CHECK(error_answer(500, "x").outcome == activation_outcome::rejected);
    CHECK(error_answer(502, "x").outcome == activation_outcome::action_error);
    CHECK(error_answer(503, "x").outcome == activation_outcome::shutting_down);
    CHECK(outcome_of_status(200) == activation_outcome::success);
    CHECK(answer{}.outcome == activation_outcome::success);
}
