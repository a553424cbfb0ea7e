// Many connections at once, slow clients and clients that vanish: every request that is
// still wanted gets its own answer, nobody waits behind a slow sender, and nothing leaks. A
// request body over OW_MAX_BODY_BYTES is refused with 413 however it is framed.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "expectations.hpp"
#include "http_client.hpp"
#include "leak_checks.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using namespace std::chrono;
using nlohmann::json;

namespace {

// The action answers each request with the request itself (a JSON object), without forking.
const char* const MIRROR = "#!/bin/bash\nwhile read line; do echo \"$line\" >&3; done\n";

std::string run_request(const std::string& body, bool keep_alive = true) {
    return "POST /run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
           std::string(keep_alive ? "" : "Connection: close\r\n") +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string limit_error(int limit) {
    return "The request body exceeds the limit of " + std::to_string(limit) +
           " bytes (OW_MAX_BODY_BYTES).";
}

std::string post_head(const std::string& path, const std::string& headers) {
    return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
           "Content-Type: application/json\r\n" + headers + "\r\n";
}

std::string body_of(int i) { return "{\"value\":{\"i\":" + std::to_string(i) + "}}"; }

// Reads one response from each connection (all at once, with poll), until each is complete.
std::vector<http_reply> read_all(const std::vector<int>& fds, milliseconds timeout) {
    std::vector<std::string> raw(fds.size());
    std::vector<http_reply> replies(fds.size());
    std::vector<bool> done(fds.size(), false);
    size_t left = fds.size();
    const auto deadline = steady_clock::now() + timeout;
    std::vector<pollfd> polled;
    while (left > 0 && steady_clock::now() < deadline) {
        polled.clear();
        std::vector<size_t> index;
        for (size_t i = 0; i < fds.size(); ++i) {
            if (!done[i]) {
                polled.push_back({fds[i], POLLIN, 0});
                index.push_back(i);
            }
        }
        if (::poll(polled.data(), polled.size(), 100) <= 0) continue;
        for (size_t k = 0; k < polled.size(); ++k) {
            if (polled[k].revents == 0) continue;
            const size_t i = index[k];
            char buf[4096];
            const ssize_t n = ::recv(fds[i], buf, sizeof buf, 0);
            if (n > 0) raw[i].append(buf, static_cast<size_t>(n));
            bool complete = false;
            replies[i] = parse_response(raw[i], complete);
            if (complete || n <= 0) {
                done[i] = true;
                --left;
            }
        }
    }
    return replies;
}

void raise_own_fd_limit() {
    rlimit limit{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
    limit.rlim_cur = limit.rlim_max;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &limit) == 0);
    REQUIRE(limit.rlim_cur >= 2100);
}

}  // namespace

TEST_CASE("connections: 1,000 concurrent keep-alive connections each get their own answer") {
    raise_own_fd_limit();
    proxy_process proxy;
    REQUIRE(proxy.init(MIRROR).status == 200);
    constexpr int COUNT = 1000;
    std::vector<int> fds;
    for (int i = 0; i < COUNT; ++i) fds.push_back(connect_to(proxy.port()));
    for (int round = 0; round < 2; ++round) {  // the second round on the same connections
        for (int i = 0; i < COUNT; ++i) send_text(fds[i], run_request(body_of(round * COUNT + i)));
        const std::vector<http_reply> replies = read_all(fds, seconds(120));
        int right = 0;
        for (int i = 0; i < COUNT; ++i) {
            if (replies[i].status == 200 && replies[i].body == body_of(round * COUNT + i) + "\n") {
                ++right;
            } else {
                INFO("connection " << i << ": " << replies[i].status << " " << replies[i].body);
                CHECK(false);
                break;
            }
        }
        CHECK(right == COUNT);
    }
    for (int fd : fds) ::close(fd);
}

TEST_CASE("connections: a client sending 1 byte per 10 ms does not delay the others") {
    proxy_process proxy;
    REQUIRE(proxy.init(MIRROR).status == 200);
    const std::string slow_body = body_of(-1) + std::string(200, ' ');
    const std::string slow_request = run_request(slow_body, false);
    const int slow = connect_to(proxy.port());
    std::atomic<bool> slow_sent{false};
    std::thread sender([&] {
        for (char c : slow_request) {
            send_text(slow, std::string(1, c));
            std::this_thread::sleep_for(milliseconds(10));  // the slow client itself
        }
        slow_sent = true;
    });
    // While the slow request trickles in (about 3 s), 50 others are answered one by one.
    for (int i = 0; i < 50; ++i) {
        CHECK_REPLY(proxy.run_raw(body_of(i)), 200, body_of(i) + "\n");
    }
    CHECK_FALSE(slow_sent.load());
    sender.join();
    const std::vector<http_reply> replies = read_all({slow}, seconds(30));
    CHECK(replies[0].status == 200);
    CHECK(trim(replies[0].body) == trim(slow_body));
    ::close(slow);
}

