// Where our proxy does better than upstream (protocol.md "Where we do better"), one test
// case per promise: serialized concurrent runs, restarts after a crash, no desync,
// deadlines, safe extraction, limits, environment, logs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <vector>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::seconds;

namespace {

constexpr auto NO_HANG = seconds(20);
const char* const MARKER = "escaped_marker.txt";

proxy_process& init_with(proxy_process& proxy, const std::string& script) {
    REQUIRE(proxy.init(fixture_text(script)).status == 200);
    return proxy;
}

proxy_options with_env(env_map env) {
    proxy_options options;
    options.env = std::move(env);
    return options;
}

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

std::string limit_error(int limit) {
    return "The request body exceeds the limit of " + std::to_string(limit) +
           " bytes (OW_MAX_BODY_BYTES).";
}

std::string post_head(const std::string& path, const std::string& headers) {
    return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
           "Content-Type: application/json\r\n" + headers + "\r\n";
}

}  // namespace

TEST_CASE("better: 8 concurrent /run requests each get their own answer") {
    proxy_process proxy;
    init_with(proxy, "echo.sh");
    std::vector<std::future<http_reply>> replies;
    const auto value_of = [](int i) {
        return json{{"request", i}, {"pad", std::string(static_cast<size_t>(i) * 997, 'p')}};
    };
    for (int i = 0; i < 8; ++i) {
        replies.push_back(std::async(std::launch::async, [&proxy, value = value_of(i)] {
            return proxy.run(value, json::object(), NO_HANG);
        }));
    }
    for (int i = 0; i < 8; ++i) {
        CHECK_REPLY(replies[static_cast<size_t>(i)].get(), 200, value_of(i).dump() + "\n");
    }
    proxy.check_streams(8);
}

TEST_CASE("better: an action that crashes during a run is restarted on the next run") {
    proxy_process proxy;
    init_with(proxy, "crash_on_run.sh");
    CHECK_ERROR_REPLY(proxy.run(json{{"crash", true}}, json::object(), NO_HANG), 400,
                      "command exited");
    const stream_texts after_crash = proxy.check_streams(1);
    CHECK_REPLY(proxy.run(json{{"after", "crash"}}, json::object(), NO_HANG), 200,
                "{\"after\":\"crash\"}\n");
    CHECK_REPLY(proxy.run(json{{"and", "again"}}, json::object(), NO_HANG), 200,
                "{\"and\":\"again\"}\n");
    const stream_texts streams = proxy.check_streams(3);
    CHECK_FALSE(streams.err.empty());  // the restart is announced on stderr
    CHECK(proxy.children().size() == 1);
}

TEST_CASE("better: an action that dies between runs is restarted transparently") {
    proxy_process proxy;
    init_with(proxy, "crash_on_run.sh");
    const std::vector<pid_t> first = proxy.children();
    REQUIRE(first.size() == 1);
    CHECK_REPLY(proxy.run(json{{"exit_after", true}}, json::object(), NO_HANG), 200,
                "{\"exit_after\":true}\n");
    REQUIRE(wait_until([&] { return !process_alive(first[0]); }, seconds(10)));
    CHECK_REPLY(proxy.run(json{{"next", 1}}, json::object(), NO_HANG), 200, "{\"next\":1}\n");
    CHECK_REPLY(proxy.run(json{{"next", 2}}, json::object(), NO_HANG), 200, "{\"next\":2}\n");
    CHECK(proxy.children().size() == 1);
}

TEST_CASE("better: a crash is noticed even when a grandchild keeps the pipes open") {
    proxy_process proxy;
    init_with(proxy, "fork_keeps_pipes.sh");
    CHECK_REPLY(proxy.run(json{{"first", 1}}, json::object(), NO_HANG), 200, "{\"first\":1}\n");
    const auto start = std::chrono::steady_clock::now();
    CHECK_ERROR_REPLY(proxy.run(json{{"crash", true}}, json::object(), NO_HANG), 400,
                      "command exited");
    CHECK(std::chrono::steady_clock::now() - start < seconds(10));  // not the grandchild's 30 s
    CHECK_REPLY(proxy.run(json{{"after", 1}}, json::object(), NO_HANG), 200, "{\"after\":1}\n");
}

TEST_CASE("better: extra fd-3 lines never shift later results") {
    proxy_process proxy;
    init_with(proxy, "multi_line.sh");
    for (int i = 0; i < 4; ++i) {
        CHECK_REPLY(proxy.run(json{{"n", i}}, json::object(), NO_HANG), 200,
                    json{{"n", i}}.dump() + "\n");
    }
    CHECK_ERROR_REPLY(proxy.run(json{{"pretty", true}}, json::object(), NO_HANG), 502,
                      "The action did not return a dictionary or array.");
    CHECK_REPLY(proxy.run(json{{"n", 9}}, json::object(), NO_HANG), 200, "{\"n\":9}\n");
    proxy.check_streams(6);
}

TEST_CASE("better: a run past its deadline is stopped with 502 and the action restarted") {
    proxy_process proxy;
    init_with(proxy, "hang.sh");
    const std::string deadline = std::to_string(epoch_millis() + 1000);
    const auto start = std::chrono::steady_clock::now();
    CHECK_ERROR_REPLY(proxy.run(json{{"hang", true}}, json{{"deadline", deadline}}, NO_HANG), 502,
                      "The action did not answer before its deadline and was stopped.");
    CHECK(std::chrono::steady_clock::now() - start < seconds(10));
    CHECK_REPLY(proxy.run(json{{"x", 1}}, json::object(), NO_HANG), 200, "{\"x\":1}\n");
    const std::string later = std::to_string(epoch_millis() + 60000);
    CHECK_REPLY(proxy.run(json{{"x", 2}}, json{{"deadline", later}}, NO_HANG), 200, "{\"x\":2}\n");
    CHECK(proxy.children().size() == 1);
}

