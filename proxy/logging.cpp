// Logging and the sentinel.
#include "logging.hpp"

#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <string>

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

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

}  // namespace

void setup_logging(bool debug) {
    auto logger = spdlog::stderr_logger_mt("proxy");
    logger->set_pattern("%Y/%m/%d %H:%M:%S.%e [%l] %v");
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

}  // namespace actionloop
