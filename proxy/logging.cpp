// Logging and the sentinel.
#include "logging.hpp"

#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <string>

#include <spdlog/cfg/env.h>
#include <spdlog/formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "log_record.hpp"

namespace actionloop {
namespace {

constexpr std::string_view SENTINEL = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX\n";

void write_fd(int fd, std::string_view text) {
    while (!text.empty()) {
        ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return;
        }
        text.remove_prefix(static_cast<size_t>(n));
    }
}

bool json_lines = false;  // OW_LOG_FORMAT=json: set once, before any thread logs
size_t json_line_bytes = 16384;

// The proxy's diagnostics as records: {"time","stream":"proxy","level","message"}.
class json_formatter final : public spdlog::formatter {
public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
        std::string level = ",\"level\":\"";
        const auto name = spdlog::level::to_string_view(msg.level);
        level.append(name.data(), name.size());
        level.push_back('"');
        std::string record;
        append_log_record(record, log_time(msg.time), "proxy", nullptr,
                          std::string_view(msg.payload.data(), msg.payload.size()), json_line_bytes,
                          0, level);
        dest.append(record.data(), record.data() + record.size());
    }
    std::unique_ptr<spdlog::formatter> clone() const override {
        return std::make_unique<json_formatter>();
    }
};

}  // namespace

void setup_logging(bool debug, bool json, size_t max_line_bytes) {
    json_lines = json;
    json_line_bytes = max_line_bytes;
    auto logger = spdlog::stderr_logger_mt("proxy");
    if (json) {
        logger->set_formatter(std::make_unique<json_formatter>());
    } else {
        logger->set_pattern("%Y/%m/%d %H:%M:%S.%e [%l] %v");
    }
    logger->set_level(debug ? spdlog::level::debug : spdlog::level::warn);
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);
    spdlog::cfg::load_env_levels();
}

void write_sentinels() {
    write_fd(1, SENTINEL);
    write_fd(2, SENTINEL);
}

void go_log(std::string_view message) {
    if (json_lines) {
        std::string record;
        append_log_record(record, log_time(std::chrono::system_clock::now()), "proxy", nullptr,
                          message, json_line_bytes, 0, ",\"level\":\"info\"");
        write_fd(2, record);
        return;
    }
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y/%m/%d %H:%M:%S ", &tm);
    std::string line(stamp);
    line.append(message);
    line.push_back('\n');
    write_fd(2, line);
}

void write_stdout(std::string_view text) { write_fd(1, text); }
void write_stderr(std::string_view text) { write_fd(2, text); }

log_backlog_stats log_backlog() { return {}; }

}  // namespace actionloop
