// The action's logs with several workers (OW_WORKERS=4), through the real proxy: every worker
// has its own stdout and stderr pipes into the proxy's one stdout and stderr.
//   plain: lines are forwarded whole, so no line of one worker (nor a sentinel) falls inside
//          another's, and each activation's sentinels come after its own lines and before
//          its worker's next activation (docs/protocol.md, "Workers");
//   JSON:  every record of many overlapping activations names its own activation, with no
//          line split or merged (short, long, partial lines; a #! script and the C++ launcher).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::seconds;

namespace {

// `count` /runs at once, {"n": i}, with `extra(i)` as the request's other fields; all 200.
void run_together(
    const proxy_process& proxy, int count,
    const std::function<json(int)>& extra = [](int) { return json::object(); }) {
    std::vector<std::future<http_reply>> replies;
    replies.reserve(static_cast<size_t>(count));
    for (int n = 0; n < count; ++n) {
        replies.push_back(std::async(std::launch::async, [&proxy, &extra, n] {
            return proxy.run(json{{"n", n}}, extra(n), seconds(60));
        }));
    }
    for (auto& reply : replies) CHECK(reply.get().status == 200);
}

// Plain mode: worker k keeps a line open for k × 200 ms (printed in two parts around a
// sleep) after three whole lines, on both streams, so the other workers end activations (and
// the proxy writes their sentinels) while it is mid-line.
const char* const OPEN_LINES_SCRIPT = R"(#!/bin/bash
k=$OW_WORKER_INDEX
while read line; do
  [[ $line =~ \"n\":([0-9]+) ]]; n=${BASH_REMATCH[1]}
  for i in 1 2 3; do echo "w$k n$n line $i"; echo "w$k n$n err $i" >&2; done
  printf "w$k n$n open"; printf "w$k n$n open" >&2
  sleep 0.$((k * 2))
  echo " end"; echo " end" >&2
  echo "{\"k\":$k}" >&3
done
)";
constexpr size_t LINES_PER_RUN = 4;

struct line_of {
    int worker;
    int run;  // -1: a sentinel
};

// The stream's lines, each a whole line of OPEN_LINES_SCRIPT's (`kind`: "line" on stdout,
// "err" on stderr) or a sentinel; FAILs on anything else (a line cut or merged).
std::vector<line_of> parse_plain(const std::string& text, const char* kind) {
    const std::regex shape(std::string("w([0-3]) n([0-9]+) (") + kind + " [123]|open end)");
    std::vector<line_of> lines;
    for (const std::string& line : lines_of(text)) {
        std::smatch m;
        if (line == SENTINEL) {
            lines.push_back({-1, -1});
        } else if (std::regex_match(line, m, shape)) {
            lines.push_back({std::stoi(m[1]), std::stoi(m[2])});
        } else {
            FAIL("a line cut or merged: '" << line << "' in:\n" << text);
        }
    }
    return lines;
}

// For each run: where its lines are (CHECKs: 4, all from one worker).
std::map<int, std::vector<size_t>> places_of(const std::vector<line_of>& lines) {
    std::map<int, std::vector<size_t>> at;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].run >= 0) at[lines[i].run].push_back(i);
    }
    for (const auto& entry : at) {
        CHECK(entry.second.size() == LINES_PER_RUN);
        for (size_t i : entry.second) CHECK(lines[i].worker == lines[entry.second.front()].worker);
    }
    return at;
}

// For each run: the index of the first line of its worker's next run (max: none). CHECKs that
// a worker's runs do not overlap.
std::map<int, size_t> deadlines_of(const std::vector<line_of>& lines,
                                   const std::map<int, std::vector<size_t>>& at) {
    std::map<int, size_t> deadline;
    std::map<int, int> last_run_of;  // worker -> its run seen last
    for (size_t i = 0; i < lines.size(); ++i) {
        const int run = lines[i].run;
        if (run < 0 || at.at(run).front() != i) continue;  // not a run's first line
        deadline[run] = std::numeric_limits<size_t>::max();
        const auto before = last_run_of.find(lines[i].worker);
        if (before != last_run_of.end()) {
            CHECK_MESSAGE(at.at(before->second).back() < i, "runs of one worker overlap");
            deadline[before->second] = i;
        }
        last_run_of[lines[i].worker] = run;
    }
    return deadline;
}

// Checks one stream of OPEN_LINES_SCRIPT's activations: every line whole, each run's 4 lines
// from one worker, a worker's runs one after the other, and the sentinels placeable: each
// after the last line of an activation that has not had one yet and before its worker's next
// activation begins (sentinels look alike, so they are matched earliest deadline first, which
// finds a matching whenever one exists).
void check_plain_stream(const std::string& text, const char* kind, int runs) {
    const std::vector<line_of> lines = parse_plain(text, kind);
    const std::map<int, std::vector<size_t>> at = places_of(lines);
    REQUIRE(at.size() == static_cast<size_t>(runs));
    const std::map<int, size_t> deadline = deadlines_of(lines, at);
    std::map<int, bool> ended;  // runs whose last line came and that have no sentinel yet
    int sentinels = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
        for (const auto& entry : ended) {
            CHECK_MESSAGE(deadline.at(entry.first) != i, "a worker went on before its sentinel:\n"
                                                             << text);
        }
        if (lines[i].run >= 0) {
            if (at.at(lines[i].run).back() == i) ended[lines[i].run] = true;
            continue;
        }
        ++sentinels;
        REQUIRE_MESSAGE(!ended.empty(), "a sentinel before any activation's lines:\n" << text);
        ended.erase(std::min_element(ended.begin(), ended.end(), [&](auto& a, auto& b) {
            return deadline.at(a.first) < deadline.at(b.first);
        }));
    }
    CHECK(sentinels == runs);
    CHECK(ended.empty());
}

}  // namespace

