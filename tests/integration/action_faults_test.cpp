// Actions that fail on purpose, through the real proxy: actions that crash on start, mid-run
// and between runs, hang past their deadline, never read their stdin, write garbage or
// several lines or nothing on fd 3, fork children that keep the pipes open or leave the
// process group, or pass the answer cap. For each: a clear error in bounded time, later
// activations served, and nothing leaked (leak_checks.hpp): the proxy's open fds come back to
// their count, no process survives beyond the action itself (nor escapes to this test
// process, the subreaper), and no action/N directory is left behind by a failure.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <vector>

#include "expectations.hpp"
#include "leak_checks.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::seconds;
using steady = std::chrono::steady_clock;

namespace {

const char* const EXITED = "command exited";
const char* const DEADLINE = "The action did not answer before its deadline and was stopped.";

std::string fault_script(const std::string& name) { return fixture_text("faults/" + name); }

// The setup most cases share: a proxy with `code` initialized and, unless `warm` is false,
// one activation served; `fds` is then the proxy's fd count at rest. For an action that dies
// on its own (not warmed), fds_once_gone() learns the count the first time it is asked.
class action_under_test {
public:
    explicit action_under_test(const std::string& code, bool warm = true,
                               const proxy_options& options = {})
        : proxy(options) {
        REQUIRE(proxy.init(code).status == 200);
        if (warm) {
            check_echo(proxy, json{{"warm", 1}});
            fds = settled_fds(proxy.pid());
            fds_known_ = true;
        }
    }

    // The fd count once the action's processes are gone (learnt the first time).
    size_t fds_once_gone() {
        if (!fds_known_) {
            wait_until([&] { return descendant_pids(proxy.pid()).empty(); }, seconds(5));
            fds = settled_fds(proxy.pid());
            fds_known_ = true;
        }
        return fds;
    }

    proxy_process proxy;
    size_t fds = 0;

private:
    bool fds_known_ = false;
};

}  // namespace

// Without OW_WAIT_FOR_ACK the proxy only probes for 5 ms (as upstream): on a loaded machine the
// script may still be starting then, and the init succeeds; the first run then fails instead.
TEST_CASE(
    "action faults: an action that crashes on start fails its init or its first run, cleanly") {
    proxy_process proxy;
    const size_t fds = settled_fds(proxy.pid());
    const timed_reply init = timed([&] { return proxy.init(fixture_text("exits_now.sh")); });
    CHECK(init.seconds < 5);
    if (init.reply.status == 502) {
        CHECK_ERROR_REPLY(init.reply, 502, std::string("cannot start action: ") + EXITED);
        check_clean(proxy, fds, 0, 0);
        REQUIRE(proxy.init(fixture_text("echo.sh")).status == 200);  // a fixed action inits
        check_echo(proxy, json{{"after", "crash"}});
        CHECK(action_dirs(proxy) == 1);
    } else {
        MESSAGE("the 5 ms start probe missed the exit (slow machine): checking the run");
        CHECK_REPLY(init.reply, 200, OK_BODY);
        const timed_reply run = run_timed(proxy, json{{"x", 1}});
        CHECK(run.reply.status >= 400);
        CHECK(run.seconds < 5);
        check_clean(proxy, settled_fds(proxy.pid()), 0, 1);
    }
}

TEST_CASE("action faults: crashing before the ack is refused and leaves nothing behind") {
    proxy_process proxy(with_env({{"OW_WAIT_FOR_ACK", "1"}}));
    const size_t fds = settled_fds(proxy.pid());
    for (int i = 0; i < 3; ++i) {
        const timed_reply failed = timed([&] { return proxy.init(fixture_text("exits_now.sh")); });
        CHECK_ERROR_REPLY(failed.reply, 502,
                          "cannot start action: Command exited abruptly during initialization.");
        CHECK(failed.seconds < 5);
        check_clean(proxy, fds, 0, 0);
    }
}

