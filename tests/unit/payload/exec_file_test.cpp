// Unit tests for proxy/payload/exec_file: bin/exec is made executable only when it is (or its
// links inside bin lead to) a regular file inside bin; a link out of bin, a folder, a fifo or a
// loop is refused and nothing outside changes mode; a missing exec is left to the start.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "payload/exec_file.hpp"

namespace fs = std::filesystem;
using actionloop::EXEC_NOT_INSIDE;
using actionloop::make_exec_runnable;

namespace {

// root/bin (the action's folder) and root/outside.sh (mode 0644), removed at the end.
struct bin_dir {
    fs::path root;
    fs::path bin;
    fs::path outside;
    bin_dir() {
        static std::atomic<int> counter{0};
        root = fs::temp_directory_path() / ("actionloop-exec-file-" + std::to_string(getpid()) +
                                            "-" + std::to_string(counter++));
        fs::remove_all(root);
        bin = root / "bin";
        fs::create_directories(bin);
        outside = root / "outside.sh";
        write(outside);
    }
    ~bin_dir() {
        std::error_code ignored;
        fs::remove_all(root, ignored);
    }
    bin_dir(const bin_dir&) = delete;
    bin_dir& operator=(const bin_dir&) = delete;

    static void write(const fs::path& file) {
        std::ofstream(file) << "#!/bin/sh\n";
        fs::permissions(file, fs::perms(0644));
    }
    std::string run() const { return make_exec_runnable(bin.string()); }
};

unsigned mode_of(const fs::path& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode & 07777U;
}

}  // namespace

TEST_CASE("make_exec_runnable: a regular exec becomes 0755") {
    const bin_dir d;
    bin_dir::write(d.bin / "exec");
    CHECK(d.run().empty());
    CHECK(mode_of(d.bin / "exec") == 0755);
}

TEST_CASE("make_exec_runnable: links inside bin are followed to the file they name") {
    const bin_dir d;
    fs::create_directories(d.bin / "lib/real");
    bin_dir::write(d.bin / "lib/real/run.sh");
    fs::create_directory_symlink("real", d.bin / "lib/current");
    fs::create_symlink("./lib/current/../current/run.sh", d.bin / "exec");
    CHECK(d.run().empty());
    CHECK(mode_of(d.bin / "lib/real/run.sh") == 0755);
    CHECK(fs::is_symlink(d.bin / "exec"));
}

TEST_CASE("make_exec_runnable: a link out of bin is refused and changes nothing outside") {
    const bin_dir d;
    SUBCASE("relative") { fs::create_symlink("../outside.sh", d.bin / "exec"); }
    SUBCASE("absolute") { fs::create_symlink(d.outside, d.bin / "exec"); }
    SUBCASE("in and out again") {
        fs::create_directories(d.bin / "sub");
        fs::create_symlink("sub/../../outside.sh", d.bin / "exec");
    }
    SUBCASE("through a folder link") {
        fs::create_directory_symlink("..", d.bin / "up");
        fs::create_symlink("up/outside.sh", d.bin / "exec");
    }
    CHECK(d.run() == EXEC_NOT_INSIDE);
    CHECK(mode_of(d.outside) == 0644);
}

TEST_CASE("make_exec_runnable: a folder, a fifo or a loop is refused") {
    const bin_dir d;
    SUBCASE("a folder") { fs::create_directories(d.bin / "exec"); }
    SUBCASE("a link to bin itself") { fs::create_symlink(".", d.bin / "exec"); }
    SUBCASE("a fifo (opening it would block)") {
        REQUIRE(::mkfifo((d.bin / "exec").c_str(), 0644) == 0);
    }
    SUBCASE("a loop") {
        fs::create_symlink("a", d.bin / "exec");
        fs::create_symlink("exec", d.bin / "a");
    }
    SUBCASE("a path through a file") {
        bin_dir::write(d.bin / "file");
        fs::create_symlink("file/x", d.bin / "exec");
    }
    CHECK(d.run() == EXEC_NOT_INSIDE);
}

TEST_CASE("make_exec_runnable: 40 hops are followed, 41 are not") {
    for (const int links : {40, 41}) {
        const bin_dir d;
        bin_dir::write(d.bin / "run.sh");
        fs::create_symlink("run.sh", d.bin / "l1");
        for (int i = 2; i < links; ++i) {
            fs::create_symlink("l" + std::to_string(i - 1), d.bin / ("l" + std::to_string(i)));
        }
        fs::create_symlink("l" + std::to_string(links - 1), d.bin / "exec");
        CHECK(d.run() == (links == 40 ? "" : EXEC_NOT_INSIDE));
    }
}

TEST_CASE("make_exec_runnable: no exec, or a dangling link, is left to the start") {
    const bin_dir d;
    CHECK(d.run().empty());
    fs::create_symlink("missing", d.bin / "exec");
    CHECK(d.run().empty());
    CHECK(make_exec_runnable((d.root / "no-such-dir").string()).rfind("cannot open ", 0) == 0);
}