TEST_CASE("better: zip entries with .. are refused and nothing escapes") {
    proxy_process proxy;
    const std::string echo = fixture_text("echo.sh");
    check_refused(proxy, make_zip({file_entry("exec", echo, 0755),
                                   file_entry(std::string("../") + MARKER, "x")}));
    check_refused(proxy, make_zip({file_entry("exec", echo, 0755),
                                   file_entry(std::string("../../../../") + MARKER, "x")}));
    check_refused(proxy, make_zip({file_entry("exec", echo, 0755),
                                   file_entry(std::string("lib/../../") + MARKER, "x")}));
}

TEST_CASE("better: absolute zip entries are refused") {
    proxy_process proxy;
    const std::string absolute = (proxy.root() / MARKER).string();
    check_refused(proxy, make_zip({file_entry("exec", fixture_text("echo.sh"), 0755),
                                   file_entry(absolute, "x")}));
    check_refused(proxy, make_zip({file_entry("exec", fixture_text("echo.sh"), 0755),
                                   file_entry(std::string("/tmp/") + MARKER, "x")}));
    CHECK_FALSE(std::filesystem::exists(absolute));
}

TEST_CASE("better: zip symlinks pointing outside the action dir are refused") {
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

TEST_CASE("better: tar.gz entries with .. are refused; tars without dir entries work") {
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

TEST_CASE("better: a corrupt zip and a gzip that is not a tar get a 502, not a dropped link") {
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

TEST_CASE("better: a request body over the limit is 413 (Content-Length, chunked, 100-continue)") {
    proxy_process proxy(with_env({{"OW_MAX_BODY_BYTES", "1000"}}));
    init_with(proxy, "echo.sh");
    const std::string body = json{{"value", {{"big", std::string(2000, 'b')}}}}.dump();
    CHECK_ERROR_REPLY(proxy.run_raw(body, NO_HANG), 413, limit_error(1000));
    CHECK_ERROR_REPLY(proxy.post("/init", body, NO_HANG), 413, limit_error(1000));
    const std::string chunked_request =
        post_head("/run", "Transfer-Encoding: chunked\r\n") + chunked(body, 256);
    CHECK_ERROR_REPLY(proxy.raw(chunked_request, NO_HANG), 413, limit_error(1000));
    const std::string expect = post_head(
        "/run", "Expect: 100-continue\r\nContent-Length: " + std::to_string(body.size()) + "\r\n");
    CHECK_ERROR_REPLY(raw_expect_continue(proxy.port(), expect, body, seconds(2), NO_HANG), 413,
                      limit_error(1000));
    const json small = {{"small", std::string(800, 's')}};
    CHECK_REPLY(proxy.run(small, json::object(), NO_HANG), 200, small.dump() + "\n");
}

TEST_CASE("better: an answer line over the cap is 502 and the next run works") {
    proxy_process proxy(with_env({{"OW_MAX_ANSWER_BYTES", "1000"}}));
    init_with(proxy, "answer.sh");
    const std::string huge = json{{"s", std::string(5000, 'x')}}.dump();
    CHECK_ERROR_REPLY(proxy.run(json{{"line", huge}}, json::object(), NO_HANG), 502,
                      "The action's answer exceeds the limit of 1000 bytes.");
    CHECK_REPLY(proxy.run(json{{"line", "{\"ok\":1}"}}, json::object(), NO_HANG), 200,
                "{\"ok\":1}\n");
}

TEST_CASE("better: __OW_* values containing = arrive whole") {
    proxy_process proxy(with_env({{"__OW_API_HOST", "https://x=y"}}));
    init_with(proxy, "env.sh");
    CHECK(json_of(proxy.run(json::object())).value("api_host", "") == "https://x=y");
}

TEST_CASE("better: PATH and HOME reach the action") {
    const std::string path = "/nonexistent-actionloop-bin:" + path_only_env()["PATH"];
    proxy_process proxy(with_env({{"PATH", path}, {"HOME", "/home/actionloop-test"}}));
    init_with(proxy, "env_dump.sh");
    const json seen = json_of(proxy.run(json::object()));
    CHECK(seen.value("PATH", "") == path);
    CHECK(seen.value("HOME", "") == "/home/actionloop-test");
}

TEST_CASE("better: megabytes of action logs per run never block the proxy") {
    proxy_process proxy;
    init_with(proxy, "flood.sh");
    for (int i = 0; i < 3; ++i) {
        CHECK_REPLY(proxy.run(json{{"flood", i}}, json::object(), seconds(60)), 200,
                    json{{"flood", i}}.dump() + "\n");
    }
    CHECK(std::filesystem::file_size(proxy.root() / "proxy.stdout") >= 3U * 5242880U);
    CHECK(std::filesystem::file_size(proxy.root() / "proxy.stderr") >= 3U * 5242880U);
    proxy.check_streams(3);
}

TEST_CASE("better: the proxy prints nothing of its own on a clean run") {
    proxy_process proxy;
    init_with(proxy, "echo.sh");
    CHECK(proxy.run(json{{"a", 1}}).status == 200);
    CHECK(proxy.run(json{{"a", 2}}).status == 200);
    const std::string two = std::string(SENTINEL) + "\n" + SENTINEL + "\n";
    CHECK(wait_until([&] { return proxy.stderr_text().size() >= two.size(); }, seconds(2)));
    CHECK(proxy.stdout_text() == two);
    CHECK(proxy.stderr_text() == two);
}
