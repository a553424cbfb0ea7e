// Log boundaries when the launcher batches pipelined activations (issue 39: the sentinels of a
// batch leave in one write per stream): every line an activation writes through printf,
// std::cout, std::cerr, std::clog or spdlog lies between its own sentinels on its stream, in
// plain and JSON log modes, also when activations of the batch crash or miss their deadline;
// a line written with raw write(2) lands in its own segment or an earlier one of the same
// batch, never a later one, and exactly in its own when not pipelined.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <future>
#include <map>
#include <set>

#include "expectations.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr auto NO_HANG = seconds(60);
const std::string SENTINEL_LINE = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX";

const std::vector<std::string> OUT_WAYS = {"printf", "cout", "spdlog"};
const std::vector<std::string> ERR_WAYS = {"fprintf", "cerr", "clog", "spdlog"};

// The lines of each activation's segment, in order (the proxy's warnings left out).
std::vector<std::vector<std::string>> segments_of(const std::string& stream) {
    std::vector<std::vector<std::string>> segments(1);
    for (const std::string& line : lines_of(stream)) {
        if (line == SENTINEL_LINE) {
            segments.emplace_back();
        } else if (line.find(" [warning] ") == std::string::npos) {
            segments.back().push_back(line);
        }
    }
    CHECK_MESSAGE(segments.back().empty(), "lines after the last sentinel");
    segments.pop_back();
    return segments;
}

// "n=12 cout" -> {12, "cout"}; {-1000, ""} for any other line.
std::pair<int, std::string> parse_line(const std::string& line) {
    if (line.rfind("n=", 0) != 0) return {-1000, ""};
    const size_t space = line.find(' ');
    if (space == std::string::npos) return {-1000, ""};
    return {std::stoi(line.substr(2, space - 2)), line.substr(space + 1)};
}

struct stream_check {
    std::set<int> seen;           // the activations whose lines were found
    std::map<int, size_t> index;  // each activation's segment
};

// Each segment holds exactly one activation's lines, one per way (and its raw line when
// `raw_exact`); a crashed activation's segment may end with the launcher's report. Raw lines
// are checked afterwards (check_raw) against the segment of their activation. The activations
// in `partial` may lack lines (stdout of a killed one: what stdio still buffered).
stream_check check_segments(const std::string& stream, const std::vector<std::string>& ways,
                            bool raw_exact, std::vector<std::pair<int, size_t>>& raw_lines,
                            const std::set<int>& partial = {}) {
    stream_check result;
    const auto segments = segments_of(stream);
    for (size_t i = 0; i < segments.size(); ++i) {
        int owner = -1000;
        std::multiset<std::string> found;
        bool report = false;
        for (const std::string& line : segments[i]) {
            if (line.rfind("actionloop: the action crashed: ", 0) == 0) report = true;
            if (report) continue;  // the report's lines: the backtrace
            const auto [n, way] = parse_line(line);
            CHECK_MESSAGE(n != -1000, "not an action line: " << line);
            if (way == "raw" && !raw_exact) {
                raw_lines.emplace_back(n, i);
                continue;
            }
            if (owner == -1000) owner = n;
            CHECK_MESSAGE(n == owner, "segment " << i << " mixes n=" << owner << " and " << line);
            found.insert(way);
        }
        if (owner == -1000) {
            CHECK_MESSAGE(report, "segment " << i << " without lines");
            continue;
        }
        std::multiset<std::string> expected(ways.begin(), ways.end());
        if (raw_exact && found.count("raw") == 1) expected.insert("raw");
        if (partial.count(owner) == 1) {
            CHECK_MESSAGE(
                std::includes(expected.begin(), expected.end(), found.begin(), found.end()),
                "segment " << i << " of n=" << owner);
        } else {
            CHECK_MESSAGE(found == expected, "segment " << i << " of n=" << owner);
        }
        CHECK_MESSAGE(result.seen.insert(owner).second, "n=" << owner << " in two segments");
        result.index[owner] = i;
    }
    return result;
}

// A raw line in the segment of its activation or of an earlier one.
void check_raw(const std::vector<std::pair<int, size_t>>& raw_lines, const stream_check& check) {
    for (const auto& [n, segment] : raw_lines) {
        const auto own = check.index.find(n);
        REQUIRE_MESSAGE(own != check.index.end(), "raw line of n=" << n << " without its others");
        CHECK_MESSAGE(segment <= own->second, "n=" << n << " raw in a later segment");
    }
}

// `count` concurrent runs of {"n": first + i} merged with extra(i).
std::vector<std::future<http_reply>> run_many(const proxy_process& proxy, int first, int count,
                                              const std::function<json(int)>& extra) {
    std::vector<std::future<http_reply>> replies;
    for (int i = 0; i < count; ++i) {
        json value = extra(first + i);
        value["n"] = first + i;
        json context =
            value.contains("deadline") ? json{{"deadline", value["deadline"]}} : json::object();
        value.erase("deadline");
        replies.push_back(std::async(std::launch::async, [&proxy, value, context] {
            return proxy.run(value, context, NO_HANG);
        }));
    }
    return replies;
}

// The fixture as the build compiled it (tests/CMakeLists.txt): the same launcher, one g++.
const std::string& log_ways_code() {
    static const std::string code = built_zip_code("tests/fixtures/log_ways.zip");
    return code;
}

void init_log_ways(proxy_process& proxy) { REQUIRE(proxy.init(log_ways_code()).status == 200); }

}  // namespace

