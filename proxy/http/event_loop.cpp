// run_event_loop: see event_loop.hpp.
#include "http/event_loop.hpp"

#include <sched.h>

#include <algorithm>

namespace actionloop {
namespace {

using clock = std::chrono::steady_clock;

// A wait for work longer than this marks the traffic sparse: no poll before the next sleep.
constexpr auto DENSE_GAP = std::chrono::milliseconds(1);
// After a poll that found nothing, the next 1, 2, 4 … 64 waits for work sleep at once: traffic
// that comes just slower than `spin` costs a poll now and then, not one per request.
constexpr int MAX_BACKOFF = 64;

}  // namespace

void run_event_loop(boost::asio::io_context& loop, std::chrono::microseconds spin,
                    const std::function<bool()>& busy, poll_counts* counts) {
    poll_counts unused;
    if (counts == nullptr) counts = &unused;
    if (spin <= std::chrono::microseconds::zero()) {
        loop.run();
        return;
    }
    bool dense = false;  // the last wait for work was short
    int skip = 0;        // waits for work that go straight to sleep before the next poll
    int backoff = 1;     // what skip becomes after a poll that found nothing
    while (!loop.stopped()) {
        if (dense && !busy()) {
            if (skip > 0) {
                --skip;
            } else {
                if (loop.poll() > 0) continue;  // what is ready first; then the loop is idle
                const clock::time_point until = clock::now() + spin;
                bool found = false;
                while (!found && clock::now() < until && !loop.stopped()) {
                    sched_yield();
                    found = loop.poll() > 0;
                }
                if (found) {
                    ++counts->found;
                    backoff = 1;
                    continue;
                }
                ++counts->empty;
                skip = backoff;
                backoff = std::min(backoff * 2, MAX_BACKOFF);
            }
        }
        // As io_context::run() would: one handler, sleeping first when none is ready (no
        // extra non-blocking epoll_wait when no poll is due).
        const clock::time_point waited = clock::now();
        if (loop.run_one() == 0) break;  // stopped, or out of work
        dense = clock::now() - waited < DENSE_GAP;
    }
}

}  // namespace actionloop
