// The host's worker pool seen from the loop (host/action_host.hpp): worker_states() has one
// entry per worker, dispatch spreads activations over idle workers, and a worker that
// crashed is started again in place with its own restart count. Real #! action processes,
// driven by the test's own io_context (no sleeps: the loop runs until the answers are in).
#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include "host/action_host.hpp"
#include "test_util.hpp"

extern char** environ;

using namespace actionloop;
using nlohmann::json;

namespace {

// Says which worker answered; {"crash":…} exits without answering.
const char* const WORKER_SCRIPT = R"(#!/bin/bash
while read line; do
  case "$line" in *crash*) exit 3 ;; esac
  echo "{\"index\":\"$OW_WORKER_INDEX\",\"workers\":\"$OW_WORKERS\"}" >&3
done
)";

struct pool_fixture {
    explicit pool_fixture(const std::string& workers) : host(config_of(workers), environ) {
        host.attach(loop, blocking);
    }

    settings config_of(const std::string& workers) {
        settings config;
        config.action_dir = (root.path() / "action").string();
        config.workers = workers;
        return config;
    }

    // /init, then the loop installs the workers.
    void init(const json& env = nullptr) {
        const init_outcome outcome = host.init(WORKER_SCRIPT, "main", env);
        REQUIRE_MESSAGE(outcome.kind == init_outcome::result::started, outcome.error);
        loop.restart();
        loop.poll();
    }

    // Hands `value` to run() (on this thread, the loop's); the result lands in results.
    void submit(const json& value) {
        host.run(json{{"value", value}}.dump(), activation_engine::clock::time_point::max(),
                 [this](activation_result result) { results.push_back(std::move(result)); });
    }

    // Runs the loop until `count` results are in (bounded).
    void await(std::size_t count) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        loop.restart();
        while (results.size() < count && std::chrono::steady_clock::now() < until) {
            loop.run_one_for(std::chrono::milliseconds(100));
        }
        REQUIRE(results.size() == count);
    }

    std::string index_of(std::size_t result) const {
        REQUIRE(results[result].outcome == executor::outcome::answered);
        return json::parse(results[result].line).at("index").get<std::string>();
    }

    support::temp_dir root;
    boost::asio::thread_pool blocking{2};
    boost::asio::io_context loop;
    action_host host;
    std::vector<activation_result> results;
};

}  // namespace

TEST_CASE("action_host: no workers before an init") {
    pool_fixture pool("3");
    CHECK(pool.host.worker_states().empty());
    CHECK(pool.host.queued() == 0);
    CHECK(pool.host.oldest_submitted() == activation_engine::clock::time_point::max());
}

TEST_CASE("action_host: worker_states() has each worker, and activations spread over them") {
    pool_fixture pool("3");
    pool.init();
    std::vector<worker_state> states = pool.host.worker_states();
    REQUIRE(states.size() == 3);
    std::set<pid_t> pids;
    for (unsigned i = 0; i < 3; ++i) {
        CHECK(states[i].index == i);
        CHECK(states[i].pid > 0);
        CHECK_FALSE(states[i].busy);
        CHECK(states[i].queued == 0);
        CHECK(states[i].restarts == 0);
        pids.insert(states[i].pid);
    }
    CHECK(pids.size() == 3);

    for (int i = 0; i < 3; ++i) pool.submit(json{{"n", i}});
    // Submitted, not written yet (the engines write once the loop runs): one each.
    states = pool.host.worker_states();
    for (const worker_state& state : states) CHECK(state.queued == 1);
    CHECK(pool.host.queued() == 3);
    CHECK(pool.host.oldest_submitted() != activation_engine::clock::time_point::max());
    pool.await(3);
    std::set<std::string> indexes;
    for (std::size_t i = 0; i < 3; ++i) indexes.insert(pool.index_of(i));
    CHECK(indexes == std::set<std::string>{"0", "1", "2"});
    CHECK(json::parse(pool.results[0].line).at("workers") == "3");
}

TEST_CASE("action_host: a crashed worker is started again in place, its restarts its own") {
    pool_fixture pool("");
    pool.init(json{{"OW_WORKERS", "2"}});  // /init's env: two workers
    const pid_t first = pool.host.worker_states().at(0).pid;
    pool.submit(json{{"crash", true}});  // all idle: worker 0
    pool.await(1);
    CHECK(pool.results[0].outcome == executor::outcome::exited);
    pool.submit(json{{"after", 1}});  // worker 0 again (idle, lowest): started again
    pool.await(2);
    CHECK(pool.index_of(1) == "0");
    const std::vector<worker_state> states = pool.host.worker_states();
    REQUIRE(states.size() == 2);
    CHECK(states[0].restarts == 1);
    CHECK(states[1].restarts == 0);
    CHECK(states[0].pid != first);
    CHECK(pool.host.action_restarts() == 1);
}
