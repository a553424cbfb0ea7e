// Pipelined activations: see pipeline.hpp.
#include "pipeline.hpp"

#include <spdlog/spdlog.h>

namespace actionloop {

executor::outcome pipeline::run(std::string_view body, clock::time_point deadline,
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

size_t pipeline::in_flight() {
    std::lock_guard<std::mutex> guard(mutex_);
    return in_flight_.size();
}

// Waits for room in the window, starts the process again if it is gone (only when nothing
// is in flight: then nobody is reading its pipes), and writes the request.
// Requests are written in arrival order (tickets): a big request waiting for the window to
// empty is not overtaken forever by small ones.
void pipeline::send(slot& self, lock_type& lock) {
    const size_t size = self.body.size() + 1;
    const uint64_t ticket = next_ticket_++;
    room_.wait(lock, [&] {
        return ticket == now_serving_ &&
               (in_flight_.empty() ||
                (!broken_ && in_flight_bytes_ + size <= window_ && in_flight_.size() < max_depth_));
    });
    struct next_turn {  // the next ticket's turn, however this one ends
        pipeline& p;
        ~next_turn() {
            ++p.now_serving_;
            p.room_.notify_all();
        }
    } turn{*this};
    if (in_flight_.empty() && (broken_ || action_.exited())) {
        broken_ = true;
        restart_();  // throws when it cannot start: the next one tries again
        broken_ = false;
    }
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
    } else if (self.attempts >= 3) {
        self.outcome = executor::outcome::exited;  // it dies on every start: give up
    } else {
        self.resend = true;  // it died before reading this request: send it again
    }
}

// Until this activation is answered: reads fd 3 when nobody else does, sleeps otherwise.
void pipeline::await(slot& self, lock_type& lock) {
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

void pipeline::read_until_done(slot& self, lock_type& lock) {
    while (!self.done) {
        const clock::time_point deadline = in_flight_.front()->deadline;  // the head's
        lock.unlock();
        const executor::outcome got = action_.read_answers(deadline, lines_);
        lock.lock();
        for (std::string& answer : lines_) {
            if (in_flight_.empty()) {
                spdlog::warn("discarded {} bytes of extra output on fd 3", answer.size());
                continue;
            }
            deliver(answer, self);
        }
        lines_.clear();
        if (got != executor::outcome::answered) fail_all(got, self);
    }
}

void pipeline::deliver(std::string& answer, slot& self) {
    slot* head = in_flight_.front();
    in_flight_.pop_front();
    in_flight_bytes_ -= head->body.size() + 1;
    head->line->swap(answer);
    head->outcome = executor::outcome::answered;
    head->done = true;
    if (head != &self) head->wake.notify_one();
    room_.notify_all();
}

// The head gets `why`; the requests behind it never started and are sent again.
void pipeline::fail_all(executor::outcome why, slot& self) {
    action_.stop();
    broken_ = true;
    bool head = true;
    for (slot* s : in_flight_) {
        if (head) {
            s->outcome = why;
            head = false;
        } else {
            s->resend = true;
        }
        s->done = true;
        if (s != &self) s->wake.notify_one();
    }
    in_flight_.clear();
    in_flight_bytes_ = 0;
    room_.notify_all();
}

}  // namespace actionloop
