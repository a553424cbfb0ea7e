// engine/: the action process and the activations sent to it. This header is the folder's
// public face; the parts behind it are
//   executor.hpp  one long-lived action process and its pipes (start, ack, restart, read, write)
//   process.hpp   posix_spawn with an exact fd layout, process group, pidfd; reaper.hpp: orphans
//   framing.hpp   the pure line handling (request framing, answer checks, the deadline field)
// and run_handler.cpp, the /run step built on the engine below.
//
// The activation engine, one for every action: each /run writes its request line to the
// action's stdin in arrival order, and one waiting /run at a time (the reader) reads the
// answers from fd 3, in order, and hands each to its /run. An action that offers pipelining
// in its ack ({"ok":true,"pipeline":true}: our C++ launcher) gets a window of many requests
// in flight, bounded by the bytes its stdin pipe holds (a bigger request goes alone); any
// other action (a #! script, upstream's launchers) a window of one: its request is written
// once the one before it is answered.
//
// Failures: the activation at the head (the one the action was serving) gets the error —
// crash, deadline, answer cap — and the process is stopped; the requests behind it never
// started, so they are sent again to the restarted process. For a window of one, output
// left on fd 3 before a request is written is discarded, and output that shows up while the
// request still sits unread in stdin (an earlier activation's, still being written) makes
// the engine start the action again and send the request to the fresh process.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "executor.hpp"

namespace actionloop {

class activation_engine {
public:
    using clock = executor::clock;

    /// `restart` starts the process again when it is gone and nothing is in flight; it may
    /// throw (that /run gets the error, the next one tries again). `ended` is called with an
    /// activation's outcome once it has one, before the next request is written (for a
    /// window of one), so what it writes to the logs lands in that activation's segment.
    activation_engine(executor& action, std::function<void()> restart,
                      std::function<void(executor::outcome)> ended);

    /// Serves one activation: its outcome, and in `line` the answer when `answered`.
    executor::outcome run(std::string_view body, clock::time_point deadline, std::string& line);

    /// True when the action offered pipelining at its start (it writes its own sentinels).
    bool pipelined() const { return pipelined_; }

    /// Requests written and not yet answered (for tests and diagnostics).
    size_t in_flight();
    /// Activations waiting for their turn to write (for metrics).
    size_t waiting();

private:
    struct slot {
        std::string_view body;
        clock::time_point deadline;
        std::string* line;
        executor::outcome outcome = executor::outcome::answered;
        bool done = false;
        bool resend = false;  // never started: the process it was sent to is gone
        bool fresh = true;    // no stale-output restart yet (window of one)
        int attempts = 0;
        std::condition_variable wake;  // its turn to write, its answer, its turn to read
    };
    using lock_type = std::unique_lock<std::mutex>;

    void send(slot& self, lock_type& lock);
    void await(slot& self, lock_type& lock);
    void read_until_done(slot& self, lock_type& lock);
    void resend_after_stale(slot& head, slot& self);
    void deliver(std::string& answer, slot& self);
    void finish_head(executor::outcome why, slot& self);
    void fail_all(executor::outcome why, slot& self);

    executor& action_;
    std::function<void()> restart_;
    std::function<void(executor::outcome)> ended_;
    const bool pipelined_;
    const size_t window_;     // the most unanswered request bytes written
    const size_t max_depth_;  // the most unanswered requests written
    const int max_attempts_;  // writes of one request to processes that die before reading it

    void wake_next_sender();

    std::mutex mutex_;
    // Senders in arrival order; only the first may write, and only it is woken when the
    // window, the process or its turn changes (with 64 /run threads waiting, waking them all
    // per activation would spend the CPU the action needs).
    std::deque<slot*> senders_;
    std::deque<slot*> in_flight_;  // written to the current process, in order
    size_t in_flight_bytes_ = 0;
    bool reading_ = false;            // a /run thread is reading fd 3
    bool broken_ = false;             // the process was stopped or found dead
    std::vector<std::string> lines_;  // the reader's (one reader at a time)
};

}  // namespace actionloop
