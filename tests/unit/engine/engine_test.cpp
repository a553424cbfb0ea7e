// activation_engine (engine/engine.hpp) driven directly, without HTTP: an io_context run by
// the test's own thread, a thread pool for restarts, and a real action process — a bash peer
// written by the test that acks on fd 3 and answers each request line with the line itself
// (or crashes, hangs, answers too much, holds its answers, as the line asks). The loop runs
// until a completion arrives (run_one_for), never for a fixed time.
#include <doctest/doctest.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "engine/engine.hpp"
#include "test_util.hpp"

using namespace actionloop;
using namespace std::chrono_literals;
using clock_type = activation_engine::clock;

namespace {

// The peer: acks (offering pipelining with PEER_PIPELINE=1), then answers each request line
// with the line itself, except a line containing
//   crash    exits with status 3, unanswered;   segv  dies of SIGSEGV, unanswered
//   hang     never answers (the process becomes a sleep)
//   big      answers 4,096 x's
//   hold     answers nothing yet; a later line containing `release` answers the held lines,
//            then itself
const char* const PEER = R"(#!/bin/bash
if [ "$PEER_PIPELINE" = 1 ]; then echo '{"ok":true,"pipeline":true}' >&3
else echo '{"ok":true}' >&3; fi
held=()
while IFS= read -r line; do
  case "$line" in
    *crash*) exit 3 ;;
    *segv*) kill -SEGV $$ ;;
    *hang*) exec sleep 3600 ;;
    *big*) head -c 4096 /dev/zero | tr '\0' x >&3; echo >&3 ;;
    *hold*) held+=("$line") ;;
    *release*) for h in "${held[@]}"; do printf '%s\n' "$h" >&3; done
               held=(); printf '%s\n' "$line" >&3 ;;
    *) printf '%s\n' "$line" >&3 ;;
  esac
done
)";

struct finished {
    std::string body;  // as submitted
    activation_result result;
    size_t in_flight_after = 0;  // the engine's in_flight() when the result came
};

// One engine on one peer process, and the loop that drives it.
struct engine_peer {
    support::temp_dir dir{"engine-peer"};
    boost::asio::io_context loop;
    boost::asio::thread_pool blocking{1};
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{
        loop.get_executor()};
    std::shared_ptr<activation_engine> engine;
    std::vector<finished> results;
    int restarts = 0;

    explicit engine_peer(bool pipeline, size_t max_answer_bytes = 1 << 20) {
        const support::fs::path script = dir.path() / "peer";
        support::write_file(script, PEER, support::fs::perms(0755));
        executor_options options;
        options.command = script.string();
        options.cwd = dir.path().string();
        options.env = {"PATH=/usr/bin:/bin",
                       std::string("PEER_PIPELINE=") + (pipeline ? "1" : "0")};
        options.wait_for_ack = true;
        options.ack_timeout_ms = 5000;
        options.max_answer_bytes = max_answer_bytes;
        auto action = std::make_unique<executor>(std::move(options));
        action->start();
        activation_engine::hooks hooks;
        hooks.restarted = [this] { ++restarts; };
        engine = std::make_shared<activation_engine>(loop, blocking, std::move(action), hooks);
        engine->start();
    }
    ~engine_peer() {
        guard.reset();
        blocking.join();
        engine.reset();
        loop.restart();
        loop.poll();  // handlers still holding the engine let it go, on this thread
    }
    engine_peer(const engine_peer&) = delete;
    engine_peer& operator=(const engine_peer&) = delete;

    void submit(const std::string& body,
                clock_type::time_point deadline = clock_type::time_point::max(),
                long long proxy_deadline_ms = -1) {
        engine->submit(
            body, deadline,
            [this, body](activation_result r) {
                results.push_back({body, std::move(r), engine->in_flight()});
            },
            proxy_deadline_ms);
    }
    // Runs the loop until `done` holds (false: 5 s passed first).
    bool run_until(const std::function<bool()>& done) {
        const auto limit = clock_type::now() + 5s;
        while (!done()) {
            if (clock_type::now() >= limit) return false;
            loop.run_one_for(limit - clock_type::now());
        }
        return true;
    }
    bool wait_for_results(size_t n) {
        return run_until([&] { return results.size() >= n; });
    }
};

bool answered(const finished& f, const std::string& line) {
    return f.result.outcome == executor::outcome::answered && f.result.line == line + "\n";
}

}  // namespace

TEST_CASE("activation_engine: a window of one writes each request once the one before is "
          "answered, and answers in order") {
    engine_peer peer(false);
    CHECK_FALSE(peer.engine->pipelined());
    const pid_t pid = peer.engine->pid();
    CHECK(pid > 0);
    for (const char* body : {"{\"n\":1}", "{\"n\":2}", "{\"n\":3}"}) peer.submit(body);
    CHECK(peer.engine->waiting() == 3);  // written on the loop, not in submit()
    REQUIRE(peer.run_until([&] { return peer.engine->in_flight() == 1; }));
    CHECK(peer.engine->waiting() == 2);  // one at a time
    REQUIRE(peer.wait_for_results(3));
    for (size_t i = 0; i < 3; ++i) {
        CAPTURE(i);
        CHECK(answered(peer.results[i], peer.results[i].body));
        CHECK(peer.results[i].body == "{\"n\":" + std::to_string(i + 1) + "}");
        CHECK(peer.results[i].in_flight_after == 0);
    }
    CHECK(peer.engine->pid() == pid);  // one process served them all
    CHECK(peer.restarts == 0);
}

