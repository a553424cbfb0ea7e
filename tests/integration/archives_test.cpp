// Archives sent to /init (zip and tar.gz), through the real proxy: entries that would land
// outside the action dir (`..`, absolute paths, symlinks pointing out) are refused with a 502
// and nothing escapes; a corrupt archive is a 502, never a dropped connection; tars without
// directory entries unpack; links whose meaning depends on the order of entries (a hard link
// to a symlink that a later entry replaces, a symlinked folder with entries under it) are
// refused before anything is written; the link check takes linear time; extraction is bounded
// in time (OW_EXTRACT_TIMEOUT_MS) and size. (A full disk while unpacking: init_faults_test.cpp.)
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;

namespace {

const char* const MARKER = "escaped_marker.txt";

// Every file or link named MARKER under the proxy's temp root that is outside the action's
// own src/ and bin/ directories.
std::vector<std::filesystem::path> escaped_files(const proxy_process& proxy) {
    std::vector<std::filesystem::path> escaped;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(proxy.root(), ec);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->path().filename() != MARKER) {
            continue;
        }
        const std::string relative = std::filesystem::relative(it->path(), proxy.cwd()).string();
        const std::size_t slash = relative.find('/', std::string("action/").size());
        const bool inside =
            relative.rfind("action/", 0) == 0 && slash != std::string::npos &&
            (relative.compare(slash, 5, "/src/") == 0 || relative.compare(slash, 5, "/bin/") == 0);
        if (!inside) {
            escaped.push_back(it->path());
        }
    }
    return escaped;
}

// The highest numbered action/N directory.
std::filesystem::path latest_action_dir(const proxy_process& proxy) {
    long highest = 0;
    for (const auto& entry : std::filesystem::directory_iterator(proxy.cwd() / "action")) {
        highest = std::max(highest, std::strtol(entry.path().filename().c_str(), nullptr, 10));
    }
    return proxy.cwd() / "action" / std::to_string(highest);
}

void check_refused(const proxy_process& proxy, const std::string& archive) {
    const http_reply reply = proxy.init(base64_encode(archive));
    CHECK_MESSAGE(reply.status == 502, reply.error << " " << reply.body);
    CHECK(json_of(reply).value("error", "") != "");
    CHECK(reply.header("content-type") == "application/json");
    CHECK(escaped_files(proxy).empty());
    CHECK_FALSE(std::filesystem::exists(std::filesystem::path("/tmp") / MARKER));
}

}  // namespace

TEST_CASE("archives: zip entries with .. are refused and nothing escapes") {
    proxy_process proxy;
    const std::string echo = fixture_text("echo.sh");
    check_refused(proxy, make_zip({file_entry("exec", echo, 0755),
                                   file_entry(std::string("../") + MARKER, "x")}));
    check_refused(proxy, make_zip({file_entry("exec", echo, 0755),
                                   file_entry(std::string("../../../../") + MARKER, "x")}));
    check_refused(proxy, make_zip({file_entry("exec", echo, 0755),
                                   file_entry(std::string("lib/../../") + MARKER, "x")}));
}

TEST_CASE("archives: absolute zip entries are refused") {
    proxy_process proxy;
    const std::string absolute = (proxy.root() / MARKER).string();
    check_refused(proxy, make_zip({file_entry("exec", fixture_text("echo.sh"), 0755),
                                   file_entry(absolute, "x")}));
    check_refused(proxy, make_zip({file_entry("exec", fixture_text("echo.sh"), 0755),
                                   file_entry(std::string("/tmp/") + MARKER, "x")}));
    CHECK_FALSE(std::filesystem::exists(absolute));
}

TEST_CASE("archives: zip symlinks pointing outside the action dir are refused") {
    proxy_process proxy;
    const std::string echo = fixture_text("echo.sh");
    check_refused(proxy,
                  make_zip({file_entry("exec", echo, 0755), symlink_entry("up", "../../../.."),
                            file_entry(std::string("up/") + MARKER, "x")}));
    check_refused(proxy, make_zip({file_entry("exec", echo, 0755), symlink_entry("etc", "/etc")}));
    check_refused(proxy, make_zip({file_entry("exec", echo, 0755),
                                   symlink_entry("root", proxy.root().string()),
                                   file_entry(std::string("root/") + MARKER, "x")}));
}

