// Plain log mode with more than one worker (OW_WORKERS > 1), the pure part: an action's output
// is forwarded in whole lines only, so that what two workers write to the proxy's one stdout
// (or stderr) never meets inside a line. Each worker's pipe holds its open line (the bytes
// after its last '\n') until the '\n' comes or the proxy ends the line (end_line: the end of an
// activation, before its sentinels). A line longer than the bound (OW_LOG_LINE_BYTES) is not
// held whole: each piece of the bound's size is forwarded as it fills, ended with a '\n', and
// the line is counted (take_broken), so the proxy can say so. No I/O: output_pipe.cpp feeds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace actionloop {

class whole_lines {
public:
    /// `max_line_bytes`: the most held (at least 1).
    explicit whole_lines(size_t max_line_bytes);

    /// Appends to `out` every line that `data` completes (the held part first), each with its
    /// '\n', and each piece of a line past the bound; holds the rest.
    void feed(std::string_view data, std::string& out);
    /// Appends the held part, ended with '\n'; nothing when nothing is held.
    void end_line(std::string& out);
    /// True when part of a line is held.
    bool holding() const { return !held_.empty(); }
    size_t held_bytes() const { return held_.size(); }

    /// Lines that passed the bound and have ended since the last take: how many, their bytes.
    struct broken {
        std::uint64_t lines = 0;
        std::uint64_t bytes = 0;
    };
    broken take_broken();

private:
    void line_ended(size_t last_piece);

    const size_t max_;
    std::string held_;
    std::uint64_t forwarded_ = 0;  // bytes of the open line already forwarded in pieces
    broken broken_;
};

}  // namespace actionloop
