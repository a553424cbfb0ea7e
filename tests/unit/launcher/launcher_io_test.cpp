// The launcher's I/O against real pipes: line_reader (many lines per read, long lines, a last
// line without '\n') and answer_writer (sentinels per activation, answers held only while
// more requests are buffered and the activations are fast).
#include <doctest/doctest.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "answer_writer.hpp"
#include "line_reader.hpp"

namespace {

struct pipe_pair {
    int read_end = -1;
    int write_end = -1;
    pipe_pair() {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        read_end = fds[0];
        write_end = fds[1];
    }
    ~pipe_pair() {
        close_write();
        if (read_end >= 0) ::close(read_end);
    }
    void close_write() {
        if (write_end >= 0) ::close(write_end);
        write_end = -1;
    }
    void write(const std::string& text) const {
        REQUIRE(::write(write_end, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    }
    int pending() const {
        int bytes = 0;
        REQUIRE(::ioctl(read_end, FIONREAD, &bytes) == 0);
        return bytes;
    }
    std::string drain() const {
        std::string text(static_cast<size_t>(pending()), '\0');
        if (text.empty()) return text;
        REQUIRE(::read(read_end, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
        return text;
    }
};

const std::string SENTINEL = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX\n";

// A log pipe seen as the launcher sees stdout (stdio, fully buffered) or stderr (unbuffered).
struct log_pipe : pipe_pair {
    std::FILE* stream;
    explicit log_pipe(bool unbuffered) : stream(::fdopen(dup_write(), "w")) {
        REQUIRE(stream != nullptr);
        if (unbuffered) std::setvbuf(stream, nullptr, _IONBF, 0);
    }
    ~log_pipe() { std::fclose(stream); }
    int dup_write() {
        const int fd = ::dup(write_end);
        close_write();
        return fd;
    }
};

struct log_pipes {
    log_pipe out{false};
    log_pipe err{true};
};

}  // namespace

TEST_CASE("line_reader: several lines from one write, then a last line without a newline") {
    pipe_pair in;
    in.write("{\"a\":1}\n{\"b\":2}\n{\"c\"");
    actionloop::line_reader reader(in.read_end);
    std::string_view line;
    REQUIRE(reader.next(line));
    CHECK(line == "{\"a\":1}");
    CHECK(reader.has_line());  // the second is buffered: no read needed
    REQUIRE(reader.next(line));
    CHECK(line == "{\"b\":2}");
    CHECK_FALSE(reader.has_line());  // only a partial line is left
    in.write(":3}");
    in.close_write();
    REQUIRE(reader.next(line));
    CHECK(line == "{\"c\":3}");
    CHECK_FALSE(reader.next(line));
}

TEST_CASE("line_reader: a line longer than its buffer arrives whole") {
    pipe_pair in;
    const std::string big(200 * 1024, 'x');
    std::thread writer([&] {
        in.write("short\n" + big + "\nafter\n");
        in.close_write();
    });
    actionloop::line_reader reader(in.read_end);
    std::string_view line;
    REQUIRE(reader.next(line));
    CHECK(line == "short");
    REQUIRE(reader.next(line));
    CHECK(line.size() == big.size());
    CHECK(line == big);
    REQUIRE(reader.next(line));
    CHECK(line == "after");
    CHECK_FALSE(reader.next(line));
    writer.join();
}

TEST_CASE("answer_writer: not pipelined, every answer is written at once, with no sentinel") {
    pipe_pair out;
    log_pipes logs;
    auto& log_out = logs.out;
    auto& log_err = logs.err;
    actionloop::answer_writer writer(out.write_end, false, log_out.stream, log_err.stream);
    REQUIRE(writer.ack());
    CHECK(out.drain() == "{\"ok\":true}\n");
    std::string answer = "{\"n\":1}";
    writer.started();
    REQUIRE(writer.answer(answer, true));
    CHECK(out.drain() == "{\"n\":1}\n");
    CHECK(log_out.pending() == 0);
    CHECK(log_err.pending() == 0);
}

TEST_CASE("answer_writer: pipelined, the sentinels come per activation, before its answer") {
    pipe_pair out;
    log_pipes logs;
    auto& log_out = logs.out;
    auto& log_err = logs.err;
    actionloop::answer_writer writer(out.write_end, true, log_out.stream, log_err.stream);
    REQUIRE(writer.ack());
    CHECK(out.drain() == "{\"ok\":true,\"pipeline\":true}\n");
    // A fast activation with more requests buffered may be held; with none buffered, the
    // answers go out, held ones first, in one write. Holding depends on the activation being
    // fast (under 100 µs), which a busy machine may break once: a few tries.
    bool held = false;
    for (int attempt = 0; attempt < 20 && !held; ++attempt) {
        std::string first = "{\"n\":1}";
        writer.started();
        REQUIRE(writer.answer(first, true));
        held = out.pending() == 0;
        std::string second = "{\"n\":2}";
        writer.started();
        REQUIRE(writer.answer(second, false));
        CHECK(out.drain() == "{\"n\":1}\n{\"n\":2}\n");
        CHECK(log_out.drain() == SENTINEL + SENTINEL);
        CHECK(log_err.drain() == SENTINEL + SENTINEL);
    }
    CHECK(held);
}

// The answer of a fast activation held for the next one goes out within a few milliseconds
// however long that next one runs: before, it waited for the next one's end (issue 39), and a
// crash or a deadline kill of the next one lost it.
TEST_CASE("answer_writer: a held answer leaves within milliseconds while the next one runs") {
    pipe_pair out;
    log_pipes logs;
    auto& log_out = logs.out;
    auto& log_err = logs.err;
    actionloop::answer_writer writer(out.write_end, true, log_out.stream, log_err.stream);
    bool held = false;
    for (int attempt = 0; attempt < 20 && !held; ++attempt) {
        std::string first = "{\"n\":1}";
        writer.started();
        REQUIRE(writer.answer(first, true));
        held = out.pending() == 0;
        writer.started();  // the next activation runs (for as long as it takes)
        const auto start = std::chrono::steady_clock::now();
        while (out.pending() == 0 &&
               std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        CHECK(out.drain() == "{\"n\":1}\n");
        CHECK(log_out.drain() == SENTINEL);
        CHECK(log_err.drain() == SENTINEL);
    }
    CHECK(held);
}

TEST_CASE("answer_writer: a slow activation's answer is never held") {
    pipe_pair out;
    log_pipes logs;
    auto& log_out = logs.out;
    auto& log_err = logs.err;
    actionloop::answer_writer writer(out.write_end, true, log_out.stream, log_err.stream);
    std::string answer = "{\"slow\":true}";
    writer.started();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the activation's own work
    REQUIRE(writer.answer(answer, true));
    CHECK(out.drain() == "{\"slow\":true}\n");
    CHECK(log_out.drain() == SENTINEL);
    CHECK(log_err.drain() == SENTINEL);
}

TEST_CASE("answer_writer: pipelined without sentinels (Lambda mode), only the answers") {
    pipe_pair out;
    log_pipes logs;
    auto& log_out = logs.out;
    auto& log_err = logs.err;
    actionloop::answer_writer writer(out.write_end, true, log_out.stream, log_err.stream, false);
    REQUIRE(writer.ack());
    CHECK(out.drain() == "{\"ok\":true,\"pipeline\":true}\n");
    for (const std::string& text :
         {std::string("\"a string\""), std::string("42"), std::string("{\"n\":1}")}) {
        std::string answer = text;
        writer.started();
        REQUIRE(writer.answer(answer, false));
        CHECK(out.drain() == text + "\n");
    }
    CHECK(log_out.pending() == 0);
    CHECK(log_err.pending() == 0);
}

TEST_CASE("answer_writer: a batch's sentinels wait in stdio behind its lines, stderr buffered "
          "only while the batch lasts") {
    pipe_pair out;
    log_pipes logs;
    actionloop::answer_writer writer(out.write_end, true, logs.out.stream, logs.err.stream);
    bool held = false;
    for (int attempt = 0; attempt < 20 && !held; ++attempt) {
        std::fputs("one\n", logs.err.stream);  // unbuffered: out at once
        CHECK(logs.err.drain() == "one\n");
        std::string first = "{\"n\":1}";
        writer.started();
        REQUIRE(writer.answer(first, true));
        held = out.pending() == 0;
        if (held) {
            CHECK(logs.out.pending() == 0);
            CHECK(logs.err.pending() == 0);  // its sentinel waits in the buffer
        }
        writer.started();
        std::fputs("two\n", logs.out.stream);  // the next activation's lines, behind it
        std::fputs("two\n", logs.err.stream);
        std::string second = "{\"n\":2}";
        REQUIRE(writer.answer(second, false));
        CHECK(out.drain() == "{\"n\":1}\n{\"n\":2}\n");
        CHECK(logs.out.drain() == SENTINEL + "two\n" + SENTINEL);
        CHECK(logs.err.drain() == SENTINEL + "two\n" + SENTINEL);
        std::fputs("three\n", logs.err.stream);  // unbuffered again
        CHECK(logs.err.drain() == "three\n");
    }
    CHECK(held);
}
