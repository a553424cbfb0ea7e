// Settings from the command line and the environment.
#include "settings.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace actionloop {
namespace {

std::string env_string(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
}

template <typename T>
T env_number(const char* name, T fallback) {
    std::string text = env_string(name);
    if (text.empty()) return fallback;
    try {
        long long value = std::stoll(text);
        if (value < 0) throw std::invalid_argument("negative");
        return static_cast<T>(value);
    } catch (const std::exception&) {
        throw std::invalid_argument(std::string(name) + " must be a non-negative integer, got '" +
                                    text + "'");
    }
}

const char* const USAGE =
    "usage: proxy [-port N] [-debug] [-version] [-compile MAIN] [-env JSON]";

std::string_view flag_name(std::string_view arg) {
    if (arg.substr(0, 2) == "--") return arg.substr(2);
    if (arg.substr(0, 1) == "-") return arg.substr(1);
    return {};
}

void parse_flags(int argc, char** argv, settings& s) {
    for (int i = 1; i < argc; ++i) {
        std::string_view name = flag_name(argv[i]);
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(std::string(USAGE));
            return argv[++i];
        };
        if (name == "debug") {
            s.debug = true;
        } else if (name == "version") {
            s.version = true;
        } else if (name == "compile") {
            s.compile_main = value();
        } else if (name == "env") {
            s.env_json = value();
        } else if (name == "port") {
            std::string text = value();
            try {
                s.port = std::stoi(text);
            } catch (const std::exception&) {
                throw std::invalid_argument("invalid -port '" + text + "'\n" + USAGE);
            }
        } else {
            throw std::invalid_argument("unknown flag '" + std::string(argv[i]) + "'\n" + USAGE);
        }
    }
}

}  // namespace

settings load_settings(int argc, char** argv) {
    settings s;
    parse_flags(argc, argv, s);
    s.compiler = env_string("OW_COMPILER");
    s.wait_for_ack = env_string("OW_WAIT_FOR_ACK");
    s.execution_env = env_string("OW_EXECUTION_ENV");
    s.log_init_error = !env_string("OW_LOG_INIT_ERROR").empty();
    s.save_jar = env_string("OW_SAVE_JAR");
    s.max_body_bytes = env_number("OW_MAX_BODY_BYTES", s.max_body_bytes);
    s.max_answer_bytes = env_number("OW_MAX_ANSWER_BYTES", s.max_answer_bytes);
    s.deadline_grace_ms = env_number("OW_DEADLINE_GRACE_MS", s.deadline_grace_ms);
    s.ack_timeout_ms = env_number("OW_ACK_TIMEOUT_MS", s.ack_timeout_ms);
    s.compile_timeout_ms = env_number("OW_COMPILE_TIMEOUT_MS", s.compile_timeout_ms);
    s.threads = env_number("OW_THREADS", s.threads);
    if (s.threads == 0) s.threads = 1;
    const std::string pipeline = env_string("OW_PIPELINE");
    s.pipeline = !(pipeline == "0" || pipeline == "false" || pipeline == "off");
    return s;
}

}  // namespace actionloop
