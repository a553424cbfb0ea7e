// engine/: the action process and the activations sent to it. This header is the folder's
// public face; the parts behind it are
//   activation_queue.hpp  the scheduling, pure: admission, the window, order, re-sends
//   executor.hpp  one long-lived action process and its pipes (start, ack, restart)
//   process.hpp   posix_spawn with an exact fd layout, process group, pidfd; reaper.hpp: orphans
//   framing.hpp   the pure line handling (request framing, answer checks, the deadline field)
// host/action_host.hpp owns the engines of the current action, one per worker (OW_WORKERS);
// worker_choice.hpp is the rule it dispatches by.
//
// The activation engine, one for every action, driven by the HTTP server's event loop (one
// Boost.Asio io_context thread): each /run's request line is written to the action's stdin in
// arrival order, the answers are read from fd 3 in order and each is handed to its /run. The
// action's stdin, fd 3 and pidfd are Asio descriptors on that loop, so the accept, parse,
// write-to-stdin, read-fd-3, respond path of an activation never leaves the loop's thread;
// only a restart (spawn and the ack wait) runs on the worker pool.
//
// An action that offers pipelining in its ack ({"ok":true,"pipeline":true}: our C++ launcher)
// gets a window of many requests in flight, bounded by the bytes its stdin pipe holds (a
// bigger request goes alone); the requests admitted together go out in one writev. Any other
// action (a #! script, upstream's launchers) gets a window of one: its request is written once
// the one before it is answered.
//
// Failures: the activation at the head (the one the action was serving) gets the error —
// crash, deadline, answer cap — and the process is stopped; the requests behind it never
// started, so they are sent again to the restarted process. For a window of one, output
// left on fd 3 before a request is written is discarded (drained until fd 3 is quiet for
// 10 ms), and output that shows up while the request still sits unread in stdin (an earlier
// activation's, still being written) makes the engine start the action again and send the
// request to the fresh process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "engine/activation_queue.hpp"
#include "engine/batch_scheduling.hpp"
#include "engine/executor.hpp"

namespace actionloop {

/// How one activation ended.
struct activation_result {
    executor::outcome outcome = executor::outcome::answered;
    std::string line;           // the answer line ('\n' included) when answered
    std::string start_failure;  // not empty: the action could not be started again (why)
    std::string crash;          // exited: "killed by signal 11, SIGSEGV" when a signal did it
    bool no_action = false;     // no action was ever started: nothing ran
    // exited or deadline, when the engine keeps tails (keep_stderr_tails): the process's last
    // lines on stderr (a crash's backtrace, for Lambda's stackTrace).
    std::string stderr_tail;
};

class activation_engine : public std::enable_shared_from_this<activation_engine> {
public:
    using clock = executor::clock;
    using completion = std::function<void(activation_result)>;

    /// What the engine tells its owner, on the loop.
    struct hooks {
        /// An activation ended with this outcome (not called when the action could not be
        /// started for it). Called before the next request of a window of one is written, so
        /// what it writes to the logs (the sentinels) lands in that activation's segment.
        std::function<void(const activation_engine&, executor::outcome)> ended;
        /// The process was started again after it died (counted for /metrics).
        std::function<void()> restarted;
    };

    /// `action` is started (its ack read). The engine owns it; call start() on the loop next.
    /// `adaptive_batch`: the loop's thread and the action run under SCHED_BATCH while
    /// activations overlap (batch_scheduling.hpp).
    activation_engine(boost::asio::io_context& loop, boost::asio::thread_pool& blocking,
                      std::unique_ptr<executor> action, hooks events, bool adaptive_batch = false);
    ~activation_engine();
    activation_engine(const activation_engine&) = delete;
    activation_engine& operator=(const activation_engine&) = delete;

    /// Puts the process's pipes on the loop. On the loop thread, once.
    void start();
    /// Queues one activation; `done` is called on the loop with its result. `body` is the
    /// request as received: its newlines are removed here. On the loop thread.
    /// `proxy_deadline_ms` (epoch ms; 0: no bound; -1: nothing to tell): the deadline the
    /// proxy applies, told to a pipelining action (the C++ launcher, whose ctx.time_left()
    /// reads it) as the member `proxy_deadline`, after any the request has; other actions get
    /// the body as sent.
    void submit(std::string body, clock::time_point deadline, completion done,
                long long proxy_deadline_ms = -1);
    /// No more submits (a re-init replaced this action): the process is stopped once every
    /// activation already submitted has its result.
    void retire();

    /// One worker of a pool (host/action_host.hpp): `name` ("worker 2") starts what the engine
    /// says about its process (a crash, a restart); empty (the default, one worker): nothing.
    void name_worker(std::string name) { name_ = std::move(name); }
    /// A crash or a missed deadline hands over the process's last stderr lines with the
    /// result (activation_result::stderr_tail): read on the blocking pool, so that result
    /// comes a little later, never holding the loop (Lambda mode's stackTrace).
    void keep_stderr_tails() { keep_tails_ = true; }
    /// "worker 2: `text`" for a named worker; `text` as it is otherwise.
    std::string named(std::string text) const;
    /// Times the process was started again after it died (a worker's restarts).
    std::uint64_t restarts() const { return restarts_; }

