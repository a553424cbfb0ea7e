// The activation engine: see engine.hpp.
#include "engine.hpp"

#include <limits>

#include <spdlog/spdlog.h>

namespace actionloop {
namespace {

constexpr size_t PIPELINE_DEPTH = 256;  // requests in flight at most, when pipelining

}  // namespace

activation_engine::activation_engine(executor& action, std::function<void()> restart,
                                     std::function<void(executor::outcome)> ended)
    : action_(action),
      restart_(std::move(restart)),
      ended_(std::move(ended)),
      pipelined_(action.pipelined()),
      window_(pipelined_ ? action.stdin_capacity() : std::numeric_limits<size_t>::max()),
      max_depth_(pipelined_ ? PIPELINE_DEPTH : 1),
      // A request written to a pipelining action that died before reading it is sent again
      // (twice at most); for a window of one, the write failing ends the activation.
      max_attempts_(pipelined_ ? 3 : 1) {}

executor::outcome activation_engine::run(std::string_view body, clock::time_point deadline,
                                         std::string& line) {
    slot self;
    self.body = body;
    self.deadline = deadline;
    self.line = &line;
    lock_type lock(mutex_);
    for (;;) {
        send(self, lock);
        await(self, lock);
        if (!self.resend) return self.outcome;
    }
}

void activation_engine::wake_next_sender() {
    if (!senders_.empty()) senders_.front()->wake.notify_one();
}

size_t activation_engine::waiting() {
    std::lock_guard<std::mutex> guard(mutex_);
    return senders_.size();
}

size_t activation_engine::in_flight() {
    std::lock_guard<std::mutex> guard(mutex_);
    return in_flight_.size();
}

// Waits for room in the window, starts the process again if it is gone (only when nothing
// is in flight: then nobody is reading its pipes), and writes the request.
// Requests are written in arrival order: a big request waiting for the window to empty is
// not overtaken forever by small ones.
void activation_engine::send(slot& self, lock_type& lock) {
    const size_t size = self.body.size() + 1;
    senders_.push_back(&self);
    self.wake.wait(lock, [&] {
        return senders_.front() == &self &&
               (in_flight_.empty() ||
                (!broken_ && in_flight_bytes_ + size <= window_ && in_flight_.size() < max_depth_));
    });
    struct next_turn {  // the next sender's turn, however this one ends
        activation_engine& engine;
        ~next_turn() {
            engine.senders_.pop_front();
            engine.wake_next_sender();
        }
    } turn{*this};
    if (in_flight_.empty() && (broken_ || action_.exited())) {
        broken_ = true;
        restart_();  // throws when it cannot start: the next one tries again
        broken_ = false;
    }
    // A window of one: what the last activation left on fd 3 is not this one's answer.
    if (!pipelined_) action_.discard_stale_output();
    self.done = false;
    self.resend = false;
    ++self.attempts;
    const write_result sent = action_.send(self.body, self.deadline);
    if (sent == write_result::written) {
        in_flight_.push_back(&self);
        in_flight_bytes_ += size;
        return;
    }
    // Not in flight. With requests in flight the reader finds the process dead (or the
    // next restart replaces it once they are answered); with none, nobody reads: stop it.
    broken_ = true;
    if (in_flight_.empty()) action_.stop();
    self.done = true;
    if (sent == write_result::late) {
        self.outcome = executor::outcome::deadline;
    } else if (self.attempts >= max_attempts_) {
        self.outcome = executor::outcome::exited;  // it dies on every start: give up
    } else {
        self.resend = true;  // it died before reading this request: send it again
        return;
    }
    ended_(self.outcome);
}

// Until this activation is answered: reads fd 3 when nobody else does, sleeps otherwise.
void activation_engine::await(slot& self, lock_type& lock) {
    while (!self.done) {
        if (reading_) {
            self.wake.wait(lock);
            continue;
        }
        reading_ = true;
        try {
            read_until_done(self, lock);
        } catch (...) {
            if (!lock.owns_lock()) lock.lock();
            fail_all(executor::outcome::exited, self);
            reading_ = false;
            throw;
        }
        reading_ = false;
        // The new head reads next (its answer is the next to come).
        if (!in_flight_.empty()) in_flight_.front()->wake.notify_one();
    }
}

void activation_engine::read_until_done(slot& self, lock_type& lock) {
    while (!self.done) {
        slot& head = *in_flight_.front();
        const clock::time_point deadline = head.deadline;
        const bool check_stale = !pipelined_ && head.fresh;
        lock.unlock();
        const executor::line_result got = action_.read_answers(deadline, lines_, check_stale);
        lock.lock();
        for (std::string& answer : lines_) {
            if (in_flight_.empty()) {
                spdlog::warn("discarded {} bytes of extra output on fd 3", answer.size());
                continue;
            }
            deliver(answer, self);
        }
        lines_.clear();
        if (got == executor::line_result::stale) {
            resend_after_stale(head, self);
        } else if (got != executor::line_result::answered) {
            fail_all(executor::outcome_of(got), self);
        }
    }
}

// fd 3 spoke while the head's request (a window of one) still sat unread in stdin: an
// earlier activation's output, not this answer. Where one ends and the other begins cannot
// be told from the bytes, so the request goes to a fresh process (it never ran).
void activation_engine::resend_after_stale(slot& head, slot& self) {
    head.fresh = false;
    try {
        action_.restart("the action was still writing to fd 3 after its answer when the next "
                        "request came (that request goes to the fresh process)");
    } catch (const start_error& e) {
        spdlog::warn("cannot start the action again: {}", e.what());
        fail_all(executor::outcome::exited, self);
        return;
    }
    const write_result sent = action_.send(head.body, head.deadline);
    if (sent != write_result::written) {
        action_.stop();
        finish_head(
            sent == write_result::late ? executor::outcome::deadline : executor::outcome::exited,
            self);
    }
}

void activation_engine::deliver(std::string& answer, slot& self) {
    slot* head = in_flight_.front();
    head->line->swap(answer);
    finish_head(executor::outcome::answered, self);
}

// The head leaves the window with `why`.
void activation_engine::finish_head(executor::outcome why, slot& self) {
    slot* head = in_flight_.front();
    in_flight_.pop_front();
    in_flight_bytes_ -= head->body.size() + 1;
    if (why != executor::outcome::answered) broken_ = true;
    head->outcome = why;
    head->done = true;
    ended_(why);
    if (head != &self) head->wake.notify_one();
    wake_next_sender();
}

// The head gets `why`; the requests behind it never started and are sent again.
void activation_engine::fail_all(executor::outcome why, slot& self) {
    action_.stop();
    broken_ = true;
    bool head = true;
    for (slot* s : in_flight_) {
        if (head) {
            s->outcome = why;
            ended_(why);
            head = false;
        } else {
            s->resend = true;
        }
        s->done = true;
        if (s != &self) s->wake.notify_one();
    }
    in_flight_.clear();
    in_flight_bytes_ = 0;
    wake_next_sender();
}

}  // namespace actionloop
