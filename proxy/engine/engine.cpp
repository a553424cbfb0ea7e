// The activation engine: see engine.hpp. Everything here runs on the event loop's thread but
// the restart job, which runs on the worker pool while the pipes are off the loop.
#include "engine/engine.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "engine/framing.hpp"
#include "logging.hpp"

namespace actionloop {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr size_t PIPELINE_DEPTH = 256;  // requests in flight at most, when pipelining
constexpr size_t MAX_IOVECS = 512;      // pieces of one writev (2 per request)
constexpr size_t READ_BUFFER = 65536;
constexpr auto QUIET = 10ms;      // fd 3 is done with stale output after this much silence
constexpr auto MAX_DISCARD = 1s;  // ... or after this long in all

// The request as one line: a body without newlines goes as is (moved, not copied).
std::string request_line(std::string body) {
    if (body.find('\n') == std::string::npos) return body;
    std::string framed;
    frame_request(body, framed);
    framed.pop_back();  // the engine writes the '\n' itself
    return framed;
}

}  // namespace

activation_engine::activation_engine(asio::io_context& loop, asio::thread_pool& blocking,
                                     std::unique_ptr<executor> action, hooks events,
                                     bool adaptive_batch)
    : loop_(loop),
      blocking_(blocking),
      action_(std::move(action)),
      hooks_(std::move(events)),
      pipelined_(action_->pipelined()),
      shutdown_offered_(action_->shutdown_offered()),
      // A request written to a pipelining action that died before reading it is sent again
      // (twice at most); for a window of one, the write failing ends the activation.
      queue_({pipelined_ ? action_->stdin_capacity() : std::numeric_limits<size_t>::max(),
              pipelined_ ? PIPELINE_DEPTH : 1, pipelined_ ? 3 : 1}),
      // A window of one never has two in flight: nothing to switch.
      adaptive_batch_(adaptive_batch && pipelined_),
      stdin_(loop.get_executor()),
      output_(loop.get_executor()),
      exit_(loop.get_executor()),
      deadline_timer_(loop.get_executor()),
      quiet_timer_(loop.get_executor()),
      answers_(action_->max_answer_bytes()),
      read_buffer_(READ_BUFFER),
      log_tags_(action_->log_tags()) {}

activation_engine::~activation_engine() {
    detach();  // the descriptors are the executor's: released, not closed
}

void activation_engine::start() {
    // The loop's thread may be under SCHED_BATCH still, from an engine this one replaces.
    if (adaptive_batch_) set_batch_policy(0, false);
    attach();
    phase_ = phase::ready;
}

void activation_engine::submit(std::string body, clock::time_point deadline, completion done,
                               long long proxy_deadline_ms) {
    if (pipelined_ && proxy_deadline_ms >= 0) {
        append_string_member(body, "proxy_deadline", std::to_string(proxy_deadline_ms));
    }
    auto next = std::make_unique<activation>();
    next->line = request_line(std::move(body));
    // An action that takes the shutdown line never gets a request that looks like it (the
    // body is not JSON then anyway; a leading space keeps its text).
    if (shutdown_offered_ && !next->line.empty() &&
        next->line.front() == SHUTDOWN_LINE_PREFIX.front()) {
        next->line.insert(next->line.begin(), ' ');
    }
    next->deadline = deadline;
    next->submitted = clock::now();
    next->done = std::move(done);
    queue_.push(std::move(next));
    // Written once the loop has run the handlers ready now: the requests that arrived together
    // go out in one writev, and wake the action once (it reads them in one read).
    if (flush_posted_) return;
    flush_posted_ = true;
    asio::post(loop_, [self = shared_from_this()] {
        self->flush_posted_ = false;
        self->flush();
    });
}

int activation_engine::request_shutdown(std::chrono::milliseconds time_left) {
    if (!shutdown_offered_ || phase_ != phase::ready || broken_ || !queue_.idle()) return -1;
    return action_->send_shutdown(time_left);
}

void activation_engine::retire() {
    retired_ = true;
    stop_if_retired();
}

// Once a retired engine has nothing left, its process goes (a re-init replaced it).
void activation_engine::stop_if_retired() {
    if (!retired_ || !queue_.idle()) return;
    if (phase_ == phase::restarting || phase_ == phase::stopped) return;  // restart_done sees it
    detach();
    action_->stop();
    phase_ = phase::stopped;
}

