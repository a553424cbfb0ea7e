// The container's CPUs for OW_WORKERS=auto (engine/cgroup_cpu.hpp): the quota texts of
// cgroup v2 and v1, and the files read from a given directory.
#include <doctest/doctest.h>

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/cgroup_cpu.hpp"
#include "test_util.hpp"

using namespace actionloop;

namespace {

unsigned usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
    return static_cast<unsigned>(CPU_COUNT(&set));
}

void write(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("cgroup_cpu: v2 cpu.max, rounded up") {
    CHECK(cpus_of_cpu_max("max 100000\n") == std::nullopt);
    CHECK(cpus_of_cpu_max("100000 100000\n") == 1u);
    CHECK(cpus_of_cpu_max("150000 100000\n") == 2u);
    CHECK(cpus_of_cpu_max("50000 100000") == 1u);
    CHECK(cpus_of_cpu_max("400000 100000") == 4u);
    CHECK(cpus_of_cpu_max("max") == std::nullopt);
    CHECK(cpus_of_cpu_max("") == std::nullopt);
    CHECK(cpus_of_cpu_max("abc def") == std::nullopt);
    CHECK(cpus_of_cpu_max("100000 0") == std::nullopt);
}

TEST_CASE("cgroup_cpu: v1 cfs quota over period, rounded up; -1 is none") {
    CHECK(cpus_of_cfs_quota("-1\n", "100000\n") == std::nullopt);
    CHECK(cpus_of_cfs_quota("200000\n", "100000\n") == 2u);
    CHECK(cpus_of_cfs_quota("250000", "100000") == 3u);
    CHECK(cpus_of_cfs_quota("x", "100000") == std::nullopt);
}

TEST_CASE("cgroup_cpu: the files of a directory, at most the CPUs usable") {
    const unsigned usable = usable_cpus();
    support::temp_dir none;
    CHECK(container_cpus(none.path().string()) == usable);  // no quota: the affinity count

    support::temp_dir v2;
    write(v2.path() / "cpu.max", "100000 100000\n");
    CHECK(container_cpus(v2.path().string()) == 1u);
    write(v2.path() / "cpu.max", "max 100000\n");
    CHECK(container_cpus(v2.path().string()) == usable);
    write(v2.path() / "cpu.max", "6400000 100000\n");  // 64 CPUs: only what is usable
    CHECK(container_cpus(v2.path().string()) == std::min(64u, usable));

    support::temp_dir v1;
    write(v1.path() / "cpu,cpuacct" / "cpu.cfs_quota_us", "50000\n");
    write(v1.path() / "cpu,cpuacct" / "cpu.cfs_period_us", "100000\n");
    CHECK(container_cpus(v1.path().string()) == 1u);
    write(v1.path() / "cpu" / "cpu.cfs_quota_us", "-1\n");
    write(v1.path() / "cpu" / "cpu.cfs_period_us", "100000\n");
    CHECK(container_cpus(v1.path().string()) == 1u);  // cpu/ has none; cpu,cpuacct/ has one
}