TEST_CASE("log batches: 256 pipelined runs logging every way, each line between its own "
          "sentinels") {
    proxy_process proxy(cpp_runtime());
    init_log_ways(proxy);
    constexpr int RUNS = 256;
    for (int wave = 0; wave < RUNS; wave += 64) {
        auto replies = run_many(proxy, wave, 64, [](int) { return json::object(); });
        for (size_t i = 0; i < replies.size(); ++i) {
            const http_reply reply = replies[i].get();
            CHECK(reply.status == 200);
            CHECK(json_of(reply).value("n", -1) == wave + static_cast<int>(i));
        }
    }
    proxy.check_streams(RUNS);
    std::vector<std::pair<int, size_t>> none;
    CHECK(check_segments(proxy.stdout_text(), OUT_WAYS, true, none).seen.size() == RUNS);
    CHECK(check_segments(proxy.stderr_text(), ERR_WAYS, true, none).seen.size() == RUNS);
}

TEST_CASE("log batches: crashes and missed deadlines mid-batch cost only their own runs") {
    proxy_process proxy(cpp_runtime());
    init_log_ways(proxy);
    constexpr int RUNS = 96;
    std::set<int> crashing;
    for (int n = 5; n < RUNS; n += 23) crashing.insert(n);
    const int late = 50;  // misses its deadline, with runs queued behind it
    const long long deadline = epoch_millis() + 8000;
    auto replies = run_many(proxy, 0, RUNS, [&](int n) {
        if (crashing.count(n)) return json{{"crash", true}};
        if (n == late) return json{{"sleep_ms", 30000}, {"deadline", std::to_string(deadline)}};
        return json::object();
    });
    for (int n = 0; n < RUNS; ++n) {
        CAPTURE(n);
        const http_reply reply = replies[static_cast<size_t>(n)].get();
        if (crashing.count(n)) {
            CHECK_ERROR_REPLY(reply, 400, "command exited (killed by signal 6, SIGABRT)");
        } else if (n == late) {
            CHECK_ERROR_REPLY(reply, 502,
                              "The action did not answer before its deadline and was stopped.");
        } else {
            CHECK_MESSAGE(reply.status == 200, reply.body);
            CHECK(json_of(reply).value("n", -1) == n);
        }
    }
    proxy.check_streams(RUNS);
    std::vector<std::pair<int, size_t>> none;
    // The killed one's stdout: printf and std::cout without a flush stay in stdio's buffer (C
    // buffers a pipe) and die with the process; what it wrote on stderr, unbuffered or held in
    // a batch for at most milliseconds, is there.
    const stream_check out = check_segments(proxy.stdout_text(), OUT_WAYS, true, none, {late});
    CHECK(out.seen.size() + (out.seen.count(late) == 0 ? 1 : 0) == RUNS);
    CHECK(check_segments(proxy.stderr_text(), ERR_WAYS, true, none).seen.size() == RUNS);
    CHECK(proxy.children().size() == 1);
}

TEST_CASE("log batches: OW_LOG_FORMAT=json tags every way's lines with their own activation") {
    proxy_process proxy(cpp_runtime({{"OW_LOG_FORMAT", "json"}}));
    init_log_ways(proxy);
    constexpr int RUNS = 128;
    std::vector<std::future<http_reply>> replies;
    for (int n = 0; n < RUNS; ++n) {
        replies.push_back(std::async(std::launch::async, [&proxy, n] {
            return proxy.run(json{{"n", n}}, json{{"activation_id", "act-" + std::to_string(n)}},
                             NO_HANG);
        }));
    }
    for (auto& reply : replies) CHECK(reply.get().status == 200);
    proxy.wait_for_sentinels(RUNS, seconds(5));
    for (const bool out : {true, false}) {
        std::map<int, std::multiset<std::string>> ways;
        for (const std::string& line : lines_of(out ? proxy.stdout_text() : proxy.stderr_text())) {
            if (line == SENTINEL_LINE) continue;
            const json record = json::parse(line, nullptr, false);
            REQUIRE_MESSAGE(record.is_object(), line);
            const auto [n, way] = parse_line(record.value("message", ""));
            REQUIRE_MESSAGE(n >= 0, line);
            CHECK_MESSAGE(record.value("activationId", "") == "act-" + std::to_string(n), line);
            ways[n].insert(way);
        }
        const auto& expected_ways = out ? OUT_WAYS : ERR_WAYS;
        const std::multiset<std::string> expected(expected_ways.begin(), expected_ways.end());
        CHECK(ways.size() == RUNS);
        for (const auto& [n, found] : ways) CHECK_MESSAGE(found == expected, "n=" << n);
    }
}

TEST_CASE("log batches: a raw write(2) lands in its own segment or an earlier one, never a later "
          "one, and exactly in its own when not pipelined") {
    for (const bool pipelined : {true, false}) {
        CAPTURE(pipelined);
        proxy_process proxy(cpp_runtime({{"OW_PIPELINE", pipelined ? "1" : "0"}}));
        init_log_ways(proxy);
        constexpr int RUNS = 128;
        auto replies = run_many(proxy, 0, RUNS, [](int) { return json{{"raw", true}}; });
        for (auto& reply : replies) CHECK(reply.get().status == 200);
        proxy.check_streams(RUNS);
        for (const bool out : {true, false}) {
            std::vector<std::pair<int, size_t>> raw_lines;
            const stream_check check =
                check_segments(out ? proxy.stdout_text() : proxy.stderr_text(),
                               out ? OUT_WAYS : ERR_WAYS, !pipelined, raw_lines);
            CHECK(check.seen.size() == RUNS);
            if (pipelined) {
                CHECK(raw_lines.size() == RUNS);
                check_raw(raw_lines, check);
            }
        }
    }
}
