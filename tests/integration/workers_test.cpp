// The worker pool through the real proxy (OW_WORKERS, README's settings table): N action
// processes behind one proxy, each with its own pipes, started by /init (each acks, each runs
// on_init), serving activations in parallel; the count from the proxy's environment or /init's
// env (the action's own wins), capped by OW_MAX_WORKERS, `auto` from the cgroup's CPU quota;
// a crash fails only its own activation; SIGTERM drains every worker (on_shutdown in each).
#include <doctest/doctest.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "process_tools.hpp"
#include "prometheus_text.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using namespace std::chrono;
using nlohmann::json;

namespace {

// tests/fixtures/cpp/workers.cpp, compiled once (`proxy -compile`), as base64 for /init.
const std::string& workers_zip() {
    static const std::string zip = [] {
        temp_dir cwd;
        env_map env = path_only_env();
        env["OW_COMPILER"] = compiler_script().string();
        const command_result compiled =
            run_command({ACTIONLOOP_PROXY_BIN, "-compile", "main"}, fixture_text("cpp/workers.cpp"),
                        env, cwd.path());
        REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.err);
        return base64_encode(compiled.out);
    }();
    return zip;
}

// A #! script worker (a window of one): sleeps 300 ms, then says which worker it is.
const char* const SLEEPY_SCRIPT = R"(#!/bin/bash
while read line
do
  sleep 0.3
  echo "{\"index\":\"$OW_WORKER_INDEX\",\"workers\":\"$OW_WORKERS\",\"pid\":$$}" >&3
done
)";

// A #! worker for the OOM case: {"nap":…} holds the worker 500 ms (after creating napping in
// `dir`); {"oom_now":…} bumps the fake cgroup's oom_kill count in `dir`, as the kernel's OOM
// killer does, and SIGKILLs itself. Answers say which worker served.
std::string oom_script(const std::string& dir) {
    return "#!/bin/bash\n"
           "while read line; do\n"
           "  case \"$line\" in\n"
           "    *oom_now*)\n"
           "      printf 'oom 1\\noom_kill 1\\n' > '" +
           dir +
           "/memory.events'\n"
           "      kill -9 $$ ;;\n"
           "    *nap*) touch '" +
           dir +
           "/napping'; sleep 0.5 ;;\n"
           "  esac\n"
           "  echo \"{\\\"index\\\":\\\"$OW_WORKER_INDEX\\\"}\" >&3\n"
           "done\n";
}

// `count` /runs of `value` at once; their replies in the order they were started.
std::vector<http_reply> run_together(const proxy_process& proxy, int count, const json& value) {
    std::vector<std::future<http_reply>> replies;
    for (int i = 0; i < count; ++i) {
        replies.push_back(
            std::async(std::launch::async, [&proxy, value] { return proxy.run(value); }));
    }
    std::vector<http_reply> done;
    for (auto& reply : replies) done.push_back(reply.get());
    return done;
}

// The distinct worker indexes (and pids) of 200 answers; every reply must be a 200.
std::set<std::string> indexes_of(const std::vector<http_reply>& replies, std::set<long>* pids) {
    std::set<std::string> indexes;
    for (const http_reply& reply : replies) {
        REQUIRE_MESSAGE(reply.status == 200, reply.status << " " << reply.body);
        const json answer = json_of(reply);
        indexes.insert(answer.at("index").get<std::string>());
        if (pids != nullptr) pids->insert(answer.at("pid").get<long>());
    }
    return indexes;
}

// What one idle /run answers about its worker.
json one_answer(const proxy_process& proxy) {
    const http_reply reply = proxy.run(json::object());
    REQUIRE_MESSAGE(reply.status == 200, reply.body);
    return json_of(reply);
}

// The proxy's live action processes, once there are `count` of them.
void check_children(const proxy_process& proxy, std::size_t count) {
    CHECK_MESSAGE(wait_until([&] { return proxy.children().size() == count; }, seconds(5)),
                  proxy.children().size() << " children, not " << count);
}

// Starts `count` /runs that each hold a worker for `sleep_ms`; returns once all are running.
std::vector<std::future<http_reply>> occupy(const proxy_process& proxy, int count, int sleep_ms) {
    std::vector<std::future<http_reply>> busy;
    for (int i = 0; i < count; ++i) {
        const std::string started = (proxy.root() / ("started." + std::to_string(i))).string();
        busy.push_back(std::async(std::launch::async, [&proxy, started, sleep_ms] {
            return proxy.run(json{{"sleep_ms", sleep_ms}, {"started", started}});
        }));
        REQUIRE(wait_until([&] { return fs::exists(started); }, seconds(10)));
    }
    return busy;
}

