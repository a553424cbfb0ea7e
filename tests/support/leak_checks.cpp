#include "leak_checks.hpp"

#include <unistd.h>

#include <filesystem>
#include <system_error>
#include <thread>

#include <doctest/doctest.h>

#include "expectations.hpp"
#include "process_tools.hpp"
#include "test_util.hpp"

namespace support {

std::size_t open_fds(pid_t pid) {
    std::size_t count = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
         it != fs::directory_iterator(); it.increment(ec)) {
        ++count;
    }
    return count;
}

std::size_t settled_fds(pid_t pid) {
    std::size_t last = open_fds(pid);
    int same = 0;
    for (int i = 0; i < 75 && same < 5; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(40));
        const std::size_t now = open_fds(pid);
        same = now == last ? same + 1 : 0;
        last = now;
    }
    return last;
}

std::size_t action_dirs(const proxy_process& proxy) {
    std::size_t count = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator(proxy.cwd() / "action", ec);
         it != fs::directory_iterator(); it.increment(ec)) {
        count += it->path().filename() != "lost+found" ? 1 : 0;
    }
    return count;
}

std::vector<pid_t> escaped(const proxy_process& proxy) {
    std::vector<pid_t> found;
    for (pid_t pid : child_pids(::getpid())) {
        if (pid != proxy.pid()) found.push_back(pid);
    }
    return found;
}

std::string describe(const std::vector<pid_t>& pids) {
    std::string out;
    for (pid_t pid : pids) {
        out += std::to_string(pid) + " (" +
               trim(read_file("/proc/" + std::to_string(pid) + "/comm")) + ") ";
    }
    return out;
}

void check_clean(const proxy_process& proxy, std::size_t fds, std::size_t processes,
                 std::size_t dirs) {
    const auto settled = [&] {
        return open_fds(proxy.pid()) == fds && descendant_pids(proxy.pid()).size() == processes &&
               escaped(proxy).empty();
    };
    int in_a_row = 0;  // settled for 10 samples in a row: not between two of a script's forks
    wait_until([&] { return (in_a_row = settled() ? in_a_row + 1 : 0) >= 10; },
               std::chrono::seconds(8), std::chrono::milliseconds(20));
    CHECK_MESSAGE(open_fds(proxy.pid()) == fds,
                  "proxy fds: " << open_fds(proxy.pid()) << ", expected " << fds);
    CHECK_MESSAGE(descendant_pids(proxy.pid()).size() == processes,
                  "live processes under the proxy: " << describe(descendant_pids(proxy.pid()))
                                                     << "expected " << processes);
    CHECK_MESSAGE(escaped(proxy).empty(), escaped(proxy).size()
                                              << " process(es) escaped the proxy's tree");
    CHECK_MESSAGE(action_dirs(proxy) == dirs,
                  "action dirs: " << action_dirs(proxy) << ", expected " << dirs);
}

timed_reply run_timed(const proxy_process& proxy, const nlohmann::json& value,
                      const nlohmann::json& extra) {
    return timed([&] { return proxy.run(value, extra, NO_HANG); });
}

std::string deadline_in(int ms) { return std::to_string(epoch_millis() + ms); }

void check_echo(const proxy_process& proxy, const nlohmann::json& value) {
    CHECK_REPLY(proxy.run(value, nlohmann::json::object(), NO_HANG), 200, value.dump() + "\n");
}

}  // namespace support