TEST_CASE(
    "action faults: an action that dies right after starting gets 400 on every run, quickly") {
    action_under_test action(fault_script("crash_soon.sh"), false);  // past the 5 ms probe
    const proxy_process& proxy = action.proxy;
    for (int i = 0; i < 4; ++i) {
        const timed_reply run = run_timed(proxy, json{{"try", i}});
        CHECK_ERROR_REPLY(run.reply, 400, EXITED);
        CHECK(run.seconds < 5);
        check_clean(proxy, action.fds_once_gone(), 0, 1);
    }
    CHECK(contains(proxy.stderr_text(), "the action process is gone (exit status 7)"));
}

TEST_CASE("action faults: an action that crashes during a run is restarted on the next run") {
    proxy_process proxy;
    REQUIRE(proxy.init(fixture_text("crash_on_run.sh")).status == 200);
    CHECK_ERROR_REPLY(proxy.run(json{{"crash", true}}, json::object(), NO_HANG), 400,
                      "command exited");
    const stream_texts after_crash = proxy.check_streams(1);
    CHECK_REPLY(proxy.run(json{{"after", "crash"}}, json::object(), NO_HANG), 200,
                "{\"after\":\"crash\"}\n");
    CHECK_REPLY(proxy.run(json{{"and", "again"}}, json::object(), NO_HANG), 200,
                "{\"and\":\"again\"}\n");
    const stream_texts streams = proxy.check_streams(3);
    CHECK_FALSE(streams.err.empty());  // the restart is announced on stderr
    CHECK(proxy.children().size() == 1);
}

TEST_CASE("action faults: a crash mid-run (signal, half an answer) is 400, the next run works") {
    action_under_test action(fault_script("crash_signal.sh"));
    const proxy_process& proxy = action.proxy;
    const size_t fds = action.fds;
    for (int i = 0; i < 3; ++i) {
        const timed_reply segv = run_timed(proxy, json{{"segv", true}});
        CHECK_ERROR_REPLY(segv.reply, 400, "command exited (killed by signal 11, SIGSEGV)");
        CHECK(segv.seconds < 5);
        check_echo(proxy, json{{"after", "segv"}, {"i", i}});
        const timed_reply partial = run_timed(proxy, json{{"partial", true}});
        CHECK_ERROR_REPLY(partial.reply, 400, EXITED);
        CHECK(partial.seconds < 5);
        check_echo(proxy, json{{"after", "partial"}, {"i", i}});
        check_clean(proxy, fds, 1, 1);
    }
    CHECK(contains(proxy.stderr_text(), "killed by signal 11"));  // the restart says why
}

TEST_CASE("action faults: an action that dies between runs is restarted, nothing leaks") {
    action_under_test action(fixture_text("crash_on_run.sh"));
    const proxy_process& proxy = action.proxy;
    const size_t fds = action.fds;
    for (int i = 0; i < 5; ++i) {
        check_echo(proxy, json{{"exit_after", true}, {"i", i}});
        REQUIRE(wait_until([&] { return descendant_pids(proxy.pid()).empty(); }, seconds(10)));
        check_echo(proxy, json{{"next", i}});
        check_clean(proxy, fds, 1, 1);
    }
}

// B8 (docs/protocol.md): a crashed action stayed a zombie until the next /run. The proxy now
// reaps its children as they exit, and still tells why the action went at the next /run.
TEST_CASE(
    "action faults: an action that dies between runs leaves no zombie, without a further /run") {
    action_under_test action(fixture_text("crash_on_run.sh"));
    const proxy_process& proxy = action.proxy;
    for (int i = 0; i < 3; ++i) {
        const std::vector<pid_t> before = child_pids(proxy.pid());
        REQUIRE(before.size() == 1);
        check_echo(proxy, json{{"exit_after", true}, {"i", i}});  // then it exits (status 0)
        REQUIRE(wait_until([&] { return !process_alive(before[0]); }, seconds(5)));
        const auto died = steady::now();
        CHECK_MESSAGE(wait_until([&] { return zombie_children(proxy.pid()).empty(); },
                                 std::chrono::milliseconds(1000)),
                      "zombies: " << zombie_children(proxy.pid()).size());
        CHECK(steady::now() - died < std::chrono::milliseconds(1100));
        check_echo(proxy, json{{"next", i}});  // restarted
    }
    CHECK(contains(proxy.stderr_text(), "the action process is gone (exit status 0)"));
}

