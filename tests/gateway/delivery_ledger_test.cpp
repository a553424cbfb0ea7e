// The delivery ledger (actions/alerts/gateway/ledger/) on its own: no Redis, no server, no
// sleep; time is a fake clock the test moves.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "gateway/ledger/delivery_ledger.hpp"
#include "gateway/ledger/email_address.hpp"
#include "gateway/ledger/outbox_record.hpp"

namespace {

using namespace std::chrono_literals;
using alerts::gateway::attempt_result;
using alerts::gateway::delivery_ledger;
using alerts::gateway::delivery_state;
using alerts::gateway::ledger_event;
using alerts::gateway::ledger_limits;
using alerts::gateway::new_entry;
using alerts::gateway::retry_policy;
using alerts::gateway::send_order;
using alerts::gateway::steady_time;
using alerts::gateway::verdict;

constexpr std::size_t EMAIL = 0;
constexpr std::size_t HOOK = 1;

struct fake_clock {
    steady_time now{};
    void advance(std::chrono::milliseconds by) { now += by; }
};

delivery_ledger make_ledger(ledger_limits limits = {}, int max_attempts = 3) {
    return delivery_ledger({{"email", true}, {"hook", false}},
                           retry_policy{max_attempts, 500ms, 2000ms}, limits);
}

new_entry entry_of(const std::string& id, std::vector<std::string> recipients = {"a@x.org"}) {
    new_entry entry;
    entry.id = id;
    entry.dedup_key = "key-" + id;
    entry.notification = R"({"device":"cam1"})";
    entry.recipients = std::move(recipients);
    return entry;
}

std::vector<send_order> sends_for(delivery_ledger& ledger, std::size_t target) {
    std::vector<send_order> out;
    for (send_order& order : ledger.take_sends()) {
        if (order.target == target) out.push_back(std::move(order));
    }
    return out;
}

attempt_result accepted() { return {}; }
attempt_result temporary(const std::string& error = "HTTP 500") {
    return {verdict::temporary, error, {}};
}

int count_events(const std::vector<ledger_event>& events, ledger_event::kind what) {
    int n = 0;
    for (const ledger_event& event : events) n += event.what == what ? 1 : 0;
    return n;
}

}  // namespace

TEST_CASE("the retry schedule doubles from the first wait and stops at the longest") {
    const retry_policy retry{6, 500ms, 3000ms};
    CHECK(retry.wait_after(1) == 500ms);
    CHECK(retry.wait_after(2) == 1000ms);
    CHECK(retry.wait_after(3) == 2000ms);
    CHECK(retry.wait_after(4) == 3000ms);
    CHECK(retry.wait_after(40) == 3000ms);
    CHECK(retry.attempts_left(5));
    CHECK_FALSE(retry.attempts_left(6));
}

TEST_CASE("a failed webhook is retried only after its back-off, then dead-lettered") {
    fake_clock clock;
    auto ledger = make_ledger();
    ledger.add(entry_of("1-0"));
    const auto first = ledger.take_sends();
    REQUIRE(first.size() == 2);
    ledger.record("1-0", EMAIL, accepted(), clock.now);
    ledger.record("1-0", HOOK, temporary(), clock.now);
    auto writes = ledger.take_writes();
    REQUIRE(writes.progress.size() == 1);  // the e-mail's "delivered" is kept while the hook waits
    CHECK(writes.progress[0].second ==
          std::vector<std::pair<std::string, std::string>>{{"email", "delivered"}});
    CHECK(writes.acknowledge.empty());
    ledger.writes_done(writes);

    clock.advance(499ms);
    ledger.wake_due(clock.now);
    CHECK(ledger.take_sends().empty());
    clock.advance(1ms);
    ledger.wake_due(clock.now);
    auto second = sends_for(ledger, HOOK);
    REQUIRE(second.size() == 1);
    CHECK(second[0].attempt == 2);
    ledger.record("1-0", HOOK, temporary(), clock.now);
    CHECK(ledger.next_wake() == clock.now + 1000ms);
    clock.advance(1000ms);
    ledger.wake_due(clock.now);
    REQUIRE(sends_for(ledger, HOOK).size() == 1);
    ledger.record("1-0", HOOK, temporary("HTTP 503"), clock.now);  // the third and last

    writes = ledger.take_writes();
    REQUIRE(writes.dead_letters.size() == 1);
    CHECK(writes.dead_letters[0].target == "hook");
    CHECK(writes.dead_letters[0].error == "HTTP 503");
    CHECK(writes.dead_letters[0].attempts == 3);
    CHECK(writes.acknowledge == std::vector<std::string>{"1-0"});
    CHECK(writes.forget_progress == std::vector<std::string>{"1-0"});
    ledger.writes_done(writes);
    CHECK(ledger.held() == 0);
    CHECK(ledger.take_writes().empty());
}