unsigned affinity_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
    return static_cast<unsigned>(CPU_COUNT(&set));
}

}  // namespace

TEST_CASE("workers: OW_WORKERS=4 serves 4 activations at once, each in its own process") {
    proxy_process proxy(cpp_runtime({{"OW_WORKERS", "4"}}));
    CHECK_REPLY(proxy.init(workers_zip()), 200, OK_BODY);
    check_children(proxy, 4);
    const auto start = steady_clock::now();
    const std::vector<http_reply> replies = run_together(proxy, 4, json{{"sleep_ms", 300}});
    const auto took = duration_cast<milliseconds>(steady_clock::now() - start);
    std::set<long> pids;
    CHECK(indexes_of(replies, &pids) == std::set<std::string>{"0", "1", "2", "3"});
    CHECK(pids.size() == 4);
    CHECK_MESSAGE(took < milliseconds(900), "4 × 300 ms took " << took.count() << " ms");
    CHECK(json_of(replies.front()).at("workers") == "4");
    // Each worker ran its own on_init.
    const std::string err = proxy.stderr_text();
    for (int i = 0; i < 4; ++i) {
        CHECK_MESSAGE(contains(err, "workers: on_init in worker " + std::to_string(i) + "\n"), err);
    }
}

TEST_CASE("workers: a #! script action gets its workers too, each a window of one") {
    proxy_process proxy(with_env({{"OW_WORKERS", "4"}}));
    CHECK_REPLY(proxy.init(SLEEPY_SCRIPT), 200, OK_BODY);
    const auto start = steady_clock::now();
    const std::vector<http_reply> replies = run_together(proxy, 8, json::object());
    const auto took = duration_cast<milliseconds>(steady_clock::now() - start);
    std::set<long> pids;
    CHECK(indexes_of(replies, &pids) == std::set<std::string>{"0", "1", "2", "3"});
    CHECK(pids.size() == 4);
    // Two rounds of four, not eight one after the other.
    CHECK_MESSAGE(took < milliseconds(1500), "8 × 300 ms on 4 workers took " << took.count());
    CHECK(proxy.check_streams(8).err.empty());
}

TEST_CASE("workers: /init's env OW_WORKERS beats the proxy's, as a string or a number") {
    for (const json& given : {json("3"), json(3)}) {
        CAPTURE(given.dump());
        proxy_process proxy(cpp_runtime({{"OW_WORKERS", "2"}}));
        const json env = {{"OW_WORKERS", given}};
        CHECK_REPLY(proxy.init(workers_zip(), "main", &env), 200, OK_BODY);
        check_children(proxy, 3);
        CHECK(one_answer(proxy).at("workers") == "3");
    }
}

TEST_CASE("workers: OW_MAX_WORKERS caps the count, wherever it was set") {
    proxy_process proxy(cpp_runtime({{"OW_WORKERS", "8"}, {"OW_MAX_WORKERS", "2"}}));
    CHECK_REPLY(proxy.init(workers_zip()), 200, OK_BODY);
    check_children(proxy, 2);
    CHECK(one_answer(proxy).at("workers") == "2");

    proxy_process debug(with_env({{"OW_MAX_WORKERS", "3"}}, {"-debug"}));
    const json env = {{"OW_WORKERS", "64"}};
    CHECK_REPLY(debug.init(SLEEPY_SCRIPT, "main", &env), 200, OK_BODY);
    check_children(debug, 3);
    CHECK(one_answer(debug).at("workers") == "3");
}

TEST_CASE("workers: auto is the cgroup's CPU quota, rounded up (at most the CPUs usable)") {
    temp_dir cgroup;
    write_file(cgroup.path() / "cpu.max", "150000 100000\n");
    proxy_process proxy(
        with_env({{"OW_WORKERS", "auto"}, {"OW_CGROUP_DIR", cgroup.path().string()}}));
    CHECK_REPLY(proxy.init(SLEEPY_SCRIPT), 200, OK_BODY);
    const unsigned expected = std::min(2u, affinity_cpus());
    check_children(proxy, expected);
    CHECK(one_answer(proxy).at("workers") == std::to_string(expected));
}

