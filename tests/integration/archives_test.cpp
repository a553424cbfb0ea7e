// Archives sent to /init (zip and tar.gz), through the real proxy: entries that would land
// outside the action dir (`..`, absolute paths, symlinks pointing out) are refused with a 502
// and nothing escapes; a corrupt archive is a 502, never a dropped connection; tars without
// directory entries unpack. (A full disk while unpacking: init_faults_test.cpp.)
#include <doctest/doctest.h>

#include <algorithm>
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