TEST_CASE("a permanent refusal is dead-lettered at once, the entry is acked without progress") {
    fake_clock clock;
    auto ledger = make_ledger();
    ledger.add(entry_of("1-0"));
    REQUIRE(ledger.take_sends().size() == 2);
    ledger.record("1-0", HOOK, {verdict::permanent, "HTTP 404", {}}, clock.now);
    ledger.record("1-0", EMAIL, accepted(), clock.now);
    const auto events = ledger.take_events();
    CHECK(count_events(events, ledger_event::kind::dead_letter) == 1);
    CHECK(count_events(events, ledger_event::kind::complete) == 1);
    const auto writes = ledger.take_writes();
    CHECK(writes.dead_letters.size() == 1);
    CHECK(writes.progress.empty());
    CHECK(writes.acknowledge == std::vector<std::string>{"1-0"});
    CHECK(writes.forget_progress.empty());  // no hash was ever written
}

TEST_CASE("pending(): none, progress alone, or urgent (an acknowledgement or a dead letter)") {
    using alerts::gateway::pending_writes;
    fake_clock clock;
    auto ledger = make_ledger();
    CHECK(ledger.pending() == pending_writes::none);
    ledger.add(entry_of("1-0"));
    ledger.add(entry_of("2-0"));
    REQUIRE(ledger.take_sends().size() == 4);
    ledger.record("1-0", EMAIL, accepted(), clock.now);  // the hook still owes it: progress
    CHECK(ledger.pending() == pending_writes::progress_only);
    ledger.record("2-0", HOOK, {verdict::permanent, "HTTP 404", {}}, clock.now);  // a letter
    CHECK(ledger.pending() == pending_writes::urgent);
    ledger.writes_done(ledger.take_writes());
    CHECK(ledger.pending() == pending_writes::none);
    ledger.record("1-0", HOOK, accepted(), clock.now);  // complete: an acknowledgement
    CHECK(ledger.pending() == pending_writes::urgent);
}

TEST_CASE("writes that failed are offered again, unchanged") {
    fake_clock clock;
    auto ledger = make_ledger();
    ledger.add(entry_of("1-0"));
    for (const send_order& order : ledger.take_sends()) {
        ledger.record(order.entry_id, order.target, accepted(), clock.now);
    }
    const auto first = ledger.take_writes();
    const auto again = ledger.take_writes();  // Redis failed: nothing was confirmed
    CHECK(again.acknowledge == first.acknowledge);
    ledger.writes_done(again);
    CHECK(ledger.held() == 0);
}

TEST_CASE("a stuck webhook fills only its own window: e-mail keeps flowing, parked entries wait "
          "their turn") {
    fake_clock clock;
    auto ledger = make_ledger({2, 100, 64});
    for (int i = 1; i <= 5; ++i) ledger.add(entry_of(std::to_string(i) + "-0"));
    CHECK(ledger.active(HOOK) == 2);
    CHECK(ledger.parked(HOOK) == 3);
    CHECK(ledger.parked(EMAIL) == 3);
    // The e-mails go; the webhook's two never come back.
    for (int round = 0; round < 3; ++round) {
        for (const send_order& order : ledger.take_sends()) {
            if (order.target == EMAIL) ledger.record(order.entry_id, EMAIL, accepted(), clock.now);
        }
    }
    CHECK(ledger.active(EMAIL) == 0);
    CHECK(ledger.in_flight(HOOK) == 2);
    CHECK(ledger.room() == 2);  // the e-mail's window is free again
    for (int i = 6; i <= 7; ++i) ledger.add(entry_of(std::to_string(i) + "-0"));
    const auto sends = sends_for(ledger, EMAIL);
    CHECK(sends.size() == 2);  // new e-mails start at once, beside the stuck webhook
    // One webhook delivery ends: the oldest parked entry takes its place.
    ledger.record("1-0", HOOK, accepted(), clock.now);
    const auto hook = sends_for(ledger, HOOK);
    REQUIRE(hook.size() == 1);
    CHECK(hook[0].entry_id == "3-0");
}

