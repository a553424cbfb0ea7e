// The alert actions with N workers in one container (OW_WORKERS; docs/alerts.md, "Workers"):
// each worker is an action process of its own. A store kept in the process (memory) or in a
// directory one process holds (ALERT_STATE_DIR) would split a device's state between them, so
// /init refuses them with N > 1, saying why and what to use instead. With Redis the workers
// commit as containers do (compare-and-set): the Redis scenarios through 4 workers and
// concurrent /runs give the notifications of one memory-only process, each once in the outbox.
#include <doctest/doctest.h>

#include <cstddef>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "alerts_redis_support.hpp"

using namespace alerts_redis;

namespace {

// Why /init fails with `workers` > 1 and the store named (the action's on_init, as
// alert_service.cpp words it).
std::string refusal(int workers, const std::string& store) {
    const std::string n = std::to_string(workers);
    return "alerts: cannot start: OW_WORKERS=" + n + " runs " + n +
           " processes of this action, and " + store +
           ": each worker would hold its own state, so a device's events split between workers "
           "would send its notifications twice or lose them; set ALERT_REDIS_URL (or "
           "ALERT_REDIS_SENTINELS) to share the state in Redis, or run one worker (OW_WORKERS=1)";
}

const char* const MEMORY =
    "the memory store (no ALERT_REDIS_URL, ALERT_REDIS_SENTINELS or ALERT_STATE_DIR) is each "
    "process's own";
const char* const STATE_DIR = "ALERT_STATE_DIR is one process's (its lock file keeps others out)";

std::string action_zip(const std::string& name) {
    return built_zip_code("actions/" + name + ".zip");
}

// `value` sent by `senders` clients at once to `proxy`: the replies (checked by answers_of).
std::vector<http_reply> race(const proxy_process& proxy, const std::string& value, int senders) {
    std::vector<http_reply> replies(static_cast<std::size_t>(senders));
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < replies.size(); ++i) {
        threads.emplace_back([&, i] { replies[i] = proxy.run_raw("{\"value\":" + value + "}"); });
    }
    for (std::thread& t : threads) t.join();
    return replies;
}

// The notes of every reply to `got` (each must be an answer with notifications).
void add_replies(notes& got, const std::vector<http_reply>& replies) {
    for (const http_reply& reply : replies) {
        REQUIRE_MESSAGE(reply.status == 200, shorten(reply.body));
        const json answer = json::parse(reply.body);
        REQUIRE_MESSAGE(answer.contains("notifications"), shorten(reply.body));
        add_notes(got, answer);
    }
}

// `values` sent at once, one client each, to `proxy`; their notes added to `got`.
void send_together(const proxy_process& proxy, const strings& values, notes& got) {
    std::vector<http_reply> replies(values.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < values.size(); ++i) {
        threads.emplace_back(
            [&, i] { replies[i] = proxy.run_raw("{\"value\":" + values[i] + "}"); });
    }
    for (std::thread& t : threads) t.join();
    add_replies(got, replies);
}

// CPU time (utime + stime, in clock ticks) of each action process of `proxy`, by pid.
std::map<pid_t, long> worker_cpu(const proxy_process& proxy) {
    std::map<pid_t, long> out;
    for (const pid_t pid : proxy.children()) {
        const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
        std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // from field 3, the state
        std::vector<std::string> f{std::istream_iterator<std::string>(fields), {}};
        REQUIRE(f.size() > 12);
        out[pid] = std::stol(f[11]) + std::stol(f[12]);  // fields 14 and 15
    }
    return out;
}

// `proxy` runs `n` workers, each of which has decided batches since `before` (none was
// started again).
void check_all_busy(const proxy_process& proxy, const std::map<pid_t, long>& before,
                    std::size_t n) {
    REQUIRE(before.size() == n);
    const std::map<pid_t, long> after = worker_cpu(proxy);
    CHECK(after.size() == n);
    for (const auto& entry : before) {
        const pid_t pid = entry.first;
        CAPTURE(pid);
        REQUIRE(after.count(pid) == 1);
        CHECK(after.at(pid) > entry.second);
    }
}

}  // namespace

