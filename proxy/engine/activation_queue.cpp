// The activation engine's scheduling: see activation_queue.hpp.
#include "engine/activation_queue.hpp"

#include <algorithm>

namespace actionloop {
namespace {

const char NEWLINE = '\n';

}  // namespace

bool activation_queue::next_fits(bool more_allowed) const {
    if (waiting_.empty()) return false;
    if (in_flight_.empty()) return true;
    return more_allowed && in_flight_bytes_ + waiting_.front()->size() <= limits_.window_bytes &&
           in_flight_.size() < limits_.max_depth;
}

activation& activation_queue::admit_next() {
    activation_ptr next = std::move(waiting_.front());
    waiting_.pop_front();
    next->written = 0;
    ++next->attempts;
    in_flight_bytes_ += next->size();
    in_flight_.push_back(std::move(next));
    return *in_flight_.back();
}

size_t activation_queue::unwritten(iovec* pieces, size_t max) const {
    size_t count = 0;
    for (size_t i = unwritten_from_; i < in_flight_.size() && count + 2 <= max; ++i) {
        const activation& a = *in_flight_[i];
        if (a.written < a.line.size()) {
            pieces[count++] = {const_cast<char*>(a.line.data()) + a.written,
                               a.line.size() - a.written};
        }
        pieces[count++] = {const_cast<char*>(&NEWLINE), 1};
    }
    return count;
}

void activation_queue::wrote(size_t n) {
    while (n > 0 && unwritten_from_ < in_flight_.size()) {
        activation& a = *in_flight_[unwritten_from_];
        const size_t step = std::min(n, a.size() - a.written);
        a.written += step;
        n -= step;
        if (a.written == a.size()) ++unwritten_from_;
    }
}

std::vector<activation_ptr> activation_queue::take_unsent() {
    std::vector<activation_ptr> unsent;  // newest first
    while (in_flight_.size() > unwritten_from_) {
        in_flight_bytes_ -= in_flight_.back()->size();
        unsent.push_back(std::move(in_flight_.back()));
        in_flight_.pop_back();
    }
    std::vector<activation_ptr> given_up;  // newest first, reversed below
    for (auto& a : unsent) {  // pushed to the front newest first: they keep their order
        if (a->attempts >= limits_.max_attempts) {
            given_up.push_back(std::move(a));
        } else {
            a->written = 0;
            waiting_.push_front(std::move(a));
        }
    }
    std::reverse(given_up.begin(), given_up.end());
    return given_up;
}

activation_ptr activation_queue::pop_head() {
    activation_ptr head = std::move(in_flight_.front());
    in_flight_.pop_front();
    if (unwritten_from_ > 0) --unwritten_from_;
    in_flight_bytes_ -= head->size();
    return head;
}

activation_ptr activation_queue::pop_head_requeue_rest() {
    activation_ptr head = std::move(in_flight_.front());
    in_flight_.pop_front();
    while (!in_flight_.empty()) {
        in_flight_.back()->written = 0;
        waiting_.push_front(std::move(in_flight_.back()));
        in_flight_.pop_back();
    }
    in_flight_bytes_ = 0;
    unwritten_from_ = 0;
    return head;
}

void activation_queue::requeue_unread_head() {
    activation_ptr head = pop_head_requeue_rest();
    head->fresh = false;
    head->written = 0;
    --head->attempts;  // not a failed write: it was never read
    waiting_.push_front(std::move(head));
}

activation_ptr activation_queue::pop_waiting() {
    activation_ptr first = std::move(waiting_.front());
    waiting_.pop_front();
    return first;
}

activation::clock::time_point activation_queue::oldest_submitted() const {
    auto oldest = activation::clock::time_point::max();
    // Both queues are in arrival order (a request sent again goes back to the front).
    if (!in_flight_.empty()) oldest = in_flight_.front()->submitted;
    if (!waiting_.empty()) oldest = std::min(oldest, waiting_.front()->submitted);
    return oldest;
}

}  // namespace actionloop
