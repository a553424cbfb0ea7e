// deployed_config_test.cpp — ALERT_CONFIG read once per /init: the first start reads the file
// and keeps a copy in the action's directory, a restart by the same starter reads the copy
// whatever the file holds now; another starter's copy (a zip's, a reused directory's) or
// another file's is ignored; a relative name is the directory's; the config line's fields.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/config.hpp"
#include "runtime/deployed_config.hpp"
#include "runtime/sha256.hpp"

using namespace alerts;
namespace fs = std::filesystem;

namespace {

// A fresh directory for one test case, removed at its end.
struct scratch_dir {
    explicit scratch_dir(const char* name)
        : path(fs::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~scratch_dir() { fs::remove_all(path); }
    fs::path path;
};

void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

int copies_in(const fs::path& dir) {
    int n = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        n += entry.path().filename().string().rfind(".alert-config-", 0) == 0;
    }
    return n;
}

}  // namespace

TEST_CASE("deployed config: a restart by the same starter reads the copy kept at the first") {
    scratch_dir dir("deployed-config");
    write(dir.path / "config.json", R"({"accounts": {}})");
    deployed_config first = read_deployed_config("config.json", dir.path, "boot/42/1000");
    CHECK(first.text == R"({"accounts": {}})");
    CHECK(first.sha256 == sha256_hex(first.text));
    CHECK(first.file == (dir.path / "config.json").string());
    CHECK_FALSE(first.from_copy);
    CHECK(keep_deployed_config(first, dir.path, "boot/42/1000").empty());
    CHECK(fs::path(first.copy).parent_path() == dir.path);

    write(dir.path / "config.json", R"({"accounts": {"edited": {}}})");
    const deployed_config again = read_deployed_config("config.json", dir.path, "boot/42/1000");
    CHECK(again.text == R"({"accounts": {}})");
    CHECK(again.sha256 == first.sha256);
    CHECK(again.from_copy);
    CHECK(again.copy == first.copy);
    CHECK(again.file == first.file);
    CHECK(copies_in(dir.path) == 1);
}

TEST_CASE("deployed config: another starter or another file reads the file, and replaces copies") {
    scratch_dir dir("deployed-config-other");
    write(dir.path / "a.json", "A");
    write(dir.path / "b.json", "B");
    deployed_config kept = read_deployed_config("a.json", dir.path, "boot/42/1000");
    REQUIRE(keep_deployed_config(kept, dir.path, "boot/42/1000").empty());
    write(dir.path / "a.json", "A2");
    // Another proxy (another pid, or the same pid started later, or another boot).
    for (const char* starter : {"boot/43/1000", "boot/42/1001", "boot2/42/1000"}) {
        CAPTURE(starter);
        const deployed_config other = read_deployed_config("a.json", dir.path, starter);
        CHECK(other.text == "A2");
        CHECK_FALSE(other.from_copy);
    }
    // Another file, same starter.
    CHECK(read_deployed_config("b.json", dir.path, "boot/42/1000").text == "B");
    // A new starter's first start keeps its own copy and removes the others.
    deployed_config fresh = read_deployed_config("a.json", dir.path, "boot/43/1000");
    REQUIRE(keep_deployed_config(fresh, dir.path, "boot/43/1000").empty());
    CHECK(copies_in(dir.path) == 1);
    CHECK(fs::exists(fresh.copy));
    CHECK_FALSE(fs::exists(kept.copy));
}

TEST_CASE("deployed config: a file that cannot be read, or a copy that cannot be kept") {
    scratch_dir dir("deployed-config-errors");
    CHECK_THROWS_WITH_AS(
        read_deployed_config("missing.json", dir.path, "s"),
        ("config: cannot read ALERT_CONFIG file '" + (dir.path / "missing.json").string() +
         "' (ALERT_CONFIG='missing.json', relative to the action's directory)")
            .c_str(),
        config_error);
    const std::string absent = (dir.path / "absent.json").string();
    CHECK_THROWS_WITH_AS(read_deployed_config(absent, "/", "s"),
                         ("config: cannot read ALERT_CONFIG file '" + absent + "'").c_str(),
                         config_error);
    // The directory is gone (as if read-only): the config still works, without a copy.
    write(dir.path / "config.json", "{}");
    deployed_config config = read_deployed_config("config.json", dir.path, "s");
    const std::string why = keep_deployed_config(config, dir.path / "gone", "s");
    CHECK_FALSE(why.empty());
    CHECK(config.copy.empty());
    CHECK(config_line(config, false).find(" copy=none") != std::string::npos);
}

TEST_CASE("deployed config: the line each process writes at start, plain and JSON") {
    deployed_config config;
    config.text = "{}";
    config.sha256 = sha256_hex(config.text);
    config.file = "/action/action/1/bin/my config.json";
    config.copy = "/action/action/1/bin/.alert-config-0123456789abcdef.json";
    const std::string sha = config.sha256;
    CHECK(config_line(config, false) ==
          "alerts: config sha256=" + sha +
              " bytes=2 file=\"/action/action/1/bin/my config.json\" read=file "
              "copy=/action/action/1/bin/.alert-config-0123456789abcdef.json");
    config.from_copy = true;
    CHECK(config_line(config, true) ==
          R"({"alerts":"config","sha256":")" + sha +
              R"(","bytes":2,"file":"/action/action/1/bin/my config.json","read":"copy",)"
              R"("copy":"/action/action/1/bin/.alert-config-0123456789abcdef.json"})");
    CHECK(value_config_line("", 0, false) == "alerts: config read=value.config");
    CHECK(value_config_line("", 0, true) == R"({"alerts":"config","read":"value.config"})");
    CHECK(value_config_line(sha, 2, false) ==
          "alerts: config sha256=" + sha + " bytes=2 read=value.config");
    CHECK(value_config_line(sha, 2, true) ==
          R"({"alerts":"config","sha256":")" + sha + R"(","bytes":2,"read":"value.config"})");
}