TEST_CASE(
    "logs with 4 workers (plain): whole lines only, each activation's sentinels after its own "
    "lines and before its worker's next activation") {
    proxy_process proxy(with_env({{"OW_WORKERS", "4"}}));
    REQUIRE(proxy.init(OPEN_LINES_SCRIPT).status == 200);
    constexpr int RUNS = 16;
    run_together(proxy, RUNS);
    REQUIRE(proxy.wait_for_sentinels(RUNS, seconds(5)));
    check_plain_stream(proxy.stdout_text(), "line", RUNS);
    check_plain_stream(proxy.stderr_text(), "err", RUNS);
}

TEST_CASE(
    "logs with 4 workers (plain): a line longer than OW_LOG_LINE_BYTES goes on in ended pieces, "
    "and the proxy says so") {
    proxy_process proxy(with_env({{"OW_WORKERS", "4"}, {"OW_LOG_LINE_BYTES", "1000"}}));
    const std::string script = "#!/bin/bash\nwhile read line; do\n"
                               "  printf 'x%.0s' {1..2500}; echo\n"
                               "  echo '{}' >&3\ndone\n";
    REQUIRE(proxy.init(script).status == 200);
    CHECK(proxy.run(json::object()).status == 200);
    REQUIRE(proxy.wait_for_sentinels(1, seconds(5)));
    const std::string x1000(1000, 'x');
    CHECK(
        contains(proxy.stdout_text(), x1000 + "\n" + x1000 + "\n" + std::string(500, 'x') + "\n"));
    CHECK(contains(proxy.stdout_text(),
                   "1 line(s) (2500 bytes) of the action's stdout passed OW_LOG_LINE_BYTES "
                   "(1000) and went on in pieces of that size"));
}

TEST_CASE("logs with 4 workers (plain): a crash is said in the crashed worker's stream, after "
          "its activation's lines and before that worker's next activation") {
    proxy_process proxy(with_env({{"OW_WORKERS", "4"}}));
    const std::string script = "#!/bin/bash\nk=$OW_WORKER_INDEX\nwhile read line; do\n"
                               "  [[ $line =~ \\\"n\\\":([0-9]+) ]]; n=${BASH_REMATCH[1]}\n"
                               "  for i in 1 2 3; do echo \"w$k n$n err $i\" >&2; done\n"
                               "  if [ \"$n\" = 1 ]; then\n"
                               "    seq -f \"w$k n$n err %g\" 4 30000 >&2; kill -SEGV $$\n"
                               "  fi\n"
                               "  sleep 0.1\n"
                               "  echo '{}' >&3\ndone\n";
    REQUIRE(proxy.init(script).status == 200);
    constexpr int RUNS = 12;
    std::vector<std::future<int>> statuses;
    statuses.reserve(RUNS);
    for (int n = 0; n < RUNS; ++n) {
        statuses.push_back(std::async(std::launch::async, [&proxy, n] {
            return proxy.run(json{{"n", n}}, json::object(), seconds(60)).status;
        }));
    }
    for (int n = 0; n < RUNS; ++n) CHECK(statuses[n].get() == (n == 1 ? 400 : 200));
    REQUIRE(proxy.wait_for_sentinels(RUNS, seconds(5)));
    const std::vector<std::string> lines = lines_of(proxy.stderr_text());
    const std::regex shape("w([0-3]) n([0-9]+) err [0-9]+");
    const std::regex crash(".*\\[warning\\] worker ([0-3]): the action exited during the "
                           "activation \\(killed by signal 11 \\(SIGSEGV\\)\\)");
    const std::regex restart(".*\\[warning\\] worker ([0-3]): the action process is gone "
                             "\\(killed by signal 11 \\(SIGSEGV\\)\\); starting it again.*");
    int crashed_worker = -1;
    size_t crash_at = 0;
    size_t last_of_run1 = 0;
    std::vector<std::pair<size_t, int>> worker_lines;  // (index, worker) of every action line
    for (size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (std::regex_match(lines[i], m, shape)) {
            worker_lines.emplace_back(i, std::stoi(m[1]));
            if (m[2] == "1") last_of_run1 = i;
        } else if (std::regex_match(lines[i], m, crash)) {
            CHECK(crashed_worker == -1);  // said once
            crashed_worker = std::stoi(m[1]);
            crash_at = i;
        } else if (std::regex_match(lines[i], m, restart)) {  // after the crash, its worker's
            CHECK(crashed_worker == std::stoi(m[1]));
            CHECK(crash_at < i);
        } else {
            CHECK_MESSAGE(lines[i] == SENTINEL, "a line cut or merged: " << lines[i]);
        }
    }
    REQUIRE_MESSAGE(crashed_worker >= 0, proxy.stderr_text());
    CHECK(crash_at > last_of_run1);
    // The crashed worker's lines: its activation's before the crash line, its next after.
    const auto misplaced = std::count_if(worker_lines.begin(), worker_lines.end(), [&](auto& at) {
        return at.second == crashed_worker && (at.first < crash_at) != (at.first <= last_of_run1);
    });
    CHECK(misplaced == 0);
}

