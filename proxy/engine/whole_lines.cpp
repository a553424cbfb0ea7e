// Whole lines for plain log mode with more than one worker: see whole_lines.hpp.
#include "engine/whole_lines.hpp"

#include <algorithm>
#include <utility>

namespace actionloop {

whole_lines::whole_lines(size_t max_line_bytes) : max_(std::max<size_t>(max_line_bytes, 1)) {}

// Line by line (one scan for each '\n'): the held part and what completes it go on together;
// a line that would pass the bound goes on in pieces of the bound's size.
void whole_lines::feed(std::string_view data, std::string& out) {
    while (!data.empty()) {
        const size_t newline = data.find('\n');
        const size_t length = newline == std::string_view::npos ? data.size() : newline;
        const size_t room = max_ - held_.size();
        if (length > room) {  // the bound is reached before this line ends: a piece of it
            out.append(held_).append(data.substr(0, room)).push_back('\n');
            forwarded_ += max_;
            held_.clear();
            data.remove_prefix(room);
            continue;
        }
        if (newline == std::string_view::npos) {
            held_.append(data);
            return;
        }
        out.append(held_).append(data.substr(0, newline + 1));
        line_ended(held_.size() + newline);
        held_.clear();
        data.remove_prefix(newline + 1);
    }
}

void whole_lines::end_line(std::string& out) {
    if (held_.empty()) return;
    out.append(held_).push_back('\n');
    line_ended(held_.size());
    held_.clear();
}

whole_lines::broken whole_lines::take_broken() { return std::exchange(broken_, broken{}); }

// The open line has ended with `last_piece` bytes: counted when it was broken into pieces.
void whole_lines::line_ended(size_t last_piece) {
    if (forwarded_ == 0) return;
    ++broken_.lines;
    broken_.bytes += forwarded_ + last_piece;
    forwarded_ = 0;
}

}  // namespace actionloop
