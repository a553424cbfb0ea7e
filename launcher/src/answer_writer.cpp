// answer_writer: see answer_writer.hpp.
#include "answer_writer.hpp"

#include <unistd.h>

#include <cerrno>
#include <string_view>

#include <nlohmann/json.hpp>

namespace actionloop {
namespace {

constexpr std::string_view SENTINEL = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX\n";
constexpr auto FAST_ACTIVATION = std::chrono::microseconds(100);
constexpr auto MAX_WAIT = std::chrono::microseconds(500);
constexpr size_t MAX_BATCH_BYTES = size_t{64} * 1024;

bool write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

bool write_all(int fd, std::string_view text) { return write_all(fd, text.data(), text.size()); }

}  // namespace

bool answer_writer::ack(bool shutdown) {
    std::string line = "{\"ok\":true";
    if (pipelined_) line += ",\"pipeline\":true";
    if (shutdown) line += ",\"shutdown\":true";
    line += "}\n";
    return write_all(fd_, line);
}

bool answer_writer::ack_error(const std::string& error) {
    return write_all(fd_, nlohmann::json{{"ok", false}, {"error", error}}.dump(
                              -1, ' ', false, nlohmann::json::error_handler_t::replace) +
                              "\n");
}

bool answer_writer::answer(std::string& answer, bool more_buffered) {
    answer.push_back('\n');
    if (!pipelined_) return write_all(fd_, answer);
    if (sentinels_) {
        write_all(stdout_fd_, SENTINEL);
        write_all(stderr_fd_, SENTINEL);
    }
    const clock::time_point now = clock::now();
    if (waiting_.empty()) oldest_waiting_ = now;
    const bool hold = more_buffered && now - started_ < FAST_ACTIVATION &&
                      now - oldest_waiting_ < MAX_WAIT &&
                      waiting_.size() + answer.size() < MAX_BATCH_BYTES;
    if (hold) {
        waiting_.append(answer);
        return true;
    }
    if (waiting_.empty()) return write_all(fd_, answer);
    waiting_.append(answer);
    return flush();
}

bool answer_writer::flush() {
    const bool ok = write_all(fd_, waiting_);
    waiting_.clear();
    return ok;
}

}  // namespace actionloop