TEST_CASE("action faults: a crashed action's exit status survives the prompt reaping") {
    action_under_test action(fault_script("crash_soon.sh"), false);  // exits 7 after 0.3 s
    const proxy_process& proxy = action.proxy;
    CHECK(wait_until([&] { return child_pids(proxy.pid()).empty(); }, seconds(5)));
    CHECK(wait_until([&] { return zombie_children(proxy.pid()).empty(); },
                     std::chrono::milliseconds(1000)));
    CHECK_ERROR_REPLY(proxy.run(json{{"x", 1}}, json::object(), NO_HANG), 400, EXITED);
    CHECK(contains(proxy.stderr_text(), "the action process is gone (exit status 7)"));
}

TEST_CASE("action faults: runs that hang past their deadline are stopped with 502, nothing leaks") {
    action_under_test action(fixture_text("hang.sh"));
    const proxy_process& proxy = action.proxy;
    const size_t fds = action.fds;
    for (int i = 0; i < 3; ++i) {
        const timed_reply hung =
            run_timed(proxy, json{{"hang", true}}, json{{"deadline", deadline_in(500)}});
        CHECK_ERROR_REPLY(hung.reply, 502, DEADLINE);
        CHECK(hung.seconds < 5);
        check_echo(proxy, json{{"after", i}});
        check_clean(proxy, fds, 1, 1);
    }
    CHECK(contains(proxy.stderr_text(), "missed its deadline"));
    // A deadline still far off does not stop a run.
    CHECK_REPLY(proxy.run(json{{"x", 2}}, json{{"deadline", deadline_in(60000)}}, NO_HANG), 200,
                "{\"x\":2}\n");
    CHECK(proxy.children().size() == 1);
}

TEST_CASE("action faults: an action that never reads its stdin is stopped at the deadline") {
    action_under_test action(fault_script("not_reading.sh"), false);
    const proxy_process& proxy = action.proxy;
    const json big = {{"pad", std::string(1 << 20, 'p')}};  // far more than a pipe holds
    for (int i = 0; i < 3; ++i) {
        const timed_reply hung = run_timed(proxy, big, json{{"deadline", deadline_in(1500)}});
        CHECK_ERROR_REPLY(hung.reply, 502, DEADLINE);
        CHECK(hung.seconds < 6);
        check_clean(proxy, action.fds_once_gone(), 0, 1);
    }
}

// B9 (docs/protocol.md): a missed deadline while the request is being written was sometimes
// reported as 400 "command exited" (poll timeouts rounded down). The deadline leaves room for
// a loaded machine: one that has passed when the 1 MiB request arrives is ignored (as not the
// platform's), and the run would then wait for an answer that never comes.
TEST_CASE("action faults: a deadline missed while writing the request is always 502") {
    proxy_process proxy;
    REQUIRE(proxy.init(fault_script("not_reading.sh")).status == 200);
    const json big = {{"pad", std::string(1 << 20, 'p')}};
    for (int i = 0; i < 10; ++i) {
        const timed_reply hung = run_timed(proxy, big, json{{"deadline", deadline_in(1500)}});
        CHECK_ERROR_REPLY(hung.reply, 502, DEADLINE);
        CHECK(hung.seconds < 6);
    }
}

