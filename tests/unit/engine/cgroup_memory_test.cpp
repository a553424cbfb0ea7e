// The memory cgroup reader on fake cgroup directories (v2 and v1) in a temp dir: the OOM-kill
// count, the limit, and finding the directory from /proc/self/cgroup's text.
#include <doctest/doctest.h>

#include <filesystem>

#include "engine/cgroup_memory.hpp"
#include "test_util.hpp"

using namespace actionloop;
using support::temp_dir;
using support::write_file;

TEST_CASE("cgroup memory: v2 reads memory.events' oom_kill and memory.max") {
    temp_dir dir("cgroup-v2");
    const memory_cgroup cgroup(dir.path().string());
    CHECK_FALSE(cgroup.oom_kills());  // nothing to read yet
    CHECK_FALSE(cgroup.limit_bytes());
    write_file(dir.path() / "memory.events",
               "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n");
    write_file(dir.path() / "memory.max", "268435456\n");
    CHECK(cgroup.oom_kills() == 2u);
    CHECK(cgroup.limit_bytes() == 268435456u);
    write_file(dir.path() / "memory.max", "max\n");
    CHECK_FALSE(cgroup.limit_bytes());
    write_file(dir.path() / "memory.events", "low 0\noom_kill x\n");  // garbage: unknown
    CHECK_FALSE(cgroup.oom_kills());
}

TEST_CASE("cgroup memory: v1 reads memory.oom_control, else memory.failcnt, and the limit") {
    temp_dir dir("cgroup-v1");
    const memory_cgroup cgroup(dir.path().string());
    write_file(dir.path() / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n");
    write_file(dir.path() / "memory.failcnt", "99\n");
    write_file(dir.path() / "memory.limit_in_bytes", "134217728\n");
    CHECK(cgroup.oom_kills() == 5u);
    CHECK(cgroup.limit_bytes() == 134217728u);
    // An older kernel: no oom_kill line, the fail count stands in.
    write_file(dir.path() / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");
    CHECK(cgroup.oom_kills() == 99u);
    write_file(dir.path() / "memory.limit_in_bytes", "9223372036854771712\n");  // no limit
    CHECK_FALSE(cgroup.limit_bytes());
}

TEST_CASE("cgroup memory: no directory reads nothing, and the limit text says the MB") {
    const memory_cgroup none;
    CHECK_FALSE(none.oom_kills());
    CHECK_FALSE(none.limit_bytes());
    CHECK(memory_limit_text(268435456u) == "the action exceeded its memory limit (256 MB)");
    CHECK(memory_limit_text(std::nullopt) == "the action exceeded its memory limit");
    CHECK(memory_cgroup::of_this_process("/some/dir").dir() == "/some/dir");
}

TEST_CASE("cgroup memory: the directory is found from /proc/self/cgroup's text") {
    temp_dir root("cgroup-root");
    const std::string mount = root.path().string();
    SUBCASE("v2: the path under the mount, when it holds memory.events") {
        std::filesystem::create_directories(root.path() / "kubepods" / "pod1");
        write_file(root.path() / "kubepods" / "pod1" / "memory.events", "oom_kill 0\n");
        CHECK(memory_cgroup::find_dir("0::/kubepods/pod1\n", mount) == mount + "/kubepods/pod1");
        // A namespaced container sees "/" or a path it does not have: the mount itself.
        write_file(root.path() / "memory.events", "oom_kill 0\n");
        CHECK(memory_cgroup::find_dir("0::/\n", mount) == mount);
        CHECK(memory_cgroup::find_dir("0::/elsewhere\n", mount) == mount);
    }
    SUBCASE("v2 without memory.events: none") {
        CHECK(memory_cgroup::find_dir("0::/\n", mount).empty());
    }
    SUBCASE("v1: the memory hierarchy's line, alone or with other controllers") {
        std::filesystem::create_directories(root.path() / "memory" / "docker" / "abc");
        write_file(root.path() / "memory" / "docker" / "abc" / "memory.failcnt", "0\n");
        const std::string text = "5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n";
        CHECK(memory_cgroup::find_dir(text, mount) == mount + "/memory/docker/abc");
        CHECK(memory_cgroup::find_dir("3:memory,hugetlb:/docker/abc\n", mount) ==
              mount + "/memory/docker/abc");
        CHECK(memory_cgroup::find_dir("4:memory:/not/here\n", mount) == mount + "/memory");
    }
    SUBCASE("nothing usable") {
        CHECK(memory_cgroup::find_dir("", mount).empty());
        CHECK(memory_cgroup::find_dir("garbage\n", mount).empty());
        CHECK(memory_cgroup::find_dir("4:memory:/x\n", mount + "/absent").empty());
    }
}