TEST_CASE("archives: tar.gz entries with .. are refused, tars without dir entries work") {
    proxy_process proxy;
    const std::string echo = fixture_text("echo.sh");
    check_refused(proxy, make_tar_gz({file_entry("exec", echo, 0755),
                                      file_entry(std::string("../") + MARKER, "x")}));
    check_refused(proxy, make_tar_gz({file_entry("exec", echo, 0755),
                                      file_entry(std::string("../../../../") + MARKER, "x")}));
    check_refused(proxy,
                  make_tar_gz({file_entry("exec", echo, 0755), symlink_entry("up", "../../../.."),
                               file_entry(std::string("up/") + MARKER, "x")}));
    const std::string flat =
        make_tar_gz({file_entry("lib/data/info.txt", "deep"), file_entry("exec", echo, 0755)});
    CHECK_REPLY(proxy.init(base64_encode(flat)), 200, OK_BODY);
    CHECK(read_file(latest_action_dir(proxy) / "bin/lib/data/info.txt") == "deep");
}

TEST_CASE("archives: a corrupt zip and a gzip that is not a tar get a 502, not a dropped link") {
    proxy_process proxy;
    const std::string corrupt = std::string("PK\x03\x04", 4) + std::string(200, '\x5a');
    const http_reply zip = proxy.init(base64_encode(corrupt));
    CHECK_MESSAGE(zip.status == 502, zip.error);
    CHECK(json_of(zip).value("error", "") != "");
    const http_reply gz = proxy.init(base64_encode(gzip("this is not a tar archive\n")));
    CHECK_MESSAGE(gz.status == 502, gz.error);
    CHECK(json_of(gz).value("error", "") != "");
    CHECK(proxy.running());
}

namespace {

// A script outside the action dir that the archives below aim `exec` at: were it chmodded and
// run, it would leave MARKER next to itself.
struct outside_script {
    std::filesystem::path path;
    explicit outside_script(const proxy_process& proxy) : path(proxy.root() / "outside.sh") {
        write_file(path, "#!/bin/sh\ntouch \"$(dirname \"$0\")/" + std::string(MARKER) + "\"\n" +
                             fixture_text("echo.sh").substr(std::string("#!/bin/bash\n").size()));
        std::filesystem::permissions(path, std::filesystem::perms(0644));
    }
    unsigned mode() const {
        struct stat st {};
        REQUIRE(::lstat(path.c_str(), &st) == 0);
        return st.st_mode & 07777U;
    }
};

// Refused with exactly `message`; the outside script keeps its mode and never ran.
void check_refused_exactly(const proxy_process& proxy, const outside_script& outside,
                           const std::string& archive, const std::string& message) {
    CHECK_ERROR_REPLY(proxy.init(base64_encode(archive)), 502, message);
    CHECK(outside.mode() == 0644);
    CHECK(escaped_files(proxy).empty());
    CHECK_FALSE(std::filesystem::exists(proxy.root() / MARKER));
}

}  // namespace

TEST_CASE("archives: a hard link to a symlink that a later entry replaces is refused") {
    // The hole: l -> outside.sh, exec = hard link to l (a second name for the symlink), then l
    // replaced by a file. exec was left pointing outside; the proxy chmodded and ran it.
    proxy_process proxy;
    const outside_script outside(proxy);
    check_refused_exactly(proxy, outside,
                          make_tar_gz({symlink_entry("l", outside.path.string()),
                                       hard_link_entry("exec", "l"), file_entry("l", "x")}),
                          "archive entry 'exec' is a hard link to the symlink 'l'");
    CHECK_REPLY(proxy.init(fixture_text("echo.sh")), 200, OK_BODY);  // still serves
}

TEST_CASE("archives: a hard link through a symlinked folder is refused") {
    proxy_process proxy;
    const outside_script outside(proxy);
    check_refused_exactly(proxy, outside,
                          make_tar_gz({symlink_entry("s", proxy.root().string()),
                                       hard_link_entry("exec", "s/outside.sh"), dir_entry("s")}),
                          "archive entry 'exec' is a hard link through the symlink 's'");
}