TEST_CASE("connections: clients that disconnect mid-request or before their answer shift "
          "nothing and leak nothing") {
    proxy_process proxy;
    REQUIRE(proxy.init(MIRROR).status == 200);
    CHECK_REPLY(proxy.run_raw(body_of(0)), 200, body_of(0) + "\n");
    const size_t fds_before = open_fds(proxy.pid());
    const size_t children_before = proxy.children().size();
    for (int round = 0; round < 20; ++round) {
        // Half a body, then gone.
        const int partial = connect_to(proxy.port());
        const std::string request = run_request(body_of(1000 + round));
        send_text(partial, request.substr(0, request.size() - 5));
        // A whole request, gone before its answer.
        const int impatient = connect_to(proxy.port());
        send_text(impatient, run_request(body_of(2000 + round)));
        ::close(partial);
        ::close(impatient);
        // The next client gets its own answer, not the vanished one's.
        CHECK_REPLY(proxy.run_raw(body_of(round)), 200, body_of(round) + "\n");
    }
    // The proxy closes what the vanished clients left (asynchronously): no descriptor or
    // process outlives them.
    CHECK(wait_until([&] { return open_fds(proxy.pid()) <= fds_before; }, seconds(10)));
    CHECK(open_fds(proxy.pid()) <= fds_before);
    CHECK(proxy.children().size() == children_before);
    CHECK_REPLY(proxy.run_raw(body_of(7)), 200, body_of(7) + "\n");
    proxy.check_streams(42);
}

TEST_CASE("connections: a slow /init does not hold up other connections") {
    temp_dir scratch;
    const std::filesystem::path flag = scratch.path() / "go";
    const std::filesystem::path compiler = scratch.path() / "slow_compile.sh";
    // A compiler that waits for the test's go-ahead, then writes the mirror action.
    write_file(compiler,
               std::string("#!/bin/bash\nwhile [ ! -e \"$__OW_TEST_FLAG\" ]; do sleep 0.01; done\n"
                           "printf '%s' '") +
                   MIRROR + "' > \"$3/exec\"\nchmod 755 \"$3/exec\"\n");
    std::filesystem::permissions(compiler, std::filesystem::perms(0755));
    proxy_options options;
    options.env = {{"OW_COMPILER", compiler.string()}, {"__OW_TEST_FLAG", flag.string()}};
    proxy_process proxy(options);
    http_reply init;
    std::atomic<bool> init_done{false};
    std::thread initializing([&] {
        init = proxy.init("source that needs compiling");
        init_done = true;
    });
    REQUIRE(wait_until([&] { return !proxy.children().empty(); }, seconds(10)));
    // The compiler is running: other connections are still served at once.
    for (int i = 0; i < 20; ++i) {
        const http_reply other = http_get(proxy.port(), "/", seconds(5));
        CHECK(other.status == 200);
    }
    CHECK_FALSE(init_done.load());  // still compiling
    // A /run sent meanwhile waits for the /init (as upstream's lock makes it) and is served
    // by the action it starts.
    auto early = std::async(std::launch::async, [&] { return proxy.run_raw(body_of(0)); });
    CHECK(early.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
    write_file(flag, "");
    initializing.join();
    CHECK_REPLY(init, 200, OK_BODY);
    CHECK_REPLY(early.get(), 200, body_of(0) + "\n");
    CHECK_REPLY(proxy.run_raw(body_of(1)), 200, body_of(1) + "\n");
}

TEST_CASE("connections: malformed requests get 400 with a JSON body, and the proxy serves on") {
    proxy_process proxy;
    REQUIRE(proxy.init(MIRROR).status == 200);
    const std::string bad_requests[] = {
        "GARBAGE\r\n\r\n",
        "GET / HTTP/1.1\r\nX: " + std::string(70000, 'a') + "\r\n\r\n",  // header over 64 KiB
        "POST /run HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
        "POST /run HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    };
    for (const std::string& bad : bad_requests) {
        INFO("request: " << bad.substr(0, 60));
        const http_reply reply = proxy.raw(bad, seconds(10));
        CHECK_ERROR_REPLY(reply, 400, "HTTP error 400");
        CHECK(reply.header("connection") == "close");
    }
    CHECK_REPLY(proxy.run_raw(body_of(3)), 200, body_of(3) + "\n");
    CHECK(proxy.running());
}

TEST_CASE(
    "connections: a request body over the limit is 413 (Content-Length, chunked, 100-continue)") {
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
