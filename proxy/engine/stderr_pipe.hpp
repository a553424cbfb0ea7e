// The action's stderr: a pipe the proxy reads and forwards, byte for byte, to its own stderr
// (issue 19, item 6). The proxy keeps the last lines of it, so an action that fails to start
// can be told why in the /init answer, and it knows whether the last line forwarded ended,
// so its own sentinels start a line of their own.
//
// A thread forwards what comes (the action never blocks on a full pipe, during its start
// or later); drain() forwards what the pipe holds now, at once, on the caller's thread: the
// proxy calls it before it writes sentinels or its own lines about an activation, so the
// activation's stderr lines come first. One pipe serves every process the executor starts.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

#include "engine/process.hpp"

namespace actionloop {

class stderr_pipe {
public:
    stderr_pipe();  // throws std::system_error when no pipe or eventfd is left
    ~stderr_pipe();
    stderr_pipe(const stderr_pipe&) = delete;
    stderr_pipe& operator=(const stderr_pipe&) = delete;

    /// The end the action gets as its fd 2.
    int write_fd() const { return write_end_.get(); }
    /// Forwards what the pipe holds now; true when the last byte forwarded ended its line.
    bool drain();
    /// drain(), then a '\n' when the last line forwarded is unterminated.
    void end_line();
    /// Forgets the tail kept so far (a new start begins).
    void mark();
    /// drain(), then the last lines since mark(): at most `lines` lines and `bytes` bytes.
    std::string tail(size_t lines = 20, size_t bytes = 4096);

private:
    void forward_locked();
    void run();

    unique_fd read_end_;
    unique_fd write_end_;
    unique_fd wake_;  // eventfd: the destructor stops the thread
    std::mutex lock_;
    std::string tail_;        // the last bytes since mark() (bounded)
    bool line_open_ = false;  // the last byte forwarded was not '\n'
    std::thread thread_;
};

}  // namespace actionloop