TEST_CASE("an entry done for the healthy target no longer counts against it") {
    fake_clock clock;
    auto ledger = make_ledger({1, 10, 64});
    ledger.add(entry_of("1-0"));
    ledger.take_sends();
    ledger.record("1-0", EMAIL, accepted(), clock.now);
    CHECK(ledger.active(EMAIL) == 0);
    CHECK(ledger.active(HOOK) == 1);
    CHECK(ledger.room() == 1);
    ledger.add(entry_of("2-0"));
    CHECK(ledger.room() == 0);  // both windows full now
    CHECK(ledger.parked(HOOK) == 1);
}

TEST_CASE("max_held bounds everything held, parked entries included") {
    auto ledger = make_ledger({100, 3, 64});
    for (int i = 1; i <= 3; ++i) ledger.add(entry_of(std::to_string(i) + "-0"));
    CHECK(ledger.room() == 0);
}

TEST_CASE("per-target concurrency: no more in flight than allowed") {
    auto ledger = make_ledger({100, 100, 2});
    for (int i = 1; i <= 5; ++i) ledger.add(entry_of(std::to_string(i) + "-0"));
    CHECK(ledger.take_sends().size() == 4);
    CHECK(ledger.in_flight(EMAIL) == 2);
    CHECK(ledger.take_sends().empty());
}

TEST_CASE("a claimed entry's progress is kept: a target that has it is not sent again") {
    auto ledger = make_ledger();
    auto entry = entry_of("1-0");
    entry.progress = {{"email", "delivered"}};
    ledger.add(entry);
    const auto sends = ledger.take_sends();
    REQUIRE(sends.size() == 1);
    CHECK(sends[0].target == HOOK);

    auto done = entry_of("2-0");
    done.progress = {{"email", "delivered"}, {"hook", "dead"}};
    ledger.add(done);
    const auto writes = ledger.take_writes();
    CHECK(writes.acknowledge == std::vector<std::string>{"2-0"});
    CHECK(writes.forget_progress == std::vector<std::string>{"2-0"});
}

TEST_CASE("a refused recipient is dead-lettered on its own, the others have the e-mail") {
    fake_clock clock;
    auto ledger = make_ledger();
    ledger.add(entry_of("1-0", {"good@x.org", "gone@x.org", "other@x.org"}));
    REQUIRE(sends_for(ledger, EMAIL).size() == 1);
    ledger.record("1-0", EMAIL, {verdict::accepted, "", {{"gone@x.org", 550, "no such user"}}},
                  clock.now);
    ledger.record("1-0", HOOK, accepted(), clock.now);
    const auto writes = ledger.take_writes();
    REQUIRE(writes.dead_letters.size() == 1);
    CHECK(writes.dead_letters[0].recipient == "gone@x.org");
    CHECK(writes.dead_letters[0].error == "refused: 550 no such user");
    CHECK(writes.acknowledge == std::vector<std::string>{"1-0"});
    const auto* entry = ledger.find("1-0");
    REQUIRE(entry);
    CHECK(entry->targets[EMAIL].state == delivery_state::delivered);
}

TEST_CASE("a recipient refused for now (4xx) is retried alone, and recorded as still owed") {
    fake_clock clock;
    auto ledger = make_ledger();
    ledger.add(entry_of("1-0", {"good@x.org", "busy@x.org"}));
    REQUIRE(sends_for(ledger, EMAIL).size() == 1);
    ledger.record("1-0", EMAIL, {verdict::accepted, "", {{"busy@x.org", 451, "try later"}}},
                  clock.now);
    const auto writes = ledger.take_writes();
    REQUIRE(writes.progress.size() == 1);
    CHECK(writes.progress[0].second ==
          std::vector<std::pair<std::string, std::string>>{{"email", "retry:busy@x.org"}});
    ledger.writes_done(writes);
    clock.advance(500ms);
    ledger.wake_due(clock.now);
    const auto again = sends_for(ledger, EMAIL);
    REQUIRE(again.size() == 1);
    CHECK(again[0].recipients == std::vector<std::string>{"busy@x.org"});

    // After a restart, the progress hash says who is still owed the e-mail.
    auto restarted = make_ledger();
    auto claimed = entry_of("1-0", {"good@x.org", "busy@x.org"});
    claimed.progress = {{"email", "retry:busy@x.org"}};
    restarted.add(claimed);
    const auto resumed = sends_for(restarted, EMAIL);
    REQUIRE(resumed.size() == 1);
    CHECK(resumed[0].recipients == std::vector<std::string>{"busy@x.org"});
}