// The process's pipes on the loop: fd 3 read while answers are due, stdin written when full
// (it is non-blocking), the pidfd watched for the process's exit for as long as it lives.
void activation_engine::attach() {
    ++generation_;
    output_eof_ = false;
    broken_ = false;
    answers_.clear();  // fd 3 of a new process
    stdin_.assign(action_->stdin_fd());
    output_.assign(action_->output_fd());
    // A process started again (by a worker thread) starts under the default policy.
    if (adaptive_batch_ && batch_.batch()) set_batch_policy(action_->pid(), true);
    if (action_->exit_fd() >= 0) {
        exit_.assign(action_->exit_fd());
        exit_.async_wait(
            asio::posix::descriptor_base::wait_read,
            [self = shared_from_this(), generation = generation_](
                const boost::system::error_code& ec) { self->on_exit(generation, ec); });
    }
}

// Off the loop (before a restart replaces the descriptors, or for good): pending handlers
// are cancelled and ignored (their generation is gone).
void activation_engine::detach() {
    ++generation_;
    ++read_token_;
    reading_ = false;
    write_waiting_ = false;
    deadline_of_ = nullptr;
    ++deadline_token_;
    ++quiet_token_;
    boost::system::error_code ignored;
    deadline_timer_.cancel();
    quiet_timer_.cancel();
    for (auto* watched : {&stdin_, &output_, &exit_}) {
        if (!watched->is_open()) continue;
        watched->cancel(ignored);
        watched->release();
    }
}

// Admits waiting requests into the window in arrival order (a big request waiting for the
// window to empty is not overtaken by small ones) and writes them; restarts the process
// first when it is gone and nothing is in flight (then nobody is reading its pipes).
void activation_engine::flush() {
    if (phase_ != phase::ready) return;
    while (queue_.next_fits(!broken_)) {
        if (queue_.in_flight() == 0) {
            // The pidfd watch sets broken_ when the process exits (without a pidfd: ask).
            if (broken_ || (!exit_.is_open() && action_->exited())) {
                action_->exited();  // collects its exit status, for the log line
                begin_restart(
                    named("the action process is gone (" + action_->describe_exit() + ")"), false);
                return;
            }
            // A window of one: what the last activation left on fd 3 is not this one's answer
            // (drained once per request: after a drain that gave up, the request goes out).
            if (!pipelined_ && !drained_ && begin_discard()) return;  // end_discard() flushes
            drained_ = false;
        }
        activation& admitted = queue_.admit_next();
        if (log_tags_) {
            admitted.log_id = ++last_log_id_;
            log_tags_->written(admitted.log_id, tags_of_request(admitted.line));
        }
    }
    write_pending();
    if (phase_ != phase::ready) return;
    arm_read();
    arm_deadline();
}

// Writes what is admitted and not yet written, in one writev where it fits; waits for room
// in stdin when it is full (a request bigger than the pipe, or a slow reader).
void activation_engine::write_pending() {
    while (!write_waiting_ && !queue_.all_written()) {
        iovec parts[MAX_IOVECS];
        const size_t count = queue_.unwritten(parts, MAX_IOVECS);
        const ssize_t n = ::writev(action_->stdin_fd(), parts, static_cast<int>(count));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
            write_waiting_ = true;
            stdin_.async_wait(asio::posix::descriptor_base::wait_write,
                              [self = shared_from_this(),
                               generation = generation_](const boost::system::error_code& ec) {
                                  if (ec || generation != self->generation_) return;
                                  self->write_waiting_ = false;
                                  self->write_pending();
                              });
            return;
        }
        if (n < 0) {  // EPIPE: the action closed its stdin or died
            write_failed();
            return;
        }
        queue_.wrote(static_cast<size_t>(n));
        if (adaptive_batch_) switch_policy(batch_.wrote(queue_.in_flight()));
    }
}

