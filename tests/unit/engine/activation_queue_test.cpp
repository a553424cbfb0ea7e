// The engine's scheduling rules, without a process: admission in arrival order, the byte and
// depth window, partial writes, and what goes back to waiting when a process dies.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/activation_queue.hpp"

using namespace actionloop;

namespace {

activation_ptr request(const std::string& line, int at = 0) {
    auto a = std::make_unique<activation>();
    a->line = line;
    a->submitted = activation::clock::time_point(std::chrono::milliseconds(at));
    return a;
}

// Admits what fits, as the engine's flush does.
size_t admit(activation_queue& q, bool usable = true) {
    size_t n = 0;
    while (q.next_fits(usable)) {
        q.admit_next();
        ++n;
    }
    return n;
}

// The bytes unwritten() offers, joined.
std::string pending(const activation_queue& q, size_t max_pieces = 512) {
    std::vector<iovec> pieces(max_pieces);
    const size_t n = q.unwritten(pieces.data(), pieces.size());
    std::string out;
    for (size_t i = 0; i < n; ++i)
        out.append(static_cast<const char*>(pieces[i].iov_base), pieces[i].iov_len);
    return out;
}

}  // namespace

TEST_CASE("activation_queue: a window of one admits the next request only once the head leaves") {
    activation_queue q({SIZE_MAX, 1, 1});
    q.push(request("a"));
    q.push(request("b"));
    CHECK(admit(q) == 1);
    CHECK(q.in_flight() == 1);
    CHECK(q.waiting() == 1);
    CHECK(pending(q) == "a\n");
    q.wrote(2);
    CHECK(q.all_written());
    CHECK(q.pop_head()->line == "a");
    CHECK(admit(q) == 1);
    CHECK(q.head()->line == "b");
    CHECK(q.pop_head()->line == "b");
    CHECK(q.idle());
}

TEST_CASE("activation_queue: the window is bounded in bytes and depth, in arrival order") {
    activation_queue q({10, 3, 3});
    q.push(request("1234"));  // 5 bytes with its newline
    q.push(request("123"));   // 4: 9 in all
    q.push(request("12"));    // 3: 12 > 10, waits
    q.push(request("1"));     // 2: would fit, but does not overtake
    CHECK(admit(q) == 2);
    CHECK(pending(q) == "1234\n123\n");
    q.wrote(9);
    q.pop_head();  // 4 bytes in flight: "12" fits now, then "1" (9 bytes, depth 3)
    CHECK(admit(q) == 2);
    CHECK(q.in_flight() == 3);
    q.push(request(""));
    CHECK_FALSE(q.next_fits(true));  // depth 3 reached
    SUBCASE("a broken process takes no more, but an empty window takes anything") {
        while (q.in_flight() > 0) q.pop_head();
        q.push(request(std::string(100, 'x')));
        CHECK(q.next_fits(false));  // empty window: any size, the process is restarted first
        q.admit_next();
        CHECK_FALSE(q.next_fits(true));  // 101 bytes in flight
    }
}

TEST_CASE("activation_queue: partial writes resume mid-line, with each line's newline") {
    activation_queue q({100, 10, 3});
    q.push(request("abc"));
    q.push(request("de"));
    admit(q);
    q.wrote(2);
    CHECK(pending(q) == "c\nde\n");
    q.wrote(2);
    CHECK(pending(q) == "de\n");
    CHECK_FALSE(q.all_written());
    q.wrote(3);
    CHECK(q.all_written());
    CHECK(pending(q).empty());
    SUBCASE("unwritten() stops at whole requests when pieces run out") {
        q.push(request("f"));
        q.push(request("g"));
        admit(q);
        CHECK(pending(q, 3) == "f\n");  // 2 pieces a request: "g" waits for the next call
    }
}

TEST_CASE("activation_queue: the head leaving mid-write keeps the write position of the rest") {
    activation_queue q({100, 10, 3});
    q.push(request("aa"));
    q.push(request("bb"));
    admit(q);
    q.wrote(4);  // "aa\n" and "b"
    q.pop_head();
    CHECK(pending(q) == "b\n");
    q.wrote(2);
    CHECK(q.all_written());
}

TEST_CASE(
    "activation_queue: requests the process never read go back in order, up to max_attempts") {
    activation_queue q({100, 10, 2});
    for (const char* line : {"a", "b", "c"}) q.push(request(line));
    admit(q);
    q.wrote(2);  // "a\n" whole; "b" and "c" never reached the process
    auto given_up = q.take_unsent();
    CHECK(given_up.empty());
    CHECK(q.in_flight() == 1);
    CHECK(q.waiting() == 2);
    q.pop_head();
    admit(q);  // second attempt for b and c
    CHECK(pending(q) == "b\nc\n");
    q.wrote(1);  // "b" started
    given_up = q.take_unsent();
    REQUIRE(given_up.size() == 2);  // both used their two attempts: oldest first
    CHECK(given_up[0]->line == "b");
    CHECK(given_up[1]->line == "c");
    CHECK(q.idle());
}

TEST_CASE("activation_queue: a failed head sends the ones behind it again, in order, from byte 0") {
    activation_queue q({100, 10, 3});
    for (const char* line : {"a", "b", "c"}) q.push(request(line));
    q.push(request("d"));
    admit(q);
    q.wrote(5);
    auto head = q.pop_head_requeue_rest();
    CHECK(head->line == "a");
    CHECK(q.in_flight() == 0);
    CHECK(q.waiting() == 3);
    admit(q);
    CHECK(pending(q) == "b\nc\nd\n");
}

TEST_CASE(
    "activation_queue: a request never read by a stale process is not counted as an attempt") {
    activation_queue q({SIZE_MAX, 1, 1});
    q.push(request("a"));
    admit(q);
    CHECK(q.head()->attempts == 1);
    q.wrote(2);
    q.requeue_unread_head();
    CHECK(q.in_flight() == 0);
    auto again = q.pop_waiting();
    CHECK(again->attempts == 0);
    CHECK_FALSE(again->fresh);
    CHECK(again->written == 0);
}

TEST_CASE("activation_queue: oldest_submitted looks at both queues") {
    activation_queue q({100, 1, 3});
    CHECK(q.oldest_submitted() == activation::clock::time_point::max());
    q.push(request("a", 5));
    q.push(request("b", 7));
    admit(q);
    CHECK(q.oldest_submitted() == activation::clock::time_point(std::chrono::milliseconds(5)));
    q.pop_head();
    CHECK(q.oldest_submitted() == activation::clock::time_point(std::chrono::milliseconds(7)));
    q.pop_waiting();
    CHECK(q.oldest_submitted() == activation::clock::time_point::max());
}

TEST_CASE("admission_limit: at most max places at a time, and a place given back is taken again") {
    admission_limit limit(2);
    CHECK(limit.try_enter());
    CHECK(limit.try_enter());
    CHECK_FALSE(limit.try_enter());  // full: refused, nothing taken
    CHECK(limit.count() == 2);
    limit.leave();
    CHECK(limit.count() == 1);
    CHECK(limit.try_enter());
    CHECK_FALSE(limit.try_enter());
    limit.leave();
    limit.leave();
    limit.leave();  // more leaves than entries never wrap around
    CHECK(limit.count() == 0);
    CHECK(limit.try_enter());
}

TEST_CASE("admission_limit: max 0 is no bound") {
    admission_limit limit(0);
    int taken = 0;
    for (int i = 0; i < 100000; ++i) taken += limit.try_enter() ? 1 : 0;
    CHECK(taken == 100000);
    CHECK(limit.count() == 100000);
    CHECK(limit.max() == 0);
}
