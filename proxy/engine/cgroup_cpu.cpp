// Reading a cgroup's CPU quota (cgroup_cpu.hpp).
#include "engine/cgroup_cpu.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace actionloop {
namespace {

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    return text;
}

std::optional<long long> parse_integer(std::string_view text) {
    text = trimmed(text);
    long long value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return {};
    return value;
}

std::optional<unsigned> rounded_up(long long quota, long long period) {
    if (quota <= 0 || period <= 0) return {};
    const long long cpus = (quota + period - 1) / period;
    return static_cast<unsigned>(std::min<long long>(cpus, 1 << 20));
}

std::optional<std::string> read_text(const std::string& path) {
    std::ifstream in(path);
    if (!in) return {};
    std::ostringstream all;
    all << in.rdbuf();
    return all.str();
}

// The quota of one directory (v2 first, then v1).
std::optional<unsigned> quota_in(const std::string& dir) {
    if (const auto max = read_text(dir + "/cpu.max")) return cpus_of_cpu_max(*max);
    const auto quota = read_text(dir + "/cpu.cfs_quota_us");
    const auto period = read_text(dir + "/cpu.cfs_period_us");
    if (quota && period) return cpus_of_cfs_quota(*quota, *period);
    return {};
}

unsigned affinity_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    const int count = CPU_COUNT(&set);
    return count > 0 ? static_cast<unsigned>(count) : 1;
}

}  // namespace

std::optional<unsigned> cpus_of_cpu_max(std::string_view text) {
    text = trimmed(text);
    const size_t space = text.find(' ');
    if (space == std::string_view::npos) return {};           // "max" alone, or garbage
    const auto quota = parse_integer(text.substr(0, space));  // "max": none
    const auto period = parse_integer(text.substr(space + 1));
    if (!quota || !period) return {};
    return rounded_up(*quota, *period);
}

std::optional<unsigned> cpus_of_cfs_quota(std::string_view quota, std::string_view period) {
    const auto q = parse_integer(quota);
    const auto p = parse_integer(period);
    if (!q || !p) return {};
    return rounded_up(*q, *p);
}

unsigned container_cpus(const std::string& cgroup_dir) {
    const unsigned usable = affinity_cpus();
    for (const char* sub : {"", "/cpu", "/cpu,cpuacct"}) {
        if (const auto quota = quota_in(cgroup_dir + sub)) return std::min(*quota, usable);
    }
    return usable;
}

}  // namespace actionloop
