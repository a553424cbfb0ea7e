// The proxy's command line (proxy/settings.hpp), in-process: every Go-style spelling upstream's
// proxy takes, switches with Go's booleans, and the usage errors that name the flag.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "settings.hpp"

using namespace actionloop;

namespace {

settings parse(std::vector<std::string> words) {
    words.insert(words.begin(), "proxy");
    std::vector<char*> argv;
    argv.reserve(words.size() + 1);
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    return load_settings(static_cast<int>(words.size()), argv.data());
}

std::string refusal(const std::vector<std::string>& words) {
    try {
        parse(words);
    } catch (const std::invalid_argument& e) {
        const std::string text = e.what();
        return text.substr(0, text.find('\n'));  // the usage line follows
    }
    return "(accepted)";
}

}  // namespace

TEST_CASE("settings: a value after a space or '=', with one dash or two") {
    for (const auto& words : std::vector<std::vector<std::string>>{
             {"-port", "8181"}, {"-port=8181"}, {"--port", "8181"}, {"--port=8181"}}) {
        CHECK(parse(words).port == 8181);
    }
    const settings s = parse({"-host", "127.0.0.1", "--metrics-port=9090", "-compile", "main",
                              "-env", "{\"A\":\"-x\"}"});
    CHECK(s.host == "127.0.0.1");
    CHECK(s.metrics_port == 9090);
    CHECK(s.compile_main == "main");
    CHECK(s.env_json == "{\"A\":\"-x\"}");
    CHECK(parse({"-port", "1", "-port", "2"}).port == 2);  // the last one wins, as in Go
}

TEST_CASE("settings: switches alone, or with Go's booleans after '='") {
    CHECK(parse({"-debug"}).debug);
    CHECK(parse({"-h"}).help);
    CHECK(parse({"-help"}).help);
    CHECK(parse({"--help"}).help);
    CHECK(parse({"-version=true"}).version);
    CHECK(parse({"--debug=T"}).debug);
    CHECK_FALSE(parse({"-debug", "-debug=0"}).debug);
    CHECK_FALSE(parse({"-h=false"}).help);
    CHECK(refusal({"-debug=maybe"}) == "invalid boolean value 'maybe' for -debug: true or false");
    CHECK(refusal({"-debug", "false"}) == "unknown flag 'false'");  // Go: a switch takes no word
}

TEST_CASE("settings: usage errors name the flag and what was given") {
    CHECK(refusal({"-port", "80x"}) == "invalid -port '80x': a number from 1 to 65535");
    CHECK(refusal({"-port", "-1"}) == "invalid -port '-1': a number from 1 to 65535");
    CHECK(refusal({"-port"}) == "flag needs an argument: -port");
    CHECK(refusal({"--env="}) == "flag needs an argument: -env");
    CHECK(refusal({"-nope"}) == "unknown flag '-nope'");
    CHECK(refusal({"--nope=1"}) == "unknown flag '--nope=1'");
    CHECK(refusal({"-hx"}) == "unknown flag '-hx'");
    CHECK(refusal({"-por", "1"}) == "unknown flag '-por'");  // no guessed prefixes
    CHECK(refusal({"stray"}) == "unknown flag 'stray'");
}
