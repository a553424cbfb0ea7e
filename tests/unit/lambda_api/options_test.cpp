// lambda-api's flags: the defaults, each flag in both dash styles, and every bound refused
// with its reason.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "lambda_api/options.hpp"

using namespace actionloop::lambda_api;

namespace {

api_options parse(const std::vector<std::string>& args) {
    std::vector<const char*> argv{"lambda-api"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    return parse_options(static_cast<int>(argv.size()), argv.data());
}

// The first line of the error for `args` (the usage line follows it).
std::string refusal(const std::vector<std::string>& args) {
    try {
        parse(args);
    } catch (const std::invalid_argument& e) {
        const std::string text = e.what();
        return text.substr(0, text.find('\n'));
    }
    return "accepted";
}

}  // namespace

TEST_CASE("options: the defaults are Lambda's and the emulator's") {
    const api_options o = parse({});
    CHECK(o.host == "127.0.0.1");
    CHECK(o.port == 9001);
    CHECK(o.max_concurrency == 0);
    CHECK(o.timeout_ms == 3000);
    CHECK(o.function_name == "test_function");
    CHECK_FALSE(o.invocation_ids);
    CHECK(o.max_queue == 1000);
    CHECK(o.max_parked == 1024);
    CHECK(o.max_body_bytes == 6291456);
    CHECK(o.keep_ids == 10000);
    CHECK(o.spin_us == 50);
    CHECK(function_arn(o.function_name) ==
          "arn:aws:lambda:us-east-1:012345678912:function:test_function");
}

TEST_CASE("options: every flag, with one or two dashes, a space or '='") {
    const api_options o = parse({"-port",
                                 "9100",
                                 "--host=0.0.0.0",
                                 "-max-concurrency=8",
                                 "-timeout",
                                 "0.25",
                                 "-function-name",
                                 "hello_1",
                                 "-invocation-id",
                                 "--max-queue",
                                 "0",
                                 "-max-parked",
                                 "3",
                                 "-max-body-bytes",
                                 "100",
                                 "-keep-ids",
                                 "5",
                                 "-spin-us",
                                 "0",
                                 "-debug"});
    CHECK(o.port == 9100);
    CHECK(o.host == "0.0.0.0");
    CHECK(o.max_concurrency == 8);
    CHECK(o.timeout_ms == 250);
    CHECK(o.function_name == "hello_1");
    CHECK(o.invocation_ids);
    CHECK(o.max_queue == 0);
    CHECK(o.max_parked == 3);
    CHECK(o.max_body_bytes == 100);
    CHECK(o.keep_ids == 5);
    CHECK(o.spin_us == 0);
    CHECK(o.debug);
    CHECK(parse({"-h"}).help);
    CHECK(parse({"-help"}).help);
    CHECK(parse({"-version"}).version);
}

TEST_CASE("options: the timeout takes whole seconds or up to three decimals") {
    CHECK(parse({"-timeout", "900"}).timeout_ms == 900000);
    CHECK(parse({"-timeout", "1.5"}).timeout_ms == 1500);
    CHECK(parse({"-timeout", "0.001"}).timeout_ms == 1);
    CHECK(parse({"-timeout", "86400"}).timeout_ms == 86400000);
    for (const char* bad : {"0", "0.0004", "1.2345", "-1", "x", "", "86401", "1e3"}) {
        CAPTURE(bad);
        CHECK(refusal({"-timeout", bad}) == "invalid -timeout '" + std::string(bad) +
                                                "': seconds from 0.001 to 86400, e.g. 3 or 0.25");
    }
}

TEST_CASE("options: numbers out of their bounds are refused, naming the bounds") {
    CHECK(refusal({"-port", "0"}) == "invalid -port '0': a whole number from 1 to 65535");
    CHECK(refusal({"-port", "80x"}) == "invalid -port '80x': a whole number from 1 to 65535");
    CHECK(refusal({"-max-concurrency", "4097"}) ==
          "invalid -max-concurrency '4097': a whole number from 0 to 4096");
    CHECK(refusal({"-max-parked", "0"}) ==
          "invalid -max-parked '0': a whole number from 1 to 100000");
    CHECK(refusal({"-max-body-bytes", "0"}) ==
          "invalid -max-body-bytes '0': a whole number from 1 to 1073741824");
    CHECK(refusal({"-keep-ids", "-1"}) ==
          "invalid -keep-ids '-1': a whole number from 0 to 10000000");
}

TEST_CASE("options: a function name is Lambda's: 1 to 64 of letters, digits, - and _") {
    CHECK(parse({"-function-name", std::string(64, 'a')}).function_name == std::string(64, 'a'));
    for (const std::string& bad :
         {std::string(65, 'a'), std::string("a:b"), std::string("a b"), std::string("")}) {
        CAPTURE(bad);
        CHECK(refusal({"-function-name", bad}) ==
              "invalid -function-name '" + bad +
                  "': 1 to 64 letters, digits, hyphens or underscores");
    }
}

TEST_CASE("options: an unknown flag, or a flag missing its value, is refused") {
    CHECK(refusal({"-bogus"}) == "unknown flag '-bogus'");
    CHECK(refusal({"-port"}).find("port") != std::string::npos);
    CHECK(refusal({"-port"}) != "accepted");
}

TEST_CASE("options: the help lists every flag with its default") {
    const std::string help = help_text();
    for (const char* flag :
         {"-port N", "-host ADDR", "-max-concurrency N", "-timeout SECONDS", "-function-name NAME",
          "-invocation-id", "-max-queue N", "-max-parked N", "-max-body-bytes N", "-keep-ids N",
          "-spin-us N", "-debug", "-version", "-h, -help"}) {
        CAPTURE(flag);
        CHECK(help.find(std::string("  ") + flag) != std::string::npos);
    }
}