// The loop's thread (this one) and the action's main thread change policy together. Where
// the system refuses, the engine stops trying (one warning) and puts both back. An action
// that has just died is not a refusal: its restart (attach) takes the policy in force.
void activation_engine::switch_policy(batch_switch::change change) {
    if (change == batch_switch::change::none) return;
    const bool batch = change == batch_switch::change::to_batch;
    if (set_batch_policy(0, batch) && (set_batch_policy(action_->pid(), batch) || errno == ESRCH)) {
        return;
    }
    spdlog::warn("OW_SCHED_BATCH: cannot switch to {}: {}; switching stops here",
                 batch ? "SCHED_BATCH" : "SCHED_OTHER", std::strerror(errno));
    set_batch_policy(0, false);
    set_batch_policy(action_->pid(), false);
    adaptive_batch_ = false;
}

// The process stopped reading its stdin. The requests not fully written never reached it:
// each is sent again (a pipelining action, up to max_attempts_ writes) or ends as `exited`.
// Those fully written are still the reader's: it finds the process dead and fails the head.
void activation_engine::write_failed() {
    broken_ = true;
    std::vector<activation_ptr> given_up = queue_.take_unsent();
    forget_requeued_logs();
    const bool nobody_reads = queue_.in_flight() == 0;
    if (nobody_reads) {  // nobody reads its pipes: stop it (the next flush restarts it)
        detach();
        action_->stop();
    }
    for (auto& a : given_up) {
        complete(std::move(a), {executor::outcome::exited, {}, {}, {}, false, {}}, true);
    }
    if (nobody_reads) flush();
}

void activation_engine::arm_read() {
    if (reading_ || queue_.in_flight() == 0 || phase_ != phase::ready) return;
    read_output();
}

void activation_engine::read_output() {
    reading_ = true;
    output_.async_read_some(
        asio::buffer(read_buffer_),
        [self = shared_from_this(), token = ++read_token_](
            const boost::system::error_code& ec, size_t n) { self->on_read(token, ec, n); });
}

void activation_engine::on_read(std::uint64_t token, const boost::system::error_code& ec,
                                size_t n) {
    if (token != read_token_) return;  // cancelled: its process is gone
    reading_ = false;
    if (ec || n == 0) output_eof_ = true;  // EOF, or an error: fd 3 has ended either way
    if (phase_ == phase::discarding) {
        discarded_ += n;
        if (output_eof_ || clock::now() >= discard_until_) {
            end_discard();
        } else {
            arm_quiet_timer();
            read_output();
        }
        return;
    }
    // A window of one: fd 3 spoke while the head's request still sat unread in stdin: an
    // earlier activation's output, not this answer. Where one ends and the other begins
    // cannot be told from the bytes, so the request goes to a fresh process (it never ran).
    if (!pipelined_ && n > 0 && queue_.head() != nullptr && queue_.head()->fresh &&
        action_->unread_request_bytes() > 0) {
        queue_.requeue_unread_head();
        forget_requeued_logs();
        answers_.clear();
        begin_restart(
            named("the action was still writing to fd 3 after its answer when the next request "
                  "came (that request goes to the fresh process)"),
            true);
        return;
    }
    if (n > 0) answers_.append(read_buffer_.data(), n);
    take_answers();
}

// Hands out the complete lines buffered: to the head, in order. A pipelining action's lines
// are each an answer; any other action gets exactly one answer, what followed it dropped.
void activation_engine::take_answers() {
    line_buffer& answers = answers_;
    while (answers.has_line() && !answers.overflowed()) {
        if (queue_.in_flight() == 0) {
            answers.take_next_line(line_);
            spdlog::warn("discarded {} bytes of extra output on fd 3", line_.size());
            continue;
        }
        if (pipelined_) {
            answers.take_next_line(line_);
        } else {
            const size_t extra = answers.take_line(line_);
            if (extra > 0) {
                const activation_log_scope about(queue_.head()->line);
                spdlog::warn("discarded {} bytes of extra output on fd 3", extra);
            }
        }
        finish_head(executor::outcome::answered, std::move(line_));
        line_.clear();
        if (phase_ != phase::ready) return;
    }
    if (queue_.in_flight() == 0) {
        flush();
        return;
    }
    if (answers.overflowed()) {
        fail_all(executor::outcome::too_large);
    } else if (output_eof_) {
        fail_all(executor::outcome::exited);
    } else {
        flush();  // the window may have room now
        arm_read();
    }
}

