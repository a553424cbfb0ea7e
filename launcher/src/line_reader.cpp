// line_reader: the launcher's buffered input (see line_reader.hpp).
#include "line_reader.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace actionloop {
namespace {
constexpr size_t INITIAL_CAPACITY = 1 << 16;
}

line_reader::line_reader(int fd)
    : fd_(fd), buf_(new char[INITIAL_CAPACITY]), capacity_(INITIAL_CAPACITY) {}

bool line_reader::has_line() const {
    return std::memchr(buf_.get() + begin_ + scanned_, '\n', end_ - begin_ - scanned_) != nullptr;
}

bool line_reader::next(std::string_view& line) {
    for (;;) {
        char* from = buf_.get() + begin_ + scanned_;
        const size_t left = end_ - begin_ - scanned_;
        const void* hit = std::memchr(from, '\n', left);
        if (hit != nullptr) {
            const char* nl = static_cast<const char*>(hit);
            line = std::string_view(buf_.get() + begin_,
                                    static_cast<size_t>(nl - (buf_.get() + begin_)));
            begin_ += line.size() + 1;
            scanned_ = 0;
            return true;
        }
        scanned_ += left;
        if (!fill()) {
            if (begin_ == end_) return false;
            line = std::string_view(buf_.get() + begin_, end_ - begin_);  // no final '\n'
            begin_ = end_;
            scanned_ = 0;
            return true;
        }
    }
}

bool line_reader::fill() {
    if (begin_ > 0) {  // the partial line moves to the front
        std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
    }
    if (end_ == capacity_) {  // a line longer than the buffer
        std::unique_ptr<char[]> bigger(new char[capacity_ * 2]);
        std::memcpy(bigger.get(), buf_.get(), end_);
        buf_ = std::move(bigger);
        capacity_ *= 2;
    }
    for (;;) {
        const ssize_t n = ::read(fd_, buf_.get() + end_, capacity_ - end_);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        end_ += static_cast<size_t>(n);
        return true;
    }
}

}  // namespace actionloop