    /// True when the action offered pipelining at its start (it writes its own sentinels).
    bool pipelined() const { return pipelined_; }
    /// On the loop, once the drain on SIGTERM has no activation left: sends the shutdown line
    /// to an action that offered it and is idle (executor::send_shutdown). Returns a pidfd to
    /// wait on (the caller closes it), or -1 when nothing was sent.
    int request_shutdown(std::chrono::milliseconds time_left);
    /// "exit status N" / "killed by signal N (SIGSEGV)" of the last process.
    std::string describe_exit() const { return action_->describe_exit(); }
    /// From hooks.ended: forwards the action's output so far and ends its open lines
    /// (executor.hpp); in JSON log mode the activation that ended is done with its lines.
    void end_activation_logs() const;
    /// Forwards the action's output so far and ends its open lines (any thread: after the
    /// process exited on the shutdown line).
    void end_output_lines() const { action_->end_output_lines(); }
    /// Activations waiting for their turn to be written (for metrics).
    size_t waiting() const { return queue_.waiting(); }
    /// Activations written to the process and not answered yet.
    size_t in_flight() const { return queue_.in_flight(); }
    /// The current process's pid (0 while none runs).
    pid_t pid() const { return action_->pid(); }
    /// When the oldest activation not answered yet was submitted (written or waiting, or
    /// waiting for a restart); time_point::max() when there is none. For /health.
    clock::time_point oldest_submitted() const { return queue_.oldest_submitted(); }

private:
    enum class phase {
        ready,       // the pipes are on the loop
        discarding,  // a window of one: draining stale fd-3 output before the next write
        restarting,  // a worker is starting the process again: the pipes are off the loop
        stopped,     // retired and idle: the process is gone for good
    };

    void attach();
    void detach();
    void flush();
    void write_pending();
    void write_failed();
    void arm_read();
    void read_output();
    void on_read(std::uint64_t token, const boost::system::error_code& ec, size_t n);
    void take_answers();
    void read_available();
    size_t drain_output();
    void forget_requeued_logs();
    void on_exit(std::uint64_t generation, const boost::system::error_code& ec);
    void arm_deadline();
    bool begin_discard();
    void arm_quiet_timer();
    void end_discard();
    void begin_restart(std::string why, bool stale);
    void restart_done(bool started, const std::string& error, bool stale);
    void finish_head(executor::outcome why, std::string line);
    void fail_all(executor::outcome why);
    void complete(activation_ptr done, activation_result result, bool ended);
    void stop_if_retired();
    void switch_policy(batch_switch::change change);

    boost::asio::io_context& loop_;
    boost::asio::thread_pool& blocking_;
    std::unique_ptr<executor> action_;
    hooks hooks_;
    std::string name_;            // name_worker()
    std::uint64_t restarts_ = 0;  // restarts()
    bool keep_tails_ = false;     // keep_stderr_tails()
    const bool pipelined_;
    const bool shutdown_offered_;
    activation_queue queue_;  // the activations, waiting and in the window
    bool adaptive_batch_;     // switch_policy() on batch_'s changes
    batch_switch batch_;

    // Bound to the loop's own executor type (not the type-erased default, which costs a copy
    // and a destruction of the executor per operation).
    using descriptor =
        boost::asio::posix::basic_stream_descriptor<boost::asio::io_context::executor_type>;
    using timer =
        boost::asio::basic_waitable_timer<std::chrono::steady_clock,
                                          boost::asio::wait_traits<std::chrono::steady_clock>,
                                          boost::asio::io_context::executor_type>;

    // Views of the executor's descriptors (released, never closed, by detach()).
    descriptor stdin_;
    descriptor output_;
    descriptor exit_;
    timer deadline_timer_;
    timer quiet_timer_;

    phase phase_ = phase::restarting;  // until start()
    bool broken_ = false;              // the process was stopped or found dead
    bool retired_ = false;
    bool reading_ = false;        // an async read of fd 3 is pending
    bool write_waiting_ = false;  // waiting for room in stdin
    bool output_eof_ = false;
    bool flush_posted_ = false;     // a flush is queued on the loop
    std::uint64_t generation_ = 0;  // one per attached process: older handlers do nothing
    std::uint64_t read_token_ = 0;  // one per read: a cancelled read's handler does nothing
    const activation* deadline_of_ = nullptr;  // whose deadline the timer is set for
    std::uint64_t deadline_token_ = 0;
    std::uint64_t quiet_token_ = 0;

    // Draining stale output (a window of one).
    size_t discarded_ = 0;
    bool drained_ = false;  // the drain before the next write is done
    clock::time_point discard_until_;

    // fd 3's bytes: read here, cut into answers here (the executor reads only the ack).
    line_buffer answers_;
    std::vector<char> read_buffer_;
    std::string line_;  // the answer being handed out (reused)

    // JSON log mode (null: plain): each written activation's entry, by id.
    std::shared_ptr<log_attribution> log_tags_;
    std::uint64_t last_log_id_ = 0;
    std::uint64_t ending_log_id_ = 0;  // the activation hooks.ended is called for
};

}  // namespace actionloop
