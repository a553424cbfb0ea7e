// run_step's answers: each activation result becomes its status, body and outcome, the one
// place the outcome of a /run is decided (ops/metrics only counts it).
#include <doctest/doctest.h>

#include <string>

#include "protocol/run_step.hpp"

using namespace actionloop;

namespace {

activation_result answered(std::string line) {
    activation_result r;
    r.line = std::move(line);
    return r;
}

activation_result ended(executor::outcome how) {
    activation_result r;
    r.outcome = how;
    return r;
}

answer of(activation_result r, answer_check check = answer_check::here) {
    const settings config;
    return run_answer(config, std::move(r), run_bound::deadline, check);
}

}  // namespace

TEST_CASE("run answer: the action's line is a success, or an application error with a top-level "
          "\"error\"") {
    const answer ok = of(answered("{\"a\":1}\n"));
    CHECK(ok.status == 200);
    CHECK(ok.body == "{\"a\":1}\n");
    CHECK(ok.outcome == activation_outcome::success);
    CHECK(of(answered("[1,2]\n")).outcome == activation_outcome::success);
    const answer failed = of(answered("{\"error\":\"boom\"}\n"));
    CHECK(failed.status == 200);
    CHECK(failed.outcome == activation_outcome::application_error);
    CHECK(of(answered("{\"a\":1, \"error\":{\"code\":3}}\n")).outcome ==
          activation_outcome::application_error);
    // Left to the caller (single-entrypoint mode): the outcome is still the line's.
    CHECK(of(answered("{\"error\":1}\n"), answer_check::by_caller).outcome ==
          activation_outcome::application_error);
}

TEST_CASE("run answer: failures carry their outcome") {
    const answer not_json = of(answered("not json\n"));
    CHECK(not_json.status == 502);
    CHECK(not_json.outcome == activation_outcome::action_error);
    activation_result crashed = ended(executor::outcome::exited);
    crashed.crash = "killed by signal 9, SIGKILL";
    const answer crash = of(crashed);
    CHECK(crash.status == 400);
    CHECK(crash.body == "{\"error\":\"command exited (killed by signal 9, SIGKILL)\"}\n");
    CHECK(crash.outcome == activation_outcome::crash);
    CHECK(of(ended(executor::outcome::exited)).outcome == activation_outcome::crash);
    CHECK(of(ended(executor::outcome::deadline)).outcome == activation_outcome::action_error);
    CHECK(of(ended(executor::outcome::too_large)).outcome == activation_outcome::action_error);
    activation_result none;
    none.no_action = true;
    const answer no_action = of(none);
    CHECK(no_action.status == 500);
    CHECK(no_action.outcome == activation_outcome::rejected);
    activation_result unstarted;
    unstarted.start_failure = "exec format error";
    CHECK(of(unstarted).outcome == activation_outcome::action_error);
}

TEST_CASE("run answer: only a top-level \"error\" member is an application error") {
    CHECK(has_top_level_error("{\"error\":null}"));
    CHECK(has_top_level_error(" { \"x\" : [1, {\"y\":2}], \"error\" : \"late\" } "));
    CHECK_FALSE(has_top_level_error("{\"x\":{\"error\":1}}"));
    CHECK_FALSE(has_top_level_error("[{\"error\":1}]"));
    CHECK_FALSE(has_top_level_error("{\"message\":\"\\\"error\\\"\"}"));
    CHECK_FALSE(has_top_level_error("{\"errors\":1}"));
    CHECK_FALSE(has_top_level_error("{\"x\":\"error\"}"));
    CHECK_FALSE(has_top_level_error("not json \"error\""));
    CHECK_FALSE(has_top_level_error(""));
}
