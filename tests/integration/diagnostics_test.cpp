// When an action fails, the failure says why (docs/SDK.md, "When an action fails"), through
// the real proxy: an out-of-memory kill is named with the cgroup's limit (a fake cgroup
// directory, OW_CGROUP_DIR: the machine's own cgroups are never touched), and the restart
// logs the ended process's peak RSS.
#include <doctest/doctest.h>

#include <string>

#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::seconds;

namespace {

// A #! action that echoes `value`; {"oom_now":…} bumps the fake cgroup's oom_kill count
// (as the kernel's OOM killer does) and SIGKILLs itself, {"plain_kill":…} only SIGKILLs
// itself (someone else's kill: not an OOM).
std::string oom_script(const std::string& cgroup) {
    return "#!/bin/bash\n"
           "while read line; do\n"
           "  case \"$line\" in\n"
           "    *oom_now*)\n"
           "      n=$(sed -n 's/^oom_kill //p' '" + cgroup + "/memory.events')\n"
           "      printf 'oom %d\\noom_kill %d\\n' $((n + 1)) $((n + 1)) > '" + cgroup +
           "/memory.events'\n"
           "      kill -9 $$ ;;\n"
           "    *plain_kill*) kill -9 $$ ;;\n"
           "  esac\n"
           "  echo '{\"served\":true}' >&3\n"
           "done\n";
}

}  // namespace

TEST_CASE("diagnostics: an OOM kill the cgroup counts is named with its limit, then served") {
    temp_dir cgroup("fake-cgroup");
    write_file(cgroup.path() / "memory.events", "low 0\nhigh 0\nmax 3\noom 0\noom_kill 0\n");
    write_file(cgroup.path() / "memory.max", "268435456\n");
    proxy_process proxy(with_env({{"OW_CGROUP_DIR", cgroup.path().string()}}));
    REQUIRE(proxy.init(oom_script(cgroup.path().string())).status == 200);
    CHECK_REPLY(proxy.run(json{{"warm", 1}}), 200, "{\"served\":true}\n");

    CHECK_ERROR_REPLY(proxy.run(json{{"oom_now", 1}}), 400,
                      "command exited (the action exceeded its memory limit (256 MB))");
    CHECK(wait_until(
        [&] {
            return contains(proxy.stderr_text(),
                            "the action exited during the activation (killed by signal 9 "
                            "(SIGKILL): the action exceeded its memory limit (256 MB))");
        },
        seconds(5)));
    CHECK_REPLY(proxy.run(json{{"after", "oom"}}), 200, "{\"served\":true}\n");
    CHECK(contains(proxy.stderr_text(), "; starting it again (its peak RSS: "));

    // A SIGKILL while the count stays: a plain crash, as before.
    CHECK_ERROR_REPLY(proxy.run(json{{"plain_kill", 1}}), 400,
                      "command exited (killed by signal 9, SIGKILL)");
    CHECK_REPLY(proxy.run(json{{"after", "kill"}}), 200, "{\"served\":true}\n");

    // Without a limit (memory.max "max"), the kill is still named.
    write_file(cgroup.path() / "memory.max", "max\n");
    CHECK_ERROR_REPLY(proxy.run(json{{"oom_now", 2}}), 400,
                      "command exited (the action exceeded its memory limit)");
    CHECK_REPLY(proxy.run(json{{"after", "oom"}}), 200, "{\"served\":true}\n");
}