TEST_CASE("alerts/workers: with OW_WORKERS=2 the memory and state-dir stores fail /init") {
    temp_dir dir("alerts-workers");
    const std::string config = fixture_path("alerts/config.json").string();
    const struct {
        const char* zip;
        json env;
        std::string reason;
    } cases[] = {
        {"monitor", {{"ALERT_CONFIG", config}, {"OW_WORKERS", "2"}}, refusal(2, MEMORY)},
        {"state", {{"ALERT_CONFIG", config}, {"OW_WORKERS", "2"}}, refusal(2, MEMORY)},
        {"monitor",
         {{"ALERT_CONFIG", config},
          {"ALERT_STATE_DIR", (dir.path() / "state").string()},
          {"OW_WORKERS", "2"}},
         refusal(2, STATE_DIR)},
    };
    for (const auto& c : cases) {
        CAPTURE(c.zip);
        CAPTURE(c.env.dump());
        proxy_process proxy(cpp_runtime());
        const http_reply reply = proxy.init(action_zip(c.zip), "main", &c.env);
        CHECK(reply.status == 502);
        // The pool names the worker whose start failed first (0 or 1).
        CHECK(reply.body.rfind(R"({"error":"cannot start action: worker )", 0) == 0);
        CHECK(contains(reply.body, " of 2: The action did not initialize properly. on_init: " +
                                       c.reason + "\"}\n"));
        CHECK(contains(proxy.stderr_text(), "action error: on_init: " + c.reason));
    }
    // OW_WORKERS in the proxy's environment rather than /init's: the same.
    {
        proxy_process proxy(cpp_runtime({{"OW_WORKERS", "2"}}));
        const json env = {{"ALERT_CONFIG", config}};
        const http_reply reply = proxy.init(monitor_zip_code(), "main", &env);
        CHECK(reply.status == 502);
        CHECK(contains(reply.body, "on_init: " + refusal(2, MEMORY) + "\"}\n"));
    }
    // The action process on its own says the same (exit 1, the reason on stderr).
    const std::string exec =
        (fs::path(ACTIONLOOP_BINARY_DIR) / "actions" / "monitor.d" / "exec").string();
    const command_result run =
        run_command({exec}, "", env_map{{"ALERT_CONFIG", config}, {"OW_WORKERS", "3"}}, dir.path());
    CHECK(run.exit_code == 1);
    CHECK(contains(run.err, refusal(3, MEMORY)));
    // docs/alerts.md ("Workers") quotes the refusal as the action writes it.
    CHECK(contains(read_file(fs::path(ACTIONLOOP_SOURCE_DIR) / "docs" / "alerts.md"),
                   "\n" + refusal(2, MEMORY) + "\n"));
    // A value that is no count of processes is refused too.
    const command_result bad = run_command(
        {exec}, "", env_map{{"ALERT_CONFIG", config}, {"OW_WORKERS", "two"}}, dir.path());
    CHECK(bad.exit_code == 1);
    CHECK(contains(bad.err, "alerts: cannot start: OW_WORKERS='two' is no number of worker "
                            "processes (the proxy sets it to the number it runs, 1 or more)"));
}

TEST_CASE("alerts/workers: one worker keeps every store, with Redis, OW_WORKERS=2 starts") {
    temp_dir dir("alerts-workers-ok");
    const std::string config = fixture_path("alerts/config.json").string();
    redis_server server(false, tracked_spawn(), tracked_kill);
    const json one_batch = batch(json::array({{{"id", "m1"},
                                               {"account", "acct1"},
                                               {"device", "cam1"},
                                               {"type", "motion"},
                                               {"ts", T0},
                                               {"region", "door"},
                                               {"magnitude", 0.8}}}),
                                 T0 + 1);
    const json envs[] = {
        {{"ALERT_CONFIG", config}, {"OW_WORKERS", "1"}},
        {{"ALERT_CONFIG", config}, {"ALERT_STATE_DIR", dir.path().string()}, {"OW_WORKERS", "1"}},
        {{"ALERT_CONFIG", config}, {"ALERT_REDIS_URL", server.url()}, {"OW_WORKERS", "2"}},
    };
    for (const json& env : envs) {
        CAPTURE(env.dump());
        auto proxy = start_monitor(env);
        CHECK(types_of(run_text(*proxy, one_batch.dump())) == strings{"Alert"});
    }
    CHECK(server.command({"XLEN", "alerts:outbox"}) == "1");
}

// Every batch of the generated stream sent by four clients at once to one proxy with four
// workers: the four decide it at the same time, one commits, the others find their records
// changed, decide again and find the ids applied. The notes are one memory-only process's,
// each answered once and in the outbox once.
TEST_CASE("alerts/workers: the stream raced by four clients through 4 workers gives one "
          "process's notes, each once") {
    const stream& s = generated();
    redis_server server(false, tracked_spawn(), tracked_kill);
    json env = redis_env(server, s.config);
    env["OW_WORKERS"] = "4";
    auto proxy = start_monitor(env);
    const std::map<pid_t, long> before = worker_cpu(*proxy);
    notes got;
    for (const std::string& value : s.batches) {
        add_replies(got, race(*proxy, value, 4));
    }
    check_all_busy(*proxy, before, 4);
    CHECK(got.size() == s.reference.size());
    CHECK_MESSAGE(got == s.reference, difference(got, s.reference));
    const notes stored = outbox_notes(server);
    CHECK_MESSAGE(stored == s.reference, difference(stored, s.reference));
}

// A worker killed mid-stream (between batches): an activation given to it as it dies answers
// an error (it never ran: the process was gone before it read the request) and is sent again,
// as OpenWhisk or the consumer does; the pool starts the worker again in place. The stream
// raced by four clients loses nothing and sends nothing twice.
TEST_CASE("alerts/workers: a worker killed mid-stream loses nothing") {
    const stream& s = generated();
    redis_server server(false, tracked_spawn(), tracked_kill);
    json env = redis_env(server, s.config);
    env["OW_WORKERS"] = "4";
    auto proxy = start_monitor(env);
    notes got;
    const std::size_t half = s.batches.size() / 2;
    std::size_t failed = 0;
    for (std::size_t i = 0; i < s.batches.size(); ++i) {
        if (i == half) {
            const std::vector<pid_t> workers = proxy->children();
            REQUIRE(workers.size() == 4);
            REQUIRE(::kill(workers[1], SIGKILL) == 0);
        }
        std::vector<http_reply> replies = race(*proxy, s.batches[i], 4);
        for (http_reply& reply : replies) {
            if (!contains(reply.body, "command exited (worker ")) continue;
            CHECK(i == half);
            ++failed;
            reply = proxy->run_raw("{\"value\":" + s.batches[i] + "}");
        }
        add_replies(got, replies);
    }
    CHECK(failed <= 1);
    CHECK(proxy->children().size() == 4);  // started again
    CHECK_MESSAGE(got == s.reference, difference(got, s.reference));
    const notes stored = outbox_notes(server);
    CHECK_MESSAGE(stored == s.reference, difference(stored, s.reference));
}

// The stream across two proxies of four workers each, every batch raced by two clients to
// each: within and across containers, one process's notes, each once in the outbox.
TEST_CASE("alerts/workers: two proxies of 4 workers each, every batch raced to both, give one "
          "process's notes") {
    const stream& s = generated();
    redis_server server(false, tracked_spawn(), tracked_kill);
    json env = redis_env(server, s.config);
    env["OW_WORKERS"] = "4";
    auto a = start_monitor(env);
    auto b = start_monitor(env);
    const std::map<pid_t, long> before_a = worker_cpu(*a);
    const std::map<pid_t, long> before_b = worker_cpu(*b);
    notes got;
    for (const std::string& value : s.batches) {
        std::vector<http_reply> from_b;
        std::thread other([&] { from_b = race(*b, value, 2); });
        add_replies(got, race(*a, value, 2));
        other.join();
        add_replies(got, from_b);
    }
    // Two clients per proxy: at least two workers of each are busy at once.
    for (const auto* side : {&before_a, &before_b}) REQUIRE(side->size() == 4);
    CHECK_MESSAGE(got == s.reference, difference(got, s.reference));
    const notes stored = outbox_notes(server);
    CHECK_MESSAGE(stored == s.reference, difference(stored, s.reference));
}

// The mass event of alerts_redis_test.cpp through 4 workers: each step's four batches (a
// quarter of the 10,000 cameras each) sent at once, decided side by side by the workers; the
// notes are those of one memory-only process fed each step whole, each once in the outbox.
TEST_CASE("alerts/workers: a site outage in four concurrent batches per step through 4 workers "
          "gives one process's notes") {
    const big_site site(10000);
    notes reference;
    {
        auto memory = start_monitor(json{{"ALERT_CONFIG", site.config.string()}});
        for (const std::string& value : outage_steps(site, 1))
            add_notes(reference, run_text(*memory, value));
    }
    REQUIRE(reference.size() == 30000);
    redis_server server(false, tracked_spawn(), tracked_kill);
    json env = redis_env(server, site.config);
    env["OW_WORKERS"] = "4";
    auto proxy = start_monitor(env);
    const std::map<pid_t, long> before = worker_cpu(*proxy);
    notes got;
    const strings steps = outage_steps(site, 4);  // 4 parts, a tick, 4 parts, a tick, 4 parts
    REQUIRE(steps.size() == 14);
    for (const std::size_t from : {std::size_t{0}, std::size_t{5}, std::size_t{10}}) {
        const auto first = steps.begin() + static_cast<std::ptrdiff_t>(from);
        send_together(*proxy, strings(first, first + 4), got);
        if (from < 10) add_notes(got, run_text(*proxy, steps[from + 4]));
    }
    check_all_busy(*proxy, before, 4);
    CHECK_MESSAGE(got == reference, difference(got, reference));
    const notes stored = outbox_notes(server);
    CHECK(stored.size() == reference.size());
    CHECK_MESSAGE(stored == reference, difference(stored, reference));
}