TEST_CASE("workers: an invalid count fails /init with the variable and its value") {
    const std::string hint = " is not a worker count (a number from 1, or auto)";
    for (const std::string value : {"0", "-2", "many", "4x"}) {
        CAPTURE(value);
        proxy_process proxy(with_env({{"OW_WORKERS", value}}));
        CHECK_ERROR_REPLY(proxy.init(fixture_text("echo.sh")), 502,
                          "cannot start action: OW_WORKERS=\"" + value + "\"" + hint);
        CHECK(proxy.children().empty());
    }
    proxy_process proxy(with_env({{"OW_WORKERS", "2"}}));
    const json env = {{"OW_WORKERS", "lots"}};
    CHECK_ERROR_REPLY(proxy.init(fixture_text("echo.sh"), "main", &env), 502,
                      "cannot start action: OW_WORKERS=\"lots\" (in /init's env)" + hint);
    // Nothing was started: a good /init follows.
    CHECK_REPLY(proxy.init(fixture_text("echo.sh")), 200, OK_BODY);
    CHECK_REPLY(proxy.run(json{{"a", 1}}), 200, "{\"a\":1}\n");
}

TEST_CASE("workers: a start failure names the worker and leaves no worker running") {
    proxy_process proxy(cpp_runtime({{"OW_WORKERS", "4"}}));
    const json env = {{"WORKERS_FAIL_INDEX", "2"}};
    CHECK_ERROR_REPLY(proxy.init(workers_zip(), "main", &env), 502,
                      "cannot start action: worker 2 of 4: The action did not initialize "
                      "properly. on_init: worker 2 cannot reach the database");
    check_children(proxy, 0);
    CHECK_REPLY(proxy.init(workers_zip()), 200, OK_BODY);
    check_children(proxy, 4);
}

TEST_CASE("workers: a crash fails only its own activation, the busy neighbours answer 200") {
    const int metrics_port = pick_free_port();
    proxy_options options = cpp_runtime({{"OW_WORKERS", "4"}});
    options.args = {"-metrics-port", std::to_string(metrics_port)};
    proxy_process proxy(options);
    CHECK_REPLY(proxy.init(workers_zip()), 200, OK_BODY);
    auto busy = occupy(proxy, 3, 600);  // workers 0, 1 and 2
    const http_reply crashed = proxy.run(json{{"crash", true}});
    CHECK(crashed.status == 400);
    CHECK_MESSAGE(contains(crashed.body, "worker 3: killed by signal 11, SIGSEGV"), crashed.body);
    std::set<std::string> neighbours;
    for (auto& reply : busy) {
        const http_reply done = reply.get();
        REQUIRE_MESSAGE(done.status == 200, done.body);
        neighbours.insert(json_of(done).at("index").get<std::string>());
    }
    CHECK(neighbours == std::set<std::string>{"0", "1", "2"});
    // Worker 3 was started again in place: four workers serve once more.
    CHECK(indexes_of(run_together(proxy, 4, json{{"sleep_ms", 200}}), nullptr).size() == 4);
    CHECK(contains(proxy.stderr_text(), "worker 3: the action exited during the activation"));
    CHECK(contains(proxy.stderr_text(), "worker 3: the action process is gone ("));
    CHECK(scrape_metrics(metrics_port).at("actionloop_action_restarts_total") == 1);
    check_children(proxy, 4);
}

TEST_CASE("workers: an OOM kill names its worker, the neighbour's activation answers 200") {
    temp_dir cgroup("fake-cgroup");
    write_file(cgroup.path() / "memory.events", "oom 0\noom_kill 0\n");
    write_file(cgroup.path() / "memory.max", "268435456\n");
    const std::string dir = cgroup.path().string();
    proxy_process proxy(with_env({{"OW_WORKERS", "2"}, {"OW_CGROUP_DIR", dir}}));
    REQUIRE(proxy.init(oom_script(dir)).status == 200);
    auto napping = std::async(std::launch::async, [&] { return proxy.run(json{{"nap", 1}}); });
    REQUIRE(wait_until([&] { return fs::exists(cgroup.path() / "napping"); }, seconds(10)));
    CHECK_ERROR_REPLY(proxy.run(json{{"oom_now", 1}}), 400,
                      "command exited (worker 1: the action exceeded its memory limit (256 MB))");
    CHECK_REPLY(napping.get(), 200, "{\"index\":\"0\"}\n");
    CHECK(wait_until(
        [&] {
            return contains(proxy.stderr_text(),
                            "worker 1: the action exited during the activation (killed by signal "
                            "9 (SIGKILL): the action exceeded its memory limit (256 MB))");
        },
        seconds(5)));
}

