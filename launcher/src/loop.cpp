// The activation loop: one request line in on stdin, one compact JSON line out on fd 3.
#include "loop.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "request_scan.hpp"

namespace actionloop {
namespace {

using nlohmann::json;

std::string dump(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string error_answer(const std::string& message) {
    return dump(json{{"error", message}});
}

std::string env_name(std::string_view key) {
    std::string name("__OW_");
    for (char c : key) {
        name.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
    return name;
}

// Every string field other than `value` becomes __OW_<FIELD> (upper-cased), as upstream.
void export_context(const json& request) {
    std::string name;
    for (auto it = request.begin(); it != request.end(); ++it) {
        if (it.key() == "value" || !it.value().is_string()) continue;
        name = env_name(it.key());
        setenv(name.c_str(), it.value().get_ref<const std::string&>().c_str(), 1);
    }
}

// The text of a JSON string given with its quotes; escapes go through nlohmann (rare).
std::string unquote(std::string_view quoted) {
    if (quoted.find('\\') == std::string_view::npos) {
        return std::string(quoted.substr(1, quoted.size() - 2));
    }
    return json::parse(quoted).get<std::string>();
}

// The raw path's counterpart of export_context: one member, both as raw JSON text.
void export_raw_member(const std::string& key, std::string_view raw) {
    if (raw.size() < 2 || raw.front() != '"') return;
    setenv(env_name(key).c_str(), unquote(raw).c_str(), 1);
}

bool is_container(std::string_view raw) {
    return !raw.empty() && (raw.front() == '{' || raw.front() == '[');
}

// Exports the context and finds `value` (the last one wins, as with the DOM). False when the
// line is not an object.
bool scan_request(std::string_view line, std::string_view& value) {
    value = "{}";
    return scan::for_each_member(line, [&value](std::string_view quoted, std::string_view raw) {
        const std::string key = unquote(quoted);
        if (key == "value") {
            value = is_container(raw) ? raw : std::string_view("{}");
        } else {
            export_raw_member(key, raw);
        }
    });
}

// JSON whitespace only: a newline inside a JSON string is always escaped.
void replace_newlines(std::string& answer) {
    std::replace(answer.begin(), answer.end(), '\n', ' ');
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

void handle_raw_request(std::string_view line, const raw_entry_point& entry,
                        std::string& answer) {
    answer.clear();
    std::string_view value;
    try {
        if (!scan_request(line, value)) {
            if (!json::accept(line)) throw std::invalid_argument("not a JSON object");
            value = "{}";  // valid JSON but no object: like the json path, no context, {}
        }
    } catch (const std::exception& e) {
        std::cerr << "actionloop: invalid request line: " << e.what() << std::endl;
        answer = error_answer(std::string("invalid request: ") + e.what());
        return;
    }
    try {
        entry(value, answer);
        if (answer.empty()) throw std::runtime_error("the action gave an empty answer");
        replace_newlines(answer);
    } catch (const std::exception& e) {
        std::cerr << "action error: " << e.what() << std::endl;
        answer = error_answer(e.what());
    } catch (...) {
        std::cerr << "action error: unknown exception" << std::endl;
        answer = error_answer("unknown exception");
    }
}

namespace {

// Serves request lines with handle(line, answer) until EOF.
template <class Handle>
int serve(const Handle& handle, int in_fd, int out_fd) {
    // The ack; when the proxy offers pipelining (ours does, see proxy/pipeline.hpp) it is
    // accepted in the ack, and the sentinels after each activation are then written here,
    // where they are in order with the action's own output whatever the proxy has queued.
    const char* ack = std::getenv("__OW_WAIT_FOR_ACK");
    const bool acked = ack != nullptr && *ack != '\0';
    const char* offer = std::getenv("ACTIONLOOP_PIPELINE");
    const bool pipelined = acked && offer != nullptr && std::string_view(offer) == "1";
    const std::string_view ack_line =
        pipelined ? "{\"ok\":true,\"pipeline\":true}\n" : "{\"ok\":true}\n";
    if (acked && !write_all(out_fd, ack_line.data(), ack_line.size())) return 1;
    constexpr std::string_view sentinel = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX\n";

    line_reader input(in_fd);
    std::string line;
    std::string answer;
    while (input.next(line)) {
        handle(line, answer);
        answer.push_back('\n');
        // Logs first, so they come before the end-of-activation sentinels.
        std::cout.flush();
        std::cerr.flush();
        std::fflush(stdout);
        std::fflush(stderr);
        if (pipelined) {
            write_all(1, sentinel.data(), sentinel.size());
            write_all(2, sentinel.data(), sentinel.size());
        }
        if (!write_all(out_fd, answer.data(), answer.size())) return 1;
    }
    return 0;
}

}  // namespace

int run_loop(const entry_point& entry, int in_fd, int out_fd) {
    return serve([&entry](const std::string& line,
                          std::string& answer) { answer = handle_request(line, entry); },
                 in_fd, out_fd);
}

int run_raw_loop(const raw_entry_point& entry, int in_fd, int out_fd) {
    return serve([&entry](const std::string& line,
                          std::string& answer) { handle_raw_request(line, entry, answer); },
                 in_fd, out_fd);
}

}  // namespace actionloop
