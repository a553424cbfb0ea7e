// commit_args_test.cpp — the commit script's arguments (redis/commit_args.hpp), exactly, with
// no server: a first-seen device, an update with an id and a due time, a notification into the
// outbox, a checked bridge, and a commit of 2,500 first-seen devices (every key passed: the
// script itself writes the creations log in entries of at most 1,000 keys, which
// redis_commit_test.cpp checks against a real redis-server).
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "redis/commit_args.hpp"

using namespace alerts;

namespace {

using strings = std::vector<std::string>;

constexpr double NONE = std::numeric_limits<double>::infinity();

// The bulk strings of `resp` ("$<len>\r\n<text>\r\n" after each other), in order; fails the
// test on anything else.
strings bulk_strings(const std::string& resp) {
    strings out;
    std::size_t at = 0;
    while (at < resp.size()) {
        REQUIRE(resp[at] == '$');
        const std::size_t eol = resp.find("\r\n", at);
        REQUIRE(eol != std::string::npos);
        const std::size_t len = std::stoul(resp.substr(at + 1, eol - at - 1));
        REQUIRE(eol + 2 + len + 2 <= resp.size());
        out.push_back(resp.substr(eol + 2, len));
        REQUIRE(resp.compare(eol + 2 + len, 2, "\r\n") == 0);
        at = eol + 2 + len + 2;
    }
    return out;
}

commit_settings settings() {
    commit_settings s;
    s.prefix = "alerts:";
    s.due_key = "alerts:due";
    s.devices_key = "alerts:devices";
    s.log_key = "alerts:created";
    s.outbox_key = "alerts:outbox";
    s.id_ttl = 600;
    s.log_length = 10000;
    s.outbox_maxlen = 1000000;
    s.outbox_trim_above = 1000;
    return s;
}

// The arguments as the script receives them, checking the count the builder returns.
strings args_of(const commit_contents& contents, const commit_settings& s = settings()) {
    std::string resp = "untouched";  // appended to, never replaced
    const std::size_t count = append_commit_args(resp, s, contents);
    REQUIRE(resp.compare(0, 9, "untouched") == 0);
    strings args = bulk_strings(resp.substr(9));
    CHECK(args.size() == count);
    return args;
}

strings shared_keys() {
    return {"alerts:due", "alerts:devices", "alerts:created", "alerts:outbox"};
}

strings concat(std::initializer_list<strings> parts) {
    strings out;
    for (const strings& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

}  // namespace

TEST_CASE("commit args: a first-seen device (no record as read, no due time)") {
    commit_contents c;
    c.writes.push_back({"acme", "cam1", "", "2 f 0 nan 100 e1 nan", NONE});
    CHECK(args_of(c) == concat({{"5"},
                                shared_keys(),
                                {"alerts:d:4:acme:cam1"},
                                {"1", "600", "10000", "0", "1000000", "1000", "0"},
                                {"", "2 f 0 nan 100 e1 nan", ""}}));
}

TEST_CASE("commit args: an update compares the record as read, sets its due time, keeps its id") {
    commit_contents c;
    c.writes.push_back({"acme", "cam1", "2 n 0 nan 90 e0 nan", "2 f 0 160.25 100 e1 nan", 160.25});
    c.ids.push_back(0x0123456789abcdefULL);
    CHECK(args_of(c) == concat({{"6"},
                                shared_keys(),
                                {"alerts:d:4:acme:cam1", "alerts:i:0123456789abcdef"},
                                {"1", "600", "10000", "0", "1000000", "1000", "0"},
                                {"2 n 0 nan 90 e0 nan", "2 f 0 160.25 100 e1 nan", "160.25"}}));
}

TEST_CASE("commit args: a notification goes into the outbox as its key and its JSON") {
    commit_contents c;
    c.writes.push_back({"acme", "cam1", "", "2 n 0 nan 100 e1 100", NONE});
    c.notes.push_back({"k1", R"({"dedupKey":"k1"})"});
    commit_settings s = settings();
    s.outbox_maxlen = 50;
    s.outbox_trim_above = 7;
    CHECK(args_of(c, s) == concat({{"5"},
                                   shared_keys(),
                                   {"alerts:d:4:acme:cam1"},
                                   {"1", "600", "10000", "1", "50", "7", "0"},
                                   {"", "2 n 0 nan 100 e1 100", ""},
                                   {"k1", R"({"dedupKey":"k1"})"}}));
}

TEST_CASE("commit args: a checked bridge is compared and its due time set, not written") {
    commit_contents c;
    c.writes.push_back({"acme", "cam1", "2 n 0 nan 90 e0 nan", "2 f 0 130 100 e1 nan", 130});
    c.checks.push_back({"acme", "br", "2 f 0 125 95 e9 nan", 125});
    c.checks.push_back({"acme", "cam2", "", NONE});
    CHECK(args_of(c) ==
          concat({{"7"},
                  shared_keys(),
                  {"alerts:d:4:acme:cam1", "alerts:d:4:acme:br", "alerts:d:4:acme:cam2"},
                  {"1", "600", "10000", "0", "1000000", "1000", "2"},
                  {"2 n 0 nan 90 e0 nan", "2 f 0 130 100 e1 nan", "130"},
                  {"2 f 0 125 95 e9 nan", "125"},
                  {"", ""}}));
}

TEST_CASE("commit args: ids alone (effective events of unchanged devices) make a commit") {
    commit_contents c;
    c.ids = {1, 0xffffffffffffffffULL};
    CHECK(args_of(c) == concat({{"6"},
                                shared_keys(),
                                {"alerts:i:0000000000000001", "alerts:i:ffffffffffffffff"},
                                {"0", "600", "10000", "0", "1000000", "1000", "0"}}));
}

TEST_CASE("commit args: keys keep any account and device apart (the account's length)") {
    commit_contents c;
    c.writes.push_back({"a:b", "c", "", "r1", -1.5});
    c.writes.push_back({"a", "b:c", "", "r2", 0});
    const strings args = args_of(c);
    REQUIRE(args.size() == 1 + 6 + 7 + 6);
    CHECK(args[5] == "alerts:d:3:a:b:c");
    CHECK(args[6] == "alerts:d:1:a:b:c");
    CHECK(args[14] == "");
    CHECK(args[16] == "-1.5");
    CHECK(args[19] == "0");
}

TEST_CASE("commit args: 2,500 first-seen devices pass every key, in order, in one command") {
    std::vector<std::string> names;
    names.reserve(2500);
    for (int i = 0; i < 2500; ++i) names.push_back("cam" + std::to_string(1000 + i));
    commit_contents c;
    c.writes.reserve(names.size());
    for (const std::string& n : names) c.writes.push_back({"site", n, "", "r", NONE});
    const strings args = args_of(c);
    REQUIRE(args.size() == 1 + 4 + 2500 + 7 + 3 * 2500);
    CHECK(args[0] == "2504");
    CHECK(args[5] == "alerts:d:4:site:cam1000");
    CHECK(args[4 + 2500] == "alerts:d:4:site:cam3499");
    CHECK(args[5 + 2500] == "2500");
    for (std::size_t i = 0; i < 2500; ++i) {
        CHECK(args[5 + i] == "alerts:d:4:site:" + names[i]);
        CHECK(args[5 + 2500 + 7 + 3 * i] == "");
        CHECK(args[5 + 2500 + 7 + 3 * i + 1] == "r");
        CHECK(args[5 + 2500 + 7 + 3 * i + 2] == "");
    }
}
