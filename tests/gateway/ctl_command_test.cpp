// alertctl's pure part (actions/alerts/ctl/ctl_command): command lines to the console's
// requests, the bad ones refused with why, durations and times, and the text of the answers.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "ctl/ctl_command.hpp"

using alerts::ctl::ctl_invocation;
using alerts::ctl::parse_command;
using alerts::ctl::render;
using alerts::ctl::usage_error;
using json = nlohmann::json;

namespace {
constexpr double NOW = 1796400000;
ctl_invocation parse(std::vector<std::string> args) { return parse_command(args, {}, NOW); }
}  // namespace

TEST_CASE("alertctl: each command is the console request it names") {
    auto one = [](std::vector<std::string> args) {
        const ctl_invocation c = parse(std::move(args));
        REQUIRE(c.requests.size() == 1);
        return c.requests[0];
    };
    auto add = one({"silence", "add", "--account", "acme", "--device", "cam 1", "--duration", "30m",
                    "--comment", "re-cabling", "--by", "ann"});
    CHECK(add.method == "POST");
    CHECK(add.path == "/api/v1/silences");
    CHECK(add.write);
    CHECK(json::parse(add.body) == json{{"matchers", {{"account", "acme"}, {"device", "cam 1"}}},
                                        {"duration", 1800},
                                        {"comment", "re-cabling"},
                                        {"createdBy", "ann"}});
    auto until = one({"silence", "add", "--account=a", "--device=d", "--until-resolved", "--start",
                      "2026-12-05T10:00Z"});
    CHECK(json::parse(until.body)["untilResolved"] == true);
    CHECK(json::parse(until.body)["startsAt"] == 1796464800);
    CHECK(one({"silence", "expire", "ab12", "--by", "ann"}).path == "/api/v1/silences/ab12");
    CHECK(one({"silence", "list"}).method == "GET");
    CHECK(one({"state", "--account", "a&b"}).path == "/api/v1/state?account=a%26b");
    CHECK(one({"explain", "--account", "a", "--device", "d", "--from", "100", "--to", "200.5"})
              .path == "/api/v1/explain?account=a&device=d&from=100.000&to=200.500");
    CHECK(one({"deadletters", "list", "--count", "5"}).path == "/api/v1/deadletters?count=5");
    CHECK(one({"deadletters", "purge", "--all"}).path == "/api/v1/deadletters?all=1");
    const ctl_invocation replays =
        parse({"--url", "http://h:1/", "deadletters", "replay", "1-0", "2-0"});
    REQUIRE(replays.requests.size() == 2);
    CHECK(replays.url == "http://h:1");
    CHECK(replays.requests[1].path == "/api/v1/deadletters/2-0/replay");
}

TEST_CASE("alertctl: a bad command line says what is wrong") {
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{}, "no command (alertctl --help lists them)"},
        {{"silences"}, "unknown command 'silences' (alertctl --help lists them)"},
        {{"silence", "add", "--duration", "1h"},
         "silence add needs a matcher: --account, --device, --bridge, --site, --region or "
         "--type"},
        {{"silence", "add", "--account", "a"},
         "silence add needs one of --duration, --end, --until-resolved"},
        {{"silence", "add", "--account", "a", "--duration", "soon"},
         "--duration: 'soon' is no duration (90, 90s, 30m, 2h, 1d)"},
        {{"silence", "add", "--account", "a", "--end", "tomorrow"},
         "--end: 'tomorrow' is no time (seconds since the epoch, or 2026-12-05T10:00Z)"},
        {{"silence", "add", "--account"}, "--account needs a value"},
        {{"silence", "add", "--acount", "a"}, "unknown flag --acount (alertctl --help lists them)"},
        {{"silence", "expire"}, "silence expire needs one silence id"},
        {{"explain", "--account", "a"}, "explain needs --account and --device"},
        {{"deadletters", "purge"}, "deadletters purge needs ids or --all"},
        {{"--url", "ftp://x", "state"}, "--url must be http://HOST:PORT or https://HOST:PORT"},
    };
    for (const auto& [args, message] : bad) {
        CAPTURE(message);
        CHECK_THROWS_WITH_AS(parse(args), message.c_str(), usage_error);
    }
}

TEST_CASE("alertctl: answers as a terminal shows them") {
    const json silences = {{"silences",
                            {{{"id", "ab12"},
                              {"status", "active"},
                              {"matchers", {{"account", "acme"}}},
                              {"startsAt", 1796400000},
                              {"endsAt", 1796401800},
                              {"createdBy", "ann"},
                              {"comment", "re-cabling"}},
                             {{"id", "cd34"},
                              {"status", "ended"},
                              {"matchers", {{"device", "x"}}},
                              {"startsAt", 1},
                              {"untilResolved", true},
                              {"createdBy", "bob"},
                              {"comment", ""}}}}};
    const std::string text = render("silences", silences, NOW);
    CHECK(
        text.find("ab12  active  account=acme  2026-12-04 16:00:00Z  2026-12-04 16:30:00Z  ann") !=
        std::string::npos);
    CHECK(text.find("cd34") == std::string::npos);  // ended: only with --all
    CHECK(render("silences-all", silences, NOW).find("until resolved") != std::string::npos);
    const json dead = {{"deadLetters",
                        {{{"id", "1-0"},
                          {"target", "email"},
                          {"recipient", "x@y"},
                          {"key", "Offline-1-aa"},
                          {"attempts", 6},
                          {"error", "550 no"}}}},
                       {"total", 1}};
    CHECK(render("deadletters", dead, NOW) ==
          "ID   TARGET       DEDUPKEY      ATTEMPTS  ERROR\n"
          "1-0  email (x@y)  Offline-1-aa  6         550 no\n1 in all\n");
    CHECK(render("explain", {{"account", "a"}, {"device", "d"}, {"heldBack", json::array()}},
                 NOW) == "nothing held back for a/d then\n");
}