TEST_CASE("archives: an entry under a symlinked folder is refused, even if the link goes later") {
    proxy_process proxy;
    const outside_script outside(proxy);
    const std::string under = std::string("d/") + MARKER;
    for (const bool zip : {true, false}) {
        const std::vector<archive_entry> entries{file_entry("exec", fixture_text("echo.sh"), 0755),
                                                 symlink_entry("d", proxy.root().string()),
                                                 file_entry(under, "x"), dir_entry("d")};
        check_refused_exactly(proxy, outside, zip ? make_zip(entries) : make_tar_gz(entries),
                              "archive entry '" + under + "' is under the symlink 'd'");
    }
}

TEST_CASE("archives: exec must be a regular file inside the action dir") {
    proxy_process proxy;
    const outside_script outside(proxy);
    check_refused_exactly(
        proxy, outside,
        make_zip({dir_entry("exec"), file_entry("exec/main.sh", fixture_text("echo.sh"), 0755)}),
        "exec is not a regular file inside the action directory");
    // A symlink to a script inside is followed: the script is made executable and runs.
    const std::string linked = make_tar_gz({file_entry("lib/run.sh", fixture_text("echo.sh"), 0644),
                                            symlink_entry("exec", "lib/run.sh")});
    CHECK_REPLY(proxy.init(base64_encode(linked)), 200, OK_BODY);
    const std::filesystem::path run = latest_action_dir(proxy) / "bin/lib/run.sh";
    CHECK((std::filesystem::status(run).permissions() & std::filesystem::perms::owner_exec) !=
          std::filesystem::perms::none);
    CHECK(json_of(proxy.run(nlohmann::json{{"linked", true}})) == nlohmann::json{{"linked", true}});
}

TEST_CASE("archives: a thousand long symlink targets are checked in well under a second") {
    // 1000 links, each to a 2000-component path, then one that points out: the old check
    // re-joined the path at every component (50 s for this 7 KB upload).
    std::string deep;
    for (int i = 0; i < 2000; ++i) deep += i == 0 ? "x" : "/x";
    std::vector<archive_entry> entries{dir_entry("x"),
                                       file_entry("exec", fixture_text("echo.sh"), 0755)};
    for (int i = 0; i < 1000; ++i) entries.push_back(symlink_entry("l" + std::to_string(i), deep));
    entries.push_back(symlink_entry("out", "x/../.."));
    const std::string archive = make_tar_gz(entries);
    CHECK(archive.size() < 100000);
    proxy_process proxy;
    const auto start = std::chrono::steady_clock::now();
    CHECK_ERROR_REPLY(proxy.init(base64_encode(archive)), 502,
                      "archive entry 'out' is a symlink to 'x/../..' outside the action directory");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK_MESSAGE(seconds < support::LINEAR_SECONDS, seconds);
    CHECK(std::filesystem::is_empty(proxy.cwd() / "action"));
}

TEST_CASE("archives: OW_EXTRACT_TIMEOUT_MS and OW_MAX_EXTRACT_BYTES are 502s before the work") {
    proxy_process proxy(
        with_env({{"OW_EXTRACT_TIMEOUT_MS", "1"}, {"OW_MAX_EXTRACT_BYTES", "1000"}}));
    std::vector<archive_entry> many{file_entry("exec", fixture_text("echo.sh"), 0755)};
    for (int i = 0; i < 30000; ++i) many.push_back(file_entry("f" + std::to_string(i), ""));
    CHECK_ERROR_REPLY(proxy.init(base64_encode(make_tar_gz(many))), 502,
                      "archive takes more than 1 ms to extract");
    CHECK(std::filesystem::is_empty(proxy.cwd() / "action"));
    CHECK(proxy.running());
    // The byte bound on a proxy of its own: with 1 ms to extract, a slow moment (a sanitizer
    // build, a loaded machine) made even this small archive answer the time bound first.
    proxy_process bytes(
        with_env({{"OW_EXTRACT_TIMEOUT_MS", "60000"}, {"OW_MAX_EXTRACT_BYTES", "1000"}}));
    const std::string big = make_zip({file_entry("exec", fixture_text("echo.sh"), 0755),
                                      file_entry("big", std::string(2000, 'b'))});
    CHECK_ERROR_REPLY(bytes.init(base64_encode(big)), 502,
                      "archive expands to more than 1000 bytes");
    CHECK(std::filesystem::is_empty(bytes.cwd() / "action"));
    CHECK(bytes.running());
}