TEST_CASE("activation_engine: a pipelining action gets every request before the first answer") {
    engine_peer peer(true);
    CHECK(peer.engine->pipelined());
    // The peer answers the two held lines only once it has read the third: with a window of
    // one this would never finish.
    peer.submit("hold-1");
    peer.submit("hold-2");
    peer.submit("release");
    REQUIRE(peer.run_until([&] { return peer.engine->in_flight() == 3; }));
    CHECK(peer.engine->waiting() == 0);
    REQUIRE(peer.wait_for_results(3));
    CHECK(answered(peer.results[0], "hold-1"));
    CHECK(answered(peer.results[1], "hold-2"));
    CHECK(answered(peer.results[2], "release"));
    CHECK(peer.results[0].in_flight_after == 2);  // the others were still out
}

TEST_CASE("activation_engine: many pipelined activations each get their own answer, in order") {
    engine_peer peer(true);
    constexpr size_t COUNT = 200;
    for (size_t i = 0; i < COUNT; ++i) peer.submit("{\"i\":" + std::to_string(i) + "}");
    REQUIRE(peer.wait_for_results(COUNT));
    for (size_t i = 0; i < COUNT; ++i) {
        CAPTURE(i);
        CHECK(answered(peer.results[i], "{\"i\":" + std::to_string(i) + "}"));
    }
    CHECK(peer.engine->in_flight() == 0);
}

TEST_CASE("activation_engine: newlines leave the request, a pipelining action is told the "
          "proxy's deadline, another gets the body as sent") {
    for (const bool pipeline : {true, false}) {
        CAPTURE(pipeline);
        engine_peer peer(pipeline);
        peer.submit("{\"a\":\n1}", clock_type::time_point::max(), 1234);
        REQUIRE(peer.wait_for_results(1));
        CHECK(answered(peer.results[0],
                       pipeline ? "{\"a\":1,\"proxy_deadline\":\"1234\"}" : "{\"a\":1}"));
    }
}

TEST_CASE("activation_engine: a crash fails the activation being served, those behind it go "
          "to the restarted process") {
    for (const bool pipeline : {true, false}) {
        CAPTURE(pipeline);
        engine_peer peer(pipeline);
        const pid_t first = peer.engine->pid();
        peer.submit("before");
        peer.submit("crash");
        peer.submit("after-1");
        peer.submit("after-2");
        REQUIRE(peer.wait_for_results(4));
        CHECK(answered(peer.results[0], "before"));
        CHECK(peer.results[1].body == "crash");
        CHECK(peer.results[1].result.outcome == executor::outcome::exited);
        CHECK(peer.results[1].result.crash.empty());  // exit status 3: no signal
        CHECK(peer.results[1].result.start_failure.empty());
        CHECK(answered(peer.results[2], "after-1"));
        CHECK(answered(peer.results[3], "after-2"));
        CHECK(peer.restarts == 1);
        CHECK(peer.engine->restarts() == 1);
        CHECK(peer.engine->pid() != first);
        CHECK(peer.engine->pid() > 0);
    }
}

TEST_CASE("activation_engine: a death by signal is named in the result, with the worker's name") {
    for (const std::string worker : {"", "worker 2"}) {
        CAPTURE(worker);
        engine_peer peer(true);
        if (!worker.empty()) peer.engine->name_worker(worker);
        peer.submit("segv");
        peer.submit("next");
        REQUIRE(peer.wait_for_results(2));
        CHECK(peer.results[0].result.outcome == executor::outcome::exited);
        CHECK(peer.results[0].result.crash ==
              (worker.empty() ? "" : worker + ": ") + "killed by signal 11, SIGSEGV");
        CHECK(answered(peer.results[1], "next"));
        CHECK(peer.engine->restarts() == 1);
    }
}

TEST_CASE("activation_engine: past its deadline the activation fails and the process is "
          "replaced, the next one is answered") {
    engine_peer peer(true);
    const pid_t first = peer.engine->pid();
    const auto start = clock_type::now();
    peer.submit("hang", start + 150ms);
    peer.submit("after");  // behind it, no deadline: sent again to the new process
    REQUIRE(peer.wait_for_results(1));
    const auto took = clock_type::now() - start;
    CHECK(peer.results[0].result.outcome == executor::outcome::deadline);
    CHECK(took >= 150ms);
    CHECK(took < 2s);
    REQUIRE(peer.wait_for_results(2));
    CHECK(answered(peer.results[1], "after"));
    CHECK(peer.engine->pid() != first);
}

TEST_CASE("activation_engine: an answer over the cap fails its activation, not the next") {
    engine_peer peer(true, 1024);
    peer.submit("small");
    peer.submit("big");
    peer.submit("next");
    REQUIRE(peer.wait_for_results(3));
    CHECK(answered(peer.results[0], "small"));
    CHECK(peer.results[1].result.outcome == executor::outcome::too_large);
    CHECK(peer.results[1].result.line.empty());
    CHECK(answered(peer.results[2], "next"));
}

TEST_CASE("activation_engine: retire() lets the submitted activations finish, then stops the "
          "process") {
    engine_peer peer(true);
    const pid_t pid = peer.engine->pid();
    peer.submit("hold-1");
    peer.submit("release");
    peer.engine->retire();
    REQUIRE(peer.wait_for_results(2));
    CHECK(answered(peer.results[0], "hold-1"));
    CHECK(answered(peer.results[1], "release"));
    // Stopped and reaped by then: the pid is no process of ours any more.
    CHECK(::kill(pid, 0) == -1);
    CHECK(errno == ESRCH);
    CHECK(peer.restarts == 0);
    CHECK(peer.engine->restarts() == 0);
}