// The process exited. What it wrote before is in the pipe: that wins over the exit. With
// nothing in flight, the next activation starts it again.
void activation_engine::on_exit(std::uint64_t generation, const boost::system::error_code& ec) {
    if (ec || generation != generation_) return;
    broken_ = true;
    if (phase_ != phase::ready || queue_.in_flight() == 0) {
        stop_if_retired();
        return;
    }
    ++read_token_;  // a pending read finds nothing more: ignore it
    reading_ = false;
    boost::system::error_code ignored;
    output_.cancel(ignored);
    read_available();
    output_eof_ = true;  // its writers are gone (children holding fd 3 die with it)
    take_answers();
}

// The timer follows the head's deadline (a token per setting: a completion already queued
// when the head changed does nothing).
void activation_engine::arm_deadline() {
    const activation* head = queue_.head();
    if (head == deadline_of_) return;
    deadline_of_ = head;
    const std::uint64_t token = ++deadline_token_;
    if (head == nullptr || head->deadline == clock::time_point::max()) {
        deadline_timer_.cancel();
        return;
    }
    deadline_timer_.expires_at(head->deadline);
    deadline_timer_.async_wait(
        [self = shared_from_this(), token](const boost::system::error_code& ec) {
            if (ec || token != self->deadline_token_) return;
            self->deadline_of_ = nullptr;
            self->fail_all(executor::outcome::deadline);
        });
}

// A window of one, before a request is written: drops what fd 3 holds. When there was
// something, the action may still be writing it (more than a pipe holds, or slowly): fd 3 is
// drained until it has been quiet for 10 ms (1 s at most) before the request goes out.
bool activation_engine::begin_discard() {
    discarded_ = answers_.buffered() + drain_output();
    answers_.clear();
    if (discarded_ == 0) return false;
    phase_ = phase::discarding;
    discard_until_ = clock::now() + MAX_DISCARD;
    arm_quiet_timer();
    read_output();
    return true;
}

void activation_engine::arm_quiet_timer() {
    quiet_timer_.expires_after(std::min<clock::duration>(QUIET, discard_until_ - clock::now()));
    quiet_timer_.async_wait(
        [self = shared_from_this(), token = ++quiet_token_](const boost::system::error_code& ec) {
            if (ec || token != self->quiet_token_) return;
            if (self->phase_ == phase::discarding) self->end_discard();
        });
}

void activation_engine::end_discard() {
    ++quiet_token_;
    quiet_timer_.cancel();
    if (reading_) {
        ++read_token_;
        reading_ = false;
        boost::system::error_code ignored;
        output_.cancel(ignored);
    }
    phase_ = phase::ready;
    spdlog::warn("discarded {} bytes of extra output on fd 3", discarded_);
    discarded_ = 0;
    answers_.clear();
    drained_ = true;
    flush();
}

// The one place a dead (or untrusted) process is started again: the pipes leave the loop, a
// worker starts the process (spawn, ack), the loop gets them back. A start that fails fails
// the first waiting activation with the reason; the next one tries again.
void activation_engine::begin_restart(std::string why, bool stale) {
    detach();
    phase_ = phase::restarting;
    asio::post(blocking_, [self = shared_from_this(), why = std::move(why), stale]() mutable {
        bool started = true;
        std::string error;
        try {
            self->action_->restart(why);
        } catch (const std::exception& e) {  // start_error, or no pipes/processes left
            started = false;
            error = e.what();
        }
        // The reference goes back with the result: the engine is only ever destroyed on the
        // loop (what it holds, the /runs' callbacks, belongs there).
        auto& loop = self->loop_;
        asio::post(loop, [self = std::move(self), started, error = std::move(error), stale] {
            self->restart_done(started, error, stale);
        });
    });
}

void activation_engine::restart_done(bool started, const std::string& error, bool stale) {
    phase_ = phase::ready;
    if (started) {
        attach();
        if (!stale) ++restarts_;
        if (!stale && hooks_.restarted) hooks_.restarted();
    } else {
        // Nothing of it is left running: its pipes stay off the loop until the next attempt.
        broken_ = true;
        spdlog::warn("{}", named("cannot start the action again: " + error));
        if (queue_.waiting() > 0) {
            activation_ptr first = queue_.pop_waiting();
            if (stale) {
                complete(std::move(first), {executor::outcome::exited, {}, {}, {}, false, {}},
                         true);
            } else {
                complete(std::move(first), {executor::outcome::exited, {}, error, {}, false, {}},
                         false);
            }
        }
    }
    if (queue_.waiting() == 0) {
        stop_if_retired();
        return;
    }
    flush();
}