// --- OW_LOG_FORMAT=json ---

namespace {

// Each activation prints on both streams: a short line, a long one (3000 bytes), and a line
// in two parts around a short sleep (partial until then), each starting with "n=N".
const char* const JSON_SCRIPT = R"(#!/bin/bash
long=$(printf 'y%.0s' {1..3000})
while read line; do
  [[ $line =~ \"n\":([0-9]+) ]]; n=${BASH_REMATCH[1]}
  echo "n=$n short"; echo "n=$n short" >&2
  echo "n=$n long $long"; echo "n=$n long $long" >&2
  printf "n=$n part"; printf "n=$n part" >&2
  sleep 0.0$((n % 4))
  echo "ial"; echo "ial" >&2
  echo "{\"n\":$n}" >&3
done
)";

// The records of one stream: every non-sentinel line a record; CHECKs each action record's
// activationId against the "n=N" its message starts with; returns the messages by N.
std::map<int, std::vector<std::string>> attributed(const std::string& text, const char* stream) {
    std::map<int, std::vector<std::string>> by_run;
    for (const std::string& line : lines_of(text)) {
        if (line == SENTINEL) continue;
        const json record = json::parse(line, nullptr, false);
        REQUIRE_MESSAGE(record.is_object(), "not a record: " << line);
        if (record.value("stream", "") == "proxy") continue;
        CHECK(record["stream"] == stream);
        const std::string message = record.value("message", "");
        const size_t space = message.find(' ');
        REQUIRE_MESSAGE(message.rfind("n=", 0) == 0, line);
        const std::string n = message.substr(2, space - 2);
        CHECK(record["activationId"] == "act-" + n);
        CHECK(record["transactionId"] == "tx-" + n);
        by_run[std::stoi(n)].push_back(message);
    }
    return by_run;
}

json context_of(int n) {
    return json{{"activation_id", "act-" + std::to_string(n)},
                {"transaction_id", "tx-" + std::to_string(n)},
                {"action_name", "/guest/workers"}};
}

}  // namespace

TEST_CASE(
    "logs with 4 workers (JSON): every line of 48 overlapping activations names its own, none "
    "split or merged") {
    proxy_process proxy(with_env({{"OW_WORKERS", "4"}, {"OW_LOG_FORMAT", "json"}}));
    REQUIRE(proxy.init(JSON_SCRIPT).status == 200);
    constexpr int RUNS = 48;
    run_together(proxy, RUNS, context_of);
    REQUIRE(proxy.wait_for_sentinels(RUNS, seconds(5)));
    const std::string long_part(3000, 'y');
    for (const char* stream : {"stdout", "stderr"}) {
        CAPTURE(stream);
        const std::string text =
            std::string(stream) == "stdout" ? proxy.stdout_text() : proxy.stderr_text();
        CHECK(sentinel_count(text) == RUNS);
        const auto by_run = attributed(text, stream);
        REQUIRE(by_run.size() == RUNS);
        for (const auto& [n, messages] : by_run) {
            const std::string tag = "n=" + std::to_string(n);
            std::string long_line = tag + " long ";
            long_line += long_part;
            const std::vector<std::string> expected = {tag + " short", long_line, tag + " partial"};
            CHECK(messages == expected);
        }
    }
}

TEST_CASE("logs with 4 workers (JSON): the C++ launcher's pipelined activations, each line its own "
          "activation's") {
    proxy_process proxy(cpp_runtime({{"OW_WORKERS", "4"}, {"OW_LOG_FORMAT", "json"}}));
    REQUIRE(proxy.init(fixture_text("cpp/pipeline.cpp")).status == 200);
    constexpr int RUNS = 64;
    run_together(proxy, RUNS, context_of);
    REQUIRE(proxy.wait_for_sentinels(RUNS, seconds(5)));
    for (const char* stream : {"stdout", "stderr"}) {
        CAPTURE(stream);
        const std::string text =
            std::string(stream) == "stdout" ? proxy.stdout_text() : proxy.stderr_text();
        CHECK(sentinel_count(text) == RUNS);
        const auto by_run = attributed(text, stream);
        REQUIRE(by_run.size() == RUNS);
        for (const auto& [n, messages] : by_run) {
            CHECK(messages == std::vector<std::string>{"n=" + std::to_string(n)});
        }
    }
}
