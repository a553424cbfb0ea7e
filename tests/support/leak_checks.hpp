// What "nothing leaked" means for a proxy whose actions or compilers fail on purpose, and
// requests timed against the bound a fault must answer in: shared by the suites that inject
// faults (action_faults, init_faults) and those that flood or hold connections (logs,
// connections).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "proxy_process.hpp"

namespace support {

/// An HTTP timeout no fault may reach: a request that takes this long is a hang.
inline constexpr std::chrono::seconds NO_HANG{30};

/// The fds `pid` holds open (/proc/<pid>/fd; 0 once it is gone).
std::size_t open_fds(pid_t pid);

/// The proxy's fd count once it has settled (the last request's connection closed): the same
/// value over 5 samples 40 ms apart, for at most 3 s.
std::size_t settled_fds(pid_t pid);

/// The action/N directories under the proxy's working dir.
std::size_t action_dirs(const proxy_process& proxy);

/// Live children of this test process other than the proxy: descendants of an action that
/// left the proxy's tree (their parent died), re-parented to us, the subreaper.
std::vector<pid_t> escaped(const proxy_process& proxy);

/// "pid (command) " for each process, for failure messages.
std::string describe(const std::vector<pid_t>& pids);

/// What "nothing leaked" means at a quiet moment: the proxy holds `fds` fds, has `processes`
/// live descendants, nothing escaped, and `dirs` action dirs exist. Waits up to 8 s for
/// killed processes and closed connections to settle.
void check_clean(const proxy_process& proxy, std::size_t fds, std::size_t processes,
                 std::size_t dirs);

/// A request and how long its answer took.
struct timed_reply {
    http_reply reply;
    double seconds = 0;
};

template <typename Request>
timed_reply timed(Request request) {
    const auto start = std::chrono::steady_clock::now();
    timed_reply out{request(), 0};
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

/// POST /run with `value` (and `extra`), timed, with the NO_HANG timeout.
timed_reply run_timed(const proxy_process& proxy, const nlohmann::json& value,
                      const nlohmann::json& extra = nlohmann::json::object());

/// An activation deadline `ms` from now, as OpenWhisk writes it.
std::string deadline_in(int ms);

/// Runs `value` (through an echoing action) and expects its echo.
void check_echo(const proxy_process& proxy, const nlohmann::json& value);

}  // namespace support
