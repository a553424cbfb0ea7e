// Running the one event loop, with a short busy poll before it sleeps.
//
// On a loop that sleeps in epoll_wait whenever it is idle, every request that arrives after
// an answer pays for waking the loop's thread: on virtual machines a sleeping CPU is woken
// by an inter-processor interrupt through the hypervisor, tens of microseconds here, more
// than the proxy spends on the request. So when the loop runs out of work with no activation
// in flight (nothing for the action to do on this or another CPU) and the traffic is dense
// (the last wait for work was under 1 ms), it polls for up to `spin` before it sleeps, and
// the next request finds it awake. Polling yields the CPU to any other runnable thread on
// it (sched_yield), and stops as soon as work comes or `spin` has passed.
//
// A poll that finds nothing makes the next 1, 2, 4 … 64 waits for work sleep at once (a poll
// that finds work resets this), so traffic just slower than `spin` rarely polls in vain.
//
// The cost: at most `spin` of CPU per idle moment, only while requests come less than 1 ms
// apart; sparse traffic (OpenWhisk's one activation at a time, an idle container) never
// polls. OW_SPIN_US sets `spin` (default 50 µs); 0 turns the poll off: the loop then sleeps
// at once, as Asio's io_context::run() does. docs/BENCH.md has the figures both ways.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include <boost/asio/io_context.hpp>

namespace actionloop {

/// What the polls did (for tests and diagnostics).
struct poll_counts {
    std::uint64_t found = 0;  // polls that found work before `spin` passed
    std::uint64_t empty = 0;  // polls that ran out, followed by a sleep
};

/// Runs `loop` until it is stopped or out of work. `busy()` (called on the loop) is true
/// while activations are in flight: the loop then sleeps when idle, leaving the CPU to the
/// action. Exceptions from handlers propagate, as from io_context::run(); `counts` (when
/// given) keeps counting across calls.
void run_event_loop(boost::asio::io_context& loop, std::chrono::microseconds spin,
                    const std::function<bool()>& busy, poll_counts* counts = nullptr);

}  // namespace actionloop
