// A proxy whose stdout nobody reads (a stalled log driver): its event loop never waits for a
// log write. /health and the /run of an action that logs nothing answer at once; an action
// that logs is held back (its own pipe fills), not the proxy; and once the reader comes back,
// every line is there, in order, each activation's before its sentinel.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using namespace std::chrono;
using nlohmann::json;
using steady = steady_clock;

namespace {

constexpr auto PROMPT = seconds(1);

// The proxy's stdout as a FIFO that this test holds open for reading but does not read until
// told, filled to the brim before the proxy starts.
class stalled_stdout {
public:
    // Made by proxy_options::prepare: the FIFO where the proxy's stdout file would be.
    void make(const std::filesystem::path& cwd) {
        const std::filesystem::path fifo = cwd.parent_path() / "proxy.stdout";
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        reader_ = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        REQUIRE(reader_ >= 0);
        const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        REQUIRE(writer >= 0);
        const std::string chunk(4096, 'f');
        for (;;) {
            const ssize_t n = ::write(writer, chunk.data(), chunk.size());
            if (n <= 0) break;  // EAGAIN: full
            filled_ += static_cast<size_t>(n);
        }
        ::close(writer);
    }
    ~stalled_stdout() {
        if (reader_ >= 0) ::close(reader_);
    }

    size_t filled() const { return filled_; }
    /// Reads what the proxy wrote, until `done(text)` or `timeout`; the text after the filler.
    std::string read_until(const std::function<bool(const std::string&)>& done,
                           milliseconds timeout) {
        const auto until = steady::now() + timeout;
        while (!done(text_) && steady::now() < until) {
            pollfd p{reader_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            char buf[65536];
            const ssize_t n = ::read(reader_, buf, sizeof buf);
            if (n > 0) text_.append(buf, static_cast<size_t>(n));
        }
        const size_t filler = text_.find_first_not_of('f');
        return filler == std::string::npos ? std::string() : text_.substr(filler);
    }
    size_t bytes_read() const { return text_.size(); }

private:
    int reader_ = -1;
    size_t filled_ = 0;
    std::string text_;
};

proxy_options stalled(stalled_stdout& out, env_map env = {}) {
    proxy_options options;
    options.env = std::move(env);
    options.prepare = [&out](const std::filesystem::path& cwd) { out.make(cwd); };
    return options;
}

// `what` answers within PROMPT; its reply.
template <class F>
http_reply prompt(F&& what) {
    auto reply = std::async(std::launch::async, std::forward<F>(what));
    REQUIRE_MESSAGE(reply.wait_for(PROMPT) == std::future_status::ready,
                    "no answer within 1 s: the proxy waits for its stdout");
    return reply.get();
}

}  // namespace

TEST_CASE("log stall: with stdout full and unread, /health and /run answer within 1 s, and no "
          "line is lost once it is read") {
    stalled_stdout out;
    proxy_process proxy(stalled(out));
    REQUIRE(out.filled() > 0);
    CHECK(prompt([&] { return proxy.init(fixture_text("echo.sh")); }).status == 200);
    CHECK_REPLY(prompt([&] { return proxy.get("/health"); }), 200, "{\"ok\":true}\n");
    for (int i = 0; i < 3; ++i) {
        CHECK_REPLY(prompt([&] {
                        return proxy.run(json{{"i", i}});
                    }),
                    200, "{\"i\":" + std::to_string(i) + "}\n");
    }
    CHECK_REPLY(prompt([&] { return proxy.get("/health"); }), 200, "{\"ok\":true}\n");
    // The reader comes back: the filler, then each activation's sentinel, none lost.
    const std::string text = out.read_until(
        [&](const std::string& all) { return sentinel_count(all) >= 3; }, seconds(10));
    CHECK(out.bytes_read() >= out.filled());
    CHECK(sentinel_count(text) == 3);
    CHECK(strip_sentinels(text).empty());
    CHECK(sentinel_count(proxy.stderr_text()) == 3);
}

TEST_CASE("log stall: an action that logs while stdout is unread waits, the proxy does not, and "
          "every line arrives in order before its activation's sentinel") {
    stalled_stdout out;
    // 2.2 MB of numbered lines on stdout: more than the action's pipe and the proxy's buffer.
    const std::string chatty =
        "#!/bin/bash\nwhile read line; do seq 1 300000; echo '{\"done\":true}' >&3; done\n";
    proxy_process proxy(stalled(out, {{"OW_LOG_BUFFER_BYTES", "65536"}}));
    CHECK(prompt([&] { return proxy.init(chatty); }).status == 200);
    auto run = std::async(std::launch::async, [&] { return proxy.run(json::object()); });
    // The action is blocked writing; the proxy is not.
    std::this_thread::sleep_for(milliseconds(300));
    CHECK_REPLY(prompt([&] { return proxy.get("/health"); }), 200, "{\"ok\":true}\n");
    const std::string text = out.read_until(
        [&](const std::string& all) { return sentinel_count(all) >= 1; }, seconds(20));
    CHECK_REPLY(run.get(), 200, "{\"done\":true}\n");
    std::string expected;
    for (int i = 1; i <= 300000; ++i) expected += std::to_string(i) + "\n";
    expected += std::string(SENTINEL) + "\n";
    CHECK(text.size() == expected.size());
    CHECK(text == expected);
}