TEST_CASE("a malformed recipient is dead-lettered when read, the valid ones are sent") {
    auto ledger = make_ledger();
    ledger.add(entry_of("1-0", {"ok@x.org", "not an address", "a@b@c", "x@y.org>"}));
    const auto sends = sends_for(ledger, EMAIL);
    REQUIRE(sends.size() == 1);
    CHECK(sends[0].recipients == std::vector<std::string>{"ok@x.org"});
    const auto writes = ledger.take_writes();
    CHECK(writes.dead_letters.size() == 3);
    CHECK(writes.dead_letters[0].recipient == "not an address");
    CHECK(writes.dead_letters[0].error == "not an e-mail address");
}

TEST_CASE("no recipients: the e-mail is skipped, only malformed ones: dead") {
    fake_clock clock;
    auto ledger = make_ledger();
    ledger.add(entry_of("1-0", {}));
    ledger.add(entry_of("2-0", {"bad"}));
    CHECK(ledger.find("1-0")->targets[EMAIL].state == delivery_state::skipped);
    CHECK(ledger.find("2-0")->targets[EMAIL].state == delivery_state::dead);
    for (const send_order& order : ledger.take_sends()) {
        CHECK(order.target == HOOK);
        ledger.record(order.entry_id, order.target, accepted(), clock.now);
    }
    CHECK(ledger.take_writes().acknowledge.size() == 2);
}

TEST_CASE("an unusable entry is acknowledged after its dead letter") {
    auto ledger = make_ledger();
    ledger.acknowledge_unusable(
        "9-0", alerts::gateway::dead_letter{"9-0", "k", "all", "", "not JSON", 0, "{"});
    const auto writes = ledger.take_writes();
    CHECK(writes.dead_letters.size() == 1);
    CHECK(writes.acknowledge == std::vector<std::string>{"9-0"});
}

TEST_CASE("e-mail addresses: what RCPT TO may carry") {
    using alerts::gateway::is_email_address;
    CHECK(is_email_address("ops@example.com"));
    CHECK(is_email_address("first.last+tag@sub.example.org"));
    for (const char* bad : {"", "no-at", "@x.org", "a@", "a@@b", "a b@x.org", "a@x..org",
                            "a@x.org>", "<a@x.org", "a,b@x.org", "a@x.org\r\nDATA"}) {
        CHECK_MESSAGE(!is_email_address(bad), bad);
    }
}

TEST_CASE("an outbox record: recipients read, a bad one named") {
    using alerts::gateway::outbox_record;
    using alerts::gateway::read_record;
    using alerts::gateway::unreadable;
    const auto good = read_record({"1-0", false, "k", R"({"recipients":["a@x.org",3]})", "", ""});
    REQUIRE(std::holds_alternative<new_entry>(good));
    CHECK(std::get<new_entry>(good).recipients == std::vector<std::string>{"a@x.org"});
    CHECK(std::get<unreadable>(read_record({"1-0", false, "k", "{", "", ""}))
              .problem.rfind("the notification is not JSON", 0) == 0);
    CHECK(std::get<unreadable>(read_record({"1-0", false, "", "{}", "", ""})).problem ==
          "no dedup key");
    CHECK(std::get<unreadable>(read_record({"1-0", false, "k", "[]", "", ""})).problem ==
          "the notification is not a JSON object");
}

TEST_CASE("a replayed dead letter goes to its own target only, e-mail to its refused recipients") {
    using alerts::gateway::read_record;
    auto ledger = make_ledger();
    const std::string n = R"({"recipients":["a@x.org","b@x.org"]})";
    ledger.add(std::get<new_entry>(read_record({"1-0", false, "k1", n, "hook", ""})));
    std::vector<send_order> sends = ledger.take_sends();
    REQUIRE(sends.size() == 1);
    CHECK(sends[0].target == HOOK);
    ledger.add(std::get<new_entry>(read_record({"2-0", false, "k2", n, "email", "b@x.org"})));
    sends = ledger.take_sends();
    REQUIRE(sends.size() == 1);
    CHECK(sends[0].target == EMAIL);
    CHECK(sends[0].recipients == std::vector<std::string>{"b@x.org"});
    // A dead letter of the whole entry ("all": it was unreadable) goes to every target.
    ledger.add(std::get<new_entry>(read_record({"3-0", false, "k3", n, "all", ""})));
    CHECK(ledger.take_sends().size() == 2);
}
