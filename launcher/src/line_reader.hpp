// line_reader: request lines from a raw fd, many lines per read(2), no copy of a line that
// fits in the buffer.
#pragma once

#include <memory>
#include <string_view>

namespace actionloop {

class line_reader {
public:
    explicit line_reader(int fd);

    /// The next line without its '\n' (the last one may lack it), valid until the next call.
    /// False at end of input.
    bool next(std::string_view& line);

    /// True when a whole next line is already buffered (next() will not read).
    bool has_line() const;

private:
    bool fill();  // reads more at the end; false at EOF or on an error

    int fd_;
    std::unique_ptr<char[]> buf_;
    size_t capacity_;
    size_t begin_ = 0;    // first unconsumed byte
    size_t end_ = 0;      // one past the last byte read
    size_t scanned_ = 0;  // bytes from begin_ known to hold no '\n'
};

}  // namespace actionloop