TEST_CASE(
    "action faults: garbage on fd 3 (random bytes, NULs, bad UTF-8) is 502, the next run works") {
    action_under_test action(fault_script("garbage.sh"));
    const proxy_process& proxy = action.proxy;
    const size_t fds = action.fds;
    for (int i = 0; i < 5; ++i) {
        const timed_reply bad = run_timed(proxy, json{{"garbage", true}});
        CHECK_ERROR_REPLY(bad.reply, 502, NOT_OBJECT);
        CHECK(bad.seconds < 5);
        check_echo(proxy, json{{"after", i}});
    }
    check_clean(proxy, fds, 1, 1);
}

TEST_CASE("action faults: several lines per answer never shift later answers, nothing leaks") {
    action_under_test action(fixture_text("multi_line.sh"));
    const proxy_process& proxy = action.proxy;
    const size_t fds = action.fds;
    for (int i = 0; i < 5; ++i) check_echo(proxy, json{{"n", i}});
    // A first line that is not an object is the answer (502), not skipped for a later one.
    CHECK_ERROR_REPLY(proxy.run(json{{"pretty", true}}, json::object(), NO_HANG), 502, NOT_OBJECT);
    check_echo(proxy, json{{"n", 9}});
    proxy.check_streams(8);  // the warm run, 5, the 502 and the last
    check_clean(proxy, fds, 1, 1);
    CHECK(contains(proxy.stderr_text(), "discarded"));  // the dropped lines are logged
}

// B2 (docs/protocol.md): extra output larger than a pipe is still being written when the next
// activation starts; discard_stale_output() only drains what is there before the request
// goes out. Output on fd 3 while the next request is still unread means the pipes cannot be
// trusted: the action is started again and the request (never read, never run) goes to the
// fresh process, so the next answer is never one of the old extra lines.
TEST_CASE("action faults: more extra lines than a pipe holds never shift later answers") {
    proxy_process proxy;
    REQUIRE(proxy.init(fault_script("extra_flood.sh")).status == 200);
    check_echo(proxy, json{{"n", 0}, {"extra", 20000}});  // ~290 KiB of extra lines
    for (int i = 1; i <= 3; ++i) check_echo(proxy, json{{"n", i}});
}

TEST_CASE(
    "action faults: an action that closes fd 3 or exits without a word is 400, then restarted") {
    action_under_test action(fault_script("close_fd3.sh"));
    const proxy_process& proxy = action.proxy;
    const size_t fds = action.fds;
    for (int i = 0; i < 3; ++i) {
        const timed_reply closed = run_timed(proxy, json{{"close", true}});
        CHECK_ERROR_REPLY(closed.reply, 400, EXITED);
        CHECK(closed.seconds < 5);
        check_echo(proxy, json{{"after", "close"}, {"i", i}});
        const timed_reply quit = run_timed(proxy, json{{"quit", true}});
        CHECK_ERROR_REPLY(quit.reply, 400, EXITED);
        CHECK(quit.seconds < 5);
        check_echo(proxy, json{{"after", "quit"}, {"i", i}});
        check_clean(proxy, fds, 1, 1);
    }
}

TEST_CASE("action faults: children that keep the pipes open die with a crashed action") {
    // The warm run leaves one `sleep 30` holding every pipe.
    action_under_test action(fixture_text("fork_keeps_pipes.sh"));
    const proxy_process& proxy = action.proxy;
    const size_t fds = action.fds;
    for (int i = 0; i < 3; ++i) {
        const timed_reply crash = run_timed(proxy, json{{"crash", true}});
        CHECK_ERROR_REPLY(crash.reply, 400, EXITED);
        CHECK(crash.seconds < 5);  // not the grandchild's 30 s
        check_echo(proxy, json{{"after", i}});
        check_clean(proxy, fds, 2, 1);  // the new action and the one sleep it left
    }
}