TEST_CASE("workers: a missed deadline stops only its worker, the other serves meanwhile") {
    // The bound leaves room for a loaded machine: what counts is that the five are answered
    // while the hung one is still waiting (a wall-clock bound of 950 ms failed under load).
    proxy_process proxy(with_env({{"OW_WORKERS", "2"}, {"OW_RUN_TIMEOUT_MS", "3000"}}));
    REQUIRE(proxy.init(fixture_text("hang.sh")).status == 200);
    const auto start = steady_clock::now();
    auto hung = std::async(std::launch::async, [&] { return proxy.run(json{{"hang", true}}); });
    REQUIRE(wait_until([&] { return proxy.children().size() == 2; }, seconds(5)));
    for (int i = 0; i < 5; ++i) {
        CHECK_REPLY(proxy.run(json{{"x", i}}), 200, json{{"x", i}}.dump() + "\n");
    }
    CHECK(hung.wait_for(milliseconds(0)) == std::future_status::timeout);  // beside the hang
    CHECK(hung.get().status == 502);
    CHECK(steady_clock::now() - start >= milliseconds(2950));
    CHECK_REPLY(proxy.run(json{{"after", 1}}), 200, "{\"after\":1}\n");
    // The stopped worker starts again with its next activation (as one process does).
    const std::vector<http_reply> both = run_together(proxy, 2, json{{"both", 1}});
    for (const http_reply& reply : both) CHECK_REPLY(reply, 200, "{\"both\":1}\n");
    check_children(proxy, 2);
}

TEST_CASE("workers: SIGTERM with every worker busy answers all and runs each on_shutdown") {
    proxy_process proxy(cpp_runtime({{"OW_WORKERS", "3"}, {"OW_SHUTDOWN_TIMEOUT_MS", "20000"}}));
    const json env = {{"WORKERS_SHUTDOWN_DIR", proxy.root().string()}};
    CHECK_REPLY(proxy.init(workers_zip(), "main", &env), 200, OK_BODY);
    auto busy = occupy(proxy, 3, 500);
    ::kill(proxy.pid(), SIGTERM);
    for (auto& reply : busy) CHECK(reply.get().status == 200);
    REQUIRE(wait_until([&] { return !proxy.running(); }, seconds(10)));
    const int status = proxy.stop();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    for (int i = 0; i < 3; ++i) {
        CAPTURE(i);
        CHECK(read_file(proxy.root() / ("shutdown." + std::to_string(i))) == "1\n");
    }
}

TEST_CASE("workers: unset is one worker, as before (OW_WORKERS=1, OW_WORKER_INDEX=0)") {
    proxy_process proxy(cpp_runtime());
    CHECK_REPLY(proxy.init(workers_zip()), 200, OK_BODY);
    check_children(proxy, 1);
    const json answer = one_answer(proxy);
    CHECK(answer.at("workers") == "1");
    CHECK(answer.at("index") == "0");
    const std::vector<http_reply> replies = run_together(proxy, 2, json{{"sleep_ms", 200}});
    CHECK(indexes_of(replies, nullptr) == std::set<std::string>{"0"});
}

TEST_CASE("workers: a -debug re-init retires every old worker for the new count") {
    proxy_process proxy(with_env({{"OW_WORKERS", "3"}}, {"-debug"}));
    CHECK_REPLY(proxy.init(SLEEPY_SCRIPT), 200, OK_BODY);
    check_children(proxy, 3);
    const std::vector<pid_t> old = proxy.children();
    const json env = {{"OW_WORKERS", "2"}};
    CHECK_REPLY(proxy.init(SLEEPY_SCRIPT, "main", &env), 200, OK_BODY);
    check_children(proxy, 2);
    for (const pid_t pid : old) CHECK_FALSE(process_alive(pid));
    CHECK(indexes_of(run_together(proxy, 2, json::object()), nullptr) ==
          std::set<std::string>{"0", "1"});
}
