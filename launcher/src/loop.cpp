// The activation loop: one request line in on stdin, one compact JSON line out on fd 3.
#include "loop.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace actionloop {
namespace {

using nlohmann::json;

std::string dump(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string error_answer(const std::string& message) {
    return dump(json{{"error", message}});
}

// Every string field other than `value` becomes __OW_<FIELD> (upper-cased), as upstream.
void export_context(const json& request) {
    std::string name;
    for (auto it = request.begin(); it != request.end(); ++it) {
        if (it.key() == "value" || !it.value().is_string()) continue;
        name.assign("__OW_");
        for (char c : it.key()) name.push_back(static_cast<char>(std::toupper(
                                    static_cast<unsigned char>(c))));
        setenv(name.c_str(), it.value().get_ref<const std::string&>().c_str(), 1);
    }
}

json take_args(json& request) {
    auto it = request.find("value");
    if (it == request.end() || !(it->is_object() || it->is_array())) return json::object();
    return std::move(*it);
}

bool write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

// Buffered line reader over a raw fd: no iostream, no per-line syscall for small lines.
class line_reader {
public:
    explicit line_reader(int fd) : fd_(fd) {}

    bool next(std::string& line) {
        line.clear();
        for (;;) {
            if (pos_ < buf_.size()) {
                size_t nl = buf_.find('\n', pos_);
                size_t end = nl == std::string::npos ? buf_.size() : nl;
                line.append(buf_, pos_, end - pos_);
                pos_ = end;
                if (nl != std::string::npos) {
                    ++pos_;
                    return true;
                }
            }
            if (!fill()) return !line.empty();
        }
    }

private:
    bool fill() {
        buf_.resize(1 << 16);
        pos_ = 0;
        for (;;) {
            ssize_t n = ::read(fd_, buf_.data(), buf_.size());
            if (n < 0 && errno == EINTR) continue;
            buf_.resize(n > 0 ? static_cast<size_t>(n) : 0);
            return n > 0;
        }
    }

    int fd_;
    std::string buf_;
    size_t pos_ = 0;
};

}  // namespace

std::string handle_request(const std::string& line, const entry_point& entry) {
    json request;
    try {
        request = json::parse(line);
    } catch (const json::exception& e) {
        std::cerr << "actionloop: invalid request line: " << e.what() << std::endl;
        return error_answer(std::string("invalid request: ") + e.what());
    }
    if (request.is_object()) export_context(request);
    json args = request.is_object() ? take_args(request) : json::object();
    try {
        return dump(entry(std::move(args)));
    } catch (const std::exception& e) {
        std::cerr << "action error: " << e.what() << std::endl;
        return error_answer(e.what());
    } catch (...) {
        std::cerr << "action error: unknown exception" << std::endl;
        return error_answer("unknown exception");
    }
}

int run_loop(const entry_point& entry, int in_fd, int out_fd) {
    const char* ack = std::getenv("__OW_WAIT_FOR_ACK");
    if (ack != nullptr && *ack != '\0' && !write_all(out_fd, "{\"ok\":true}\n", 12)) return 1;

    line_reader input(in_fd);
    std::string line;
    while (input.next(line)) {
        std::string answer = handle_request(line, entry);
        answer.push_back('\n');
        // Logs first, so they come before the proxy's end-of-activation sentinels.
        std::cout.flush();
        std::fflush(stdout);
        std::fflush(stderr);
        if (!write_all(out_fd, answer.data(), answer.size())) return 1;
    }
    return 0;
}

}  // namespace actionloop