// The head leaves the window with `why`.
void activation_engine::finish_head(executor::outcome why, std::string line) {
    activation_ptr head = queue_.pop_head();
    // An answer before the whole request was read: the rest of it would reach the next
    // activation as garbage, so the process is not used again.
    if (why != executor::outcome::answered || head->written < head->size()) broken_ = true;
    complete(std::move(head), {why, std::move(line), {}, {}, false, {}}, true);
    arm_deadline();
}

// The head gets `why`; the requests behind it never started and are sent again.
void activation_engine::fail_all(executor::outcome why) {
    detach();
    action_->stop();
    broken_ = true;  // the next flush starts it again
    activation_ptr head = queue_.pop_head_requeue_rest();
    forget_requeued_logs();
    complete(std::move(head), {why, {}, {}, {}, false, {}}, true);
    if (queue_.waiting() == 0) {
        stop_if_retired();
        return;
    }
    flush();
}

// Hands the result over; `ended`: the activation ran (its sentinels are due).
void activation_engine::complete(activation_ptr done, activation_result result, bool ended) {
    if (result.outcome == executor::outcome::exited && result.start_failure.empty()) {
        action_->exited();  // its status, when it is gone
        result.crash = action_->crash_signal();
        if (!result.crash.empty()) result.crash = named(std::move(result.crash));
    }
    // What the host and the /run say about it (a crash, a timeout, a bad answer) names it.
    const activation_log_scope about(done->line);
    const log_route_scope through = action_->route_logs();  // into this worker's streams
    if (ended && hooks_.ended) {
        ending_log_id_ = done->log_id;
        hooks_.ended(*this, result.outcome);
        ending_log_id_ = 0;
    }
    const bool failed = result.outcome == executor::outcome::exited ||
                        result.outcome == executor::outcome::deadline;
    if (keep_tails_ && failed && result.start_failure.empty()) {
        // The tail waits for the stderr pipe to be read: on the pool, the result back here.
        asio::post(blocking_, [self = shared_from_this(), done = std::move(done),
                               result = std::move(result)]() mutable {
            result.stderr_tail = self->action_->stderr_tail();
            auto& loop = self->loop_;
            asio::post(loop,
                       [self = std::move(self), done = std::move(done),
                        result = std::move(result)]() mutable { done->done(std::move(result)); });
        });
    } else {
        done->done(std::move(result));
    }
    if (queue_.idle()) stop_if_retired();
}

// Reads what fd 3 holds right now into answers_, until it would block, ends, or the first
// line passes the cap (the process has exited: its last words count).
void activation_engine::read_available() {
    for (;;) {
        const ssize_t n = ::read(action_->output_fd(), read_buffer_.data(), read_buffer_.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // EAGAIN, EOF or an error
        answers_.append(read_buffer_.data(), static_cast<size_t>(n));
        if (answers_.overflowed()) return;
    }
}

// Reads and drops what fd 3 holds right now; returns the byte count.
size_t activation_engine::drain_output() {
    size_t dropped = 0;
    for (;;) {
        const ssize_t n = ::read(action_->output_fd(), read_buffer_.data(), read_buffer_.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return dropped;
        dropped += static_cast<size_t>(n);
    }
}

std::string activation_engine::named(std::string text) const {
    if (name_.empty()) return text;
    return name_ + ": " + text;
}

void activation_engine::end_activation_logs() const {
    action_->end_output_lines();
    if (log_tags_ && ending_log_id_ != 0) log_tags_->end(ending_log_id_);
}

// JSON log mode: activations sent back to waiting never started; their entries go until they
// are written again.
void activation_engine::forget_requeued_logs() {
    if (!log_tags_) return;
    queue_.for_each_waiting([this](activation& a) {
        if (a.log_id == 0) return;
        log_tags_->forget(a.log_id);
        a.log_id = 0;
    });
}

}  // namespace actionloop
