// answer_writer: the launcher's output side — the ack, the end-of-activation sentinels and
// the answers on fd 3, with as few writes as the protocol allows.
//
// Pipelined (the proxy offered it and the ack accepted it), each activation ends with the
// sentinel on stdout, then on stderr, then its answer on fd 3, in that order: the sentinels
// follow the activation's logs and precede its answer. The answer itself may wait for the
// next activations' answers, so several go to fd 3 in one write, but only while all of these
// hold: the next request is already buffered (the proxy has sent it), the activations are
// fast (each under 100 µs) and the oldest waiting answer is younger than 500 µs, and the
// batch is under 64 KiB. So an answer waits at most about 500 µs plus one activation, and a
// slow action's answers are never held. Not pipelined, every answer is written at once (the
// proxy sends the next request only after it). Without sentinels (Lambda mode, which has no
// OpenWhisk log markers) the answers are written, and held, the same way.
#pragma once

#include <chrono>
#include <string>

namespace actionloop {

class answer_writer {
public:
    /// Answers on `fd`; the sentinels on `stdout_fd` and `stderr_fd` (the process's own,
    /// except in tests) when pipelined and `sentinels`.
    answer_writer(int fd, bool pipelined, int stdout_fd = 1, int stderr_fd = 2,
                  bool sentinels = true)
        : fd_(fd),
          stdout_fd_(stdout_fd),
          stderr_fd_(stderr_fd),
          pipelined_(pipelined),
          sentinels_(pipelined && sentinels) {}

    /// The ack line on fd 3 (accepting the pipelining offer when pipelined; offering the
    /// shutdown line when `shutdown`).
    bool ack(bool shutdown = false);
    /// The ack of a failed start: {"ok":false,"error":`error`}.
    bool ack_error(const std::string& error);
    /// An activation starts (its duration decides whether its answer may wait).
    void started() { started_ = clock::now(); }
    /// An activation's answer (without '\n'; one is appended): the sentinels when pipelined
    /// (and not turned off), then the answer now or with the next ones. False when fd 3 is
    /// gone.
    bool answer(std::string& answer, bool more_buffered);
    /// Writes the answers still waiting.
    bool flush();

private:
    using clock = std::chrono::steady_clock;

    int fd_;
    int stdout_fd_;
    int stderr_fd_;
    bool pipelined_;
    bool sentinels_;
    clock::time_point started_;
    clock::time_point oldest_waiting_;
    std::string waiting_;  // answers held back, each with its '\n'
};

}  // namespace actionloop
