// deployed_config.cpp — reading ALERT_CONFIG once per /init, and the copy a restart reads.
#include "runtime/deployed_config.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.hpp"
#include "core/hash.hpp"
#include "core/log_text.hpp"
#include "runtime/sha256.hpp"

namespace alerts {

namespace fs = std::filesystem;

namespace {

constexpr const char* COPY_PREFIX = ".alert-config-";
constexpr const char* COPY_SUFFIX = ".json";

bool read_whole(const fs::path& path, std::string& text) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return !in.bad();
}

std::string first_line(const char* path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// Field 22 of /proc/PID/stat: when the process started, in clock ticks after boot. The
// command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
std::string start_time_of(pid_t pid) {
    const std::string stat = first_line(("/proc/" + std::to_string(pid) + "/stat").c_str());
    const std::size_t name_end = stat.rfind(')');
    if (name_end == std::string::npos) return "";
    std::istringstream fields(stat.substr(name_end + 1));
    std::string field;
    for (int i = 3; i <= 22 && fields >> field; ++i) {
        if (i == 22) return field;
    }
    return "";
}

std::string hex64(std::uint64_t value) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

// One name per starter and file: a restart with the same ALERT_CONFIG finds it, nothing else.
fs::path copy_path(const fs::path& dir, const std::string& starter, const std::string& file) {
    return dir / (COPY_PREFIX + hex64(hash_bytes(starter + '\n' + file)) + COPY_SUFFIX);
}

bool is_copy_name(const std::string& name) {
    const std::string prefix = COPY_PREFIX, suffix = COPY_SUFFIX;
    return name.size() > prefix.size() + suffix.size() && name.rfind(prefix, 0) == 0 &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Copies other starters left (a zip that shipped one, an earlier proxy in the same directory).
void remove_other_copies(const fs::path& dir, const fs::path& mine) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path() != mine && is_copy_name(it->path().filename().string())) {
            fs::remove(it->path(), ec);
        }
    }
}

void write_whole(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::system_error(errno, std::generic_category(), path.string());
}

}  // namespace

std::string starter_identity() {
    const pid_t parent = ::getppid();
    return first_line("/proc/sys/kernel/random/boot_id") + "/" + std::to_string(parent) + "/" +
           start_time_of(parent);
}

deployed_config read_deployed_config(const std::string& config_file, const fs::path& dir,
                                     const std::string& starter) {
    deployed_config config;
    config.file = (dir / config_file).lexically_normal().string();  // an absolute one stays
    const fs::path copy = copy_path(dir, starter, config.file);
    std::error_code ec;
    if (fs::exists(copy, ec)) {
        if (!read_whole(copy, config.text)) {
            throw config_error("config: cannot read '" + copy.string() +
                               "', the copy of ALERT_CONFIG kept at /init (a new /init reads " +
                               config.file + " again)");
        }
        config.copy = copy.string();
        config.from_copy = true;
    } else if (!read_whole(config.file, config.text)) {
        throw config_error(
            "config: cannot read ALERT_CONFIG file '" + config.file + "'" +
            (fs::path(config_file).is_relative()
                 ? " (ALERT_CONFIG='" + config_file + "', relative to the action's directory)"
                 : std::string()));
    }
    config.sha256 = sha256_hex(config.text);
    return config;
}

std::string keep_deployed_config(deployed_config& config, const fs::path& dir,
                                 const std::string& starter) {
    if (config.from_copy) return "";
    const fs::path copy = copy_path(dir, starter, config.file);
    const fs::path aside = copy.string() + ".tmp" + std::to_string(::getpid());
    try {
        write_whole(aside, config.text);
        fs::rename(aside, copy);
    } catch (const std::exception& e) {
        std::error_code ec;
        fs::remove(aside, ec);
        return e.what();
    }
    config.copy = copy.string();
    remove_other_copies(dir, copy);
    return "";
}

std::string config_line(const deployed_config& config, bool json) {
    const char* read = config.from_copy ? "copy" : "file";
    const std::string copy = config.copy.empty() ? "none" : config.copy;
    if (json) {
        return nlohmann::ordered_json{{"alerts", "config"},
                                      {"sha256", config.sha256},
                                      {"bytes", config.text.size()},
                                      {"file", config.file},
                                      {"read", read},
                                      {"copy", copy}}
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    std::string line = "alerts: config";
    append_log_field(line, "sha256", config.sha256);
    append_log_field(line, "bytes", std::to_string(config.text.size()));
    append_log_field(line, "file", config.file);
    append_log_field(line, "read", read);
    append_log_field(line, "copy", copy);
    return line;
}

std::string value_config_line(const std::string& sha256, std::size_t bytes, bool json) {
    if (json) {
        nlohmann::ordered_json line{{"alerts", "config"}};
        if (!sha256.empty()) line.update({{"sha256", sha256}, {"bytes", bytes}});
        line["read"] = "value.config";
        return line.dump();
    }
    std::string line = "alerts: config";
    if (!sha256.empty()) {
        append_log_field(line, "sha256", sha256);
        append_log_field(line, "bytes", std::to_string(bytes));
    }
    append_log_field(line, "read", "value.config");
    return line;
}

}  // namespace alerts
