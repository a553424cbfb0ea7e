// whole_lines (engine/whole_lines.hpp): plain log mode with more than one worker forwards an
// action's output in whole lines only, so lines of different workers never meet mid-line.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "engine/whole_lines.hpp"

using namespace actionloop;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
        lines.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    if (start != text.size()) lines.push_back(text.substr(start) + "<open>");
    return lines;
}

}  // namespace

TEST_CASE("whole_lines: complete lines go on, the open line is held until its newline") {
    whole_lines lines(64);
    std::string out;
    lines.feed("one\ntw", out);
    CHECK(out == "one\n");
    CHECK(lines.holding());
    out.clear();
    lines.feed("o and", out);
    CHECK(out.empty());
    lines.feed(" more\nthree\nfo", out);
    CHECK(out == "two and more\nthree\n");
    CHECK(lines.holding());
    out.clear();
    lines.feed("ur\n", out);
    CHECK(out == "four\n");
    CHECK_FALSE(lines.holding());
}

TEST_CASE("whole_lines: end_line ends the held line with a newline, and adds nothing else") {
    whole_lines lines(64);
    std::string out;
    lines.end_line(out);
    CHECK(out.empty());
    lines.feed("a prompt: ", out);
    lines.end_line(out);
    CHECK(out == "a prompt: \n");
    CHECK_FALSE(lines.holding());
    lines.end_line(out);
    CHECK(out == "a prompt: \n");
}

TEST_CASE("whole_lines: a line past the bound is forwarded in pieces, each ended, and counted") {
    whole_lines lines(8);
    std::string out;
    lines.feed("12345678\n", out);  // exactly the bound: one line, not broken
    CHECK(out == "12345678\n");
    CHECK(lines.take_broken().lines == 0);
    out.clear();
    lines.feed("abcdefghijklmnopqrst\nx\n", out);
    CHECK(out == "abcdefgh\nijklmnop\nqrst\nx\n");
    const whole_lines::broken said = lines.take_broken();
    CHECK(said.lines == 1);
    CHECK(said.bytes == 20);
    CHECK(lines.take_broken().lines == 0);  // taken once
}

TEST_CASE("whole_lines: what is held never passes the bound, however small the pieces") {
    whole_lines lines(5);
    std::string out;
    const std::string text(23, 'z');
    for (char c : text) lines.feed(std::string(1, c), out);
    CHECK(out == "zzzzz\nzzzzz\nzzzzz\nzzzzz\n");
    CHECK(lines.held_bytes() == 3);
    CHECK(lines.take_broken().lines == 0);  // the line has not ended yet
    lines.end_line(out);
    CHECK(out == "zzzzz\nzzzzz\nzzzzz\nzzzzz\nzzz\n");
    const whole_lines::broken said = lines.take_broken();
    CHECK(said.lines == 1);
    CHECK(said.bytes == 23);
}

TEST_CASE("whole_lines: two workers' chunks cut anywhere, into one fd, never meet mid-line") {
    // Each worker writes lines like "w0-17 ....." in chunks cut at arbitrary points (as a
    // pipe's reads cut them); the fd gets each chunk's forwarded text whole, in turn.
    std::string fd;
    whole_lines worker[2] = {whole_lines(1024), whole_lines(1024)};
    std::string text[2];
    std::set<std::string> expected;
    for (int w = 0; w < 2; ++w) {
        for (int i = 0; i < 200; ++i) {
            std::string line = "w" + std::to_string(w) + "-" + std::to_string(i) + " " +
                               std::string(static_cast<size_t>(i % 37), static_cast<char>('a' + w));
            expected.insert(line);
            text[w] += line + "\n";
        }
    }
    size_t at[2] = {0, 0};
    size_t cut = 1;
    while (at[0] < text[0].size() || at[1] < text[1].size()) {
        for (int w = 0; w < 2; ++w) {
            cut = cut * 7 % 61 + 1;  // 1 … 61 bytes: mid-line as often as not
            const size_t n = std::min(cut, text[w].size() - at[w]);
            std::string out;
            worker[w].feed(std::string_view(text[w]).substr(at[w], n), out);
            fd += out;
            at[w] += n;
        }
    }
    const std::vector<std::string> got = lines_of(fd);
    CHECK(got.size() == expected.size());
    CHECK(std::set<std::string>(got.begin(), got.end()) == expected);
}
