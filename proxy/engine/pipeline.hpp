// Pipelined activations, for an action that offers it in its ack (our C++ launcher does):
// each /run writes its request line as soon as it arrives, without waiting for the answers
// before it, and one waiting /run at a time (the reader) reads the answers from fd 3, in
// order, and hands each to its /run.
//
// The action still serves one activation at a time, in arrival order, and writes its own
// end-of-activation sentinels. What goes away under concurrency is the hand-over of the
// process from one /run thread to the next (a thread wake per activation) and the action's
// sleep between two requests: with 64 connections a /run thread is woken once, with its
// answer, instead of three times.
//
// Failures keep the classic semantics: the activation at the head (the one the action was
// serving) gets the error — crash, deadline, answer cap — and the process is stopped; the
// requests behind it never started, so they are sent again to the restarted process.
// Unanswered bytes in flight never exceed the stdin pipe's capacity, so a write never
// blocks while others wait; a bigger request goes alone.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "executor.hpp"

namespace actionloop {

class pipeline {
public:
    using clock = executor::clock;

    /// `restart` starts the process again when it is gone and nothing is in flight; it may
    /// throw (that /run gets the error, the next one tries again). `window_bytes`: the most
    /// unanswered request bytes written (at most the stdin pipe's capacity).
    pipeline(executor& action, std::function<void()> restart, size_t window_bytes,
             size_t max_depth = 256)
        : action_(action),
          restart_(std::move(restart)),
          window_(window_bytes),
          max_depth_(max_depth) {}

    /// Serves one activation: its outcome, and in `line` the answer when `answered`.
    executor::outcome run(std::string_view body, clock::time_point deadline, std::string& line);

    /// Requests written and not yet answered (for tests and diagnostics).
    size_t in_flight();

private:
    struct slot {
        std::string_view body;
        clock::time_point deadline;
        std::string* line;
        executor::outcome outcome = executor::outcome::answered;
        bool done = false;
        bool resend = false;  // never started: the process it was sent to is gone
        int attempts = 0;
        std::condition_variable wake;
    };
    using lock_type = std::unique_lock<std::mutex>;

    void send(slot& self, lock_type& lock);
    void await(slot& self, lock_type& lock);
    void read_until_done(slot& self, lock_type& lock);
    void deliver(std::string& answer, slot& self);
    void fail_all(executor::outcome why, slot& self);

    executor& action_;
    std::function<void()> restart_;
    const size_t window_;
    const size_t max_depth_;

    std::mutex mutex_;
    std::condition_variable room_;  // senders waiting for their turn, the window, a restart
    uint64_t next_ticket_ = 0;      // senders write in arrival order
    uint64_t now_serving_ = 0;
    std::deque<slot*> in_flight_;  // written to the current process, in order
    size_t in_flight_bytes_ = 0;
    bool reading_ = false;            // a /run thread is reading fd 3
    bool broken_ = false;             // the process was stopped or found dead
    std::vector<std::string> lines_;  // the reader's (one reader at a time)
};

}  // namespace actionloop