// B3 (docs/protocol.md): a child that left the action's process group (setsid) was not killed
// with the action; it kept the old pipes and lived on, outside the proxy's tree. The proxy is
// now a child subreaper: such orphans come back to it, and it kills them.
TEST_CASE("action faults: children in their own session die with a crashed action") {
    action_under_test action(fault_script("setsid_child.sh"));  // leaves one setsid sleep
    const proxy_process& proxy = action.proxy;
    // The action and its sleep, once the warm run's jq has exited.
    CHECK(wait_until([&] { return descendant_pids(proxy.pid()).size() == 2; }, seconds(3)));
    const timed_reply crash = run_timed(proxy, json{{"crash", true}});
    CHECK_ERROR_REPLY(crash.reply, 400, EXITED);
    CHECK(crash.seconds < 5);
    // Gone with the action, before any further /run: both setsid sleeps.
    CHECK_MESSAGE(wait_until([&] { return descendant_pids(proxy.pid()).empty(); }, seconds(3)),
                  "left: " << describe(descendant_pids(proxy.pid())));
    check_echo(proxy, json{{"after", 1}});
    check_clean(proxy, action.fds, 2, 1);  // the new action and its one setsid sleep
}

TEST_CASE(
    "action faults: a proxy stopped with SIGTERM takes the action and its setsid children along") {
    action_under_test action(fault_script("setsid_child.sh"));
    proxy_process& proxy = action.proxy;
    check_echo(proxy, json{{"again", 1}});  // two setsid sleeps now
    // The action and its two sleeps, once the last run's jq has exited.
    CHECK(wait_until([&] { return descendant_pids(proxy.pid()).size() == 3; }, seconds(3)));
    const std::vector<pid_t> started = descendant_pids(proxy.pid());
    ::kill(proxy.pid(), SIGTERM);
    REQUIRE(wait_until([&] { return !proxy.running(); }, seconds(5)));
    for (pid_t pid : started) CHECK_MESSAGE(!process_alive(pid), describe({pid}));
    CHECK(escaped(proxy).empty());
    const int status = proxy.stop();  // the wait status, already reaped
    // SIGTERM is the graceful shutdown (shutdown_test.cpp): with nothing in flight, the
    // drain ends at once and the proxy exits 0 (it used to die of the signal).
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE(
    "action faults: answers over OW_MAX_ANSWER_BYTES, even endless ones, are 502 and stopped") {
    proxy_process proxy(with_env({{"OW_MAX_ANSWER_BYTES", "1000"}}));
    REQUIRE(proxy.init(fixture_text("answer.sh")).status == 200);
    CHECK_REPLY(proxy.run(json{{"line", "{\"ok\":0}"}}, json::object(), NO_HANG), 200,
                "{\"ok\":0}\n");
    const size_t fds = settled_fds(proxy.pid());
    const std::string cap = "The action's answer exceeds the limit of 1000 bytes.";
    for (const size_t size : {size_t{5000}, size_t{200000}, size_t{200000}}) {
        const std::string huge = json{{"s", std::string(size, 'x')}}.dump();
        const timed_reply big = run_timed(proxy, json{{"line", huge}});
        CHECK_ERROR_REPLY(big.reply, 502, cap);
        CHECK(big.seconds < 5);
        CHECK_REPLY(proxy.run(json{{"line", "{\"ok\":1}"}}, json::object(), NO_HANG), 200,
                    "{\"ok\":1}\n");
        check_clean(proxy, fds, 1, 1);
    }
    CHECK(contains(proxy.stderr_text(), "passed 1000 bytes"));
}

TEST_CASE("action faults: an endless answer line is cut at the cap and its writers are stopped") {
    action_under_test action(fault_script("endless_line.sh"), false,
                             with_env({{"OW_MAX_ANSWER_BYTES", "100000"}}));
    const proxy_process& proxy = action.proxy;
    for (int i = 0; i < 3; ++i) {
        const timed_reply endless = run_timed(proxy, json{{"i", i}});
        CHECK_ERROR_REPLY(endless.reply, 502,
                          "The action's answer exceeds the limit of 100000 bytes.");
        CHECK(endless.seconds < 5);
        check_clean(proxy, action.fds_once_gone(), 0, 1);  // `yes` and `tr` went with the action
    }
}
