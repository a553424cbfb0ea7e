// Reading a memory cgroup's OOM-kill count and limit (cgroup_memory.hpp).
#include "engine/cgroup_memory.hpp"

#include <sys/stat.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace actionloop {
namespace {

bool is_dir(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool read_file(const std::string& path, std::string& text) {
    std::ifstream in(path);
    if (!in) return false;
    std::ostringstream all;
    all << in.rdbuf();
    text = all.str();
    return true;
}

std::optional<std::uint64_t> parse_number(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return {};
    return value;
}

// The value of the "key N" line of a flat-keyed file (memory.events, memory.oom_control).
std::optional<std::uint64_t> keyed_value(const std::string& text, std::string_view key) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        const std::string_view view(line);
        if (view.size() > key.size() && view.substr(0, key.size()) == key &&
            view[key.size()] == ' ') {
            return parse_number(view.substr(key.size() + 1));
        }
    }
    return {};
}

std::optional<std::uint64_t> number_in(const std::string& path) {
    std::string text;
    if (!read_file(path, text)) return {};
    return parse_number(text);
}

// Joins a mount and a cgroup path; the mount itself when that directory does not exist.
std::string under(const std::string& mount, std::string_view path) {
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    const std::string joined = path.empty() ? mount : mount + "/" + std::string(path);
    return is_dir(joined) ? joined : mount;
}

bool has_memory_controller(std::string_view controllers) {
    while (!controllers.empty()) {
        const size_t comma = controllers.find(',');
        if (controllers.substr(0, comma) == "memory") return true;
        if (comma == std::string_view::npos) break;
        controllers.remove_prefix(comma + 1);
    }
    return false;
}

}  // namespace

std::string memory_cgroup::find_dir(std::string_view proc_self_cgroup,
                                    const std::string& mount_root) {
    std::optional<std::string> v2_path;
    while (!proc_self_cgroup.empty()) {
        const size_t end = proc_self_cgroup.find('\n');
        const std::string_view line = proc_self_cgroup.substr(0, end);
        proc_self_cgroup.remove_prefix(end == std::string_view::npos ? proc_self_cgroup.size()
                                                                     : end + 1);
        // hierarchy-ID:controller-list:cgroup-path
        const size_t first = line.find(':');
        const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos) continue;
        const std::string_view controllers = line.substr(first + 1, second - first - 1);
        const std::string_view path = line.substr(second + 1);
        if (has_memory_controller(controllers)) {
            const std::string mount = mount_root + "/memory";
            if (is_dir(mount)) return under(mount, path);
        } else if (controllers.empty() && line.substr(0, first) == "0") {
            v2_path = std::string(path);
        }
    }
    if (v2_path && is_dir(mount_root)) {
        std::string dir = under(mount_root, *v2_path);
        std::string probe;
        if (read_file(dir + "/memory.events", probe)) return dir;
    }
    return {};
}

memory_cgroup memory_cgroup::of_this_process(const std::string& configured_dir) {
    if (!configured_dir.empty()) return memory_cgroup(configured_dir);
    std::string text;
    if (!read_file("/proc/self/cgroup", text)) return {};
    return memory_cgroup(find_dir(text, "/sys/fs/cgroup"));
}

std::optional<std::uint64_t> memory_cgroup::oom_kills() const {
    if (dir_.empty()) return {};
    std::string text;
    if (read_file(dir_ + "/memory.events", text)) return keyed_value(text, "oom_kill");
    if (read_file(dir_ + "/memory.oom_control", text)) {
        if (auto kills = keyed_value(text, "oom_kill")) return kills;
    }
    return number_in(dir_ + "/memory.failcnt");
}

std::optional<std::uint64_t> memory_cgroup::limit_bytes() const {
    if (dir_.empty()) return {};
    std::string text;
    if (read_file(dir_ + "/memory.max", text)) return parse_number(text);  // "max": none
    const auto v1 = number_in(dir_ + "/memory.limit_in_bytes");
    // v1 says "no limit" with the largest page-aligned long (9223372036854771712).
    if (v1 && *v1 >= (std::uint64_t{1} << 62)) return {};
    return v1;
}

std::string memory_limit_text(std::optional<std::uint64_t> limit_bytes) {
    std::string text = "the action exceeded its memory limit";
    if (limit_bytes) {
        const std::uint64_t mib = (*limit_bytes + (1u << 20) - 1) >> 20;
        text += " (" + std::to_string(mib) + " MB)";
    }
    return text;
}

}  // namespace actionloop
