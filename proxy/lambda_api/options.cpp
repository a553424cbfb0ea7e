#include "lambda_api/options.hpp"

#include <algorithm>
#include <regex>
#include <stdexcept>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>

namespace actionloop::lambda_api {
namespace {

constexpr const char* USAGE =
    "usage: lambda-api [-port N] [-host ADDR] [-max-concurrency N] [-timeout SECONDS]\n"
    "                  [-function-name NAME] [-invocation-id] [-max-queue N] [-max-parked N]\n"
    "                  [-max-body-bytes N] [-keep-ids N] [-spin-us N] [-debug] [-version] [-h]";

struct flag_row {
    const char* name;
    const char* default_value;
    const char* meaning;
};

// The one list of the flags; help_text() prints it, docs/lambda-api.md mirrors it.
const flag_row FLAGS[] = {
    {"-port N", "9001", "TCP port to listen on (1..65535)"},
    {"-host ADDR", "127.0.0.1", "address to listen on (0.0.0.0: every interface)"},
    {"-max-concurrency N", "0",
     "Managed Instances mode (1..4096): at most N /next parked, a further one refused; an "
     "invoke with no /next parked fails at once. 0: classic mode"},
    {"-timeout SECONDS", "3",
     "the function's timeout: deadline = when a /next takes the invoke + this (0.001..86400, "
     "to the millisecond)"},
    {"-function-name NAME", "test_function",
     "the function in Lambda-Runtime-Invoked-Function-Arn (1..64 of A-Z a-z 0-9 - _)"},
    {"-invocation-id", "off",
     "send Lambda-Runtime-Invocation-Id on /next and check the runtime echoes it"},
    {"-max-queue N", "1000", "classic mode: invokes waiting for a /next (0..1000000); past it 429"},
    {"-max-parked N", "1024", "classic mode: /next parked at once (1..100000); past it 500"},
    {"-max-body-bytes N", "6291456", "larger request bodies get 413 (1..1073741824)"},
    {"-keep-ids N", "10000", "ids of finished invocations remembered for 400/410 (0..10000000)"},
    {"-spin-us N", "50", "idle poll before the event loop sleeps, microseconds (0: off)"},
    {"-debug", "off", "log every request on stderr"},
    {"-version", "", "print the version and exit"},
    {"-h, -help", "", "print this help and exit"},
};

const char* const VALUED[] = {"port",          "host",      "max-concurrency", "timeout",
                              "function-name", "max-queue", "max-parked",      "max-body-bytes",
                              "keep-ids",      "spin-us"};
const char* const SWITCHES[] = {"invocation-id", "debug", "version", "help", "h"};

constexpr size_t MEANING_COLUMN = 24;
constexpr size_t HELP_WIDTH = 100;

// `line` (a flag and its default) then `meaning`, wrapped at spaces to HELP_WIDTH columns,
// the continuation lines indented to MEANING_COLUMN.
std::string wrapped(std::string line, const std::string& meaning) {
    std::string out;
    size_t at = 0;
    while (at < meaning.size()) {
        const size_t room = HELP_WIDTH > line.size() ? HELP_WIDTH - line.size() : 1;
        size_t end = meaning.size();
        if (end - at > room) {
            const size_t space = meaning.rfind(' ', at + room);
            end = space != std::string::npos && space > at ? space : at + room;
        }
        out += line + meaning.substr(at, end - at) + "\n";
        at = end < meaning.size() && meaning[end] == ' ' ? end + 1 : end;
        line = std::string(MEANING_COLUMN, ' ');
    }
    return out;
}

[[noreturn]] void usage_error(const std::string& reason) {
    throw std::invalid_argument(reason + "\n" + USAGE);
}

// A whole decimal number in [low, high].
std::uint64_t number(const std::string& flag, const std::string& text, std::uint64_t low,
                     std::uint64_t high) {
    const bool digits = !text.empty() && text.size() <= 12 &&
                        text.find_first_not_of("0123456789") == std::string::npos;
    const std::uint64_t value = digits ? std::stoull(text) : 0;
    if (!digits || value < low || value > high) {
        usage_error("invalid -" + flag + " '" + text + "': a whole number from " +
                    std::to_string(low) + " to " + std::to_string(high));
    }
    return value;
}

// Seconds with up to three decimals, as milliseconds in 1..86400000.
std::int64_t timeout_ms(const std::string& text) {
    static const std::regex SECONDS(R"(([0-9]{1,5})(\.([0-9]{1,3}))?)");
    std::smatch m;
    std::int64_t ms = 0;
    if (std::regex_match(text, m, SECONDS)) {
        std::string fraction = m[3].str();
        fraction.resize(3, '0');
        ms = std::stoll(m[1].str()) * 1000 + std::stoll(fraction);
    }
    if (ms < 1 || ms > 86400000) {
        usage_error("invalid -timeout '" + text + "': seconds from 0.001 to 86400, e.g. 3 or 0.25");
    }
    return ms;
}

std::string function_name(const std::string& text) {
    static const std::regex NAME(R"([A-Za-z0-9_-]{1,64})");
    if (!std::regex_match(text, NAME)) {
        usage_error("invalid -function-name '" + text +
                    "': 1 to 64 letters, digits, hyphens or underscores");
    }
    return text;
}

std::vector<boost::program_options::option> split_flags(int argc, const char* const* argv) {
    namespace po = boost::program_options;
    namespace style = po::command_line_style;
    po::options_description flags;
    for (const char* name : VALUED) flags.add_options()(name, po::value<std::string>());
    for (const char* name : SWITCHES) flags.add_options()(name, po::bool_switch());
    try {
        return po::command_line_parser(argc, argv)
            .options(flags)
            .style(style::allow_long | style::allow_long_disguise | style::long_allow_adjacent |
                   style::long_allow_next)
            .allow_unregistered()
            .run()
            .options;
    } catch (const po::error& e) {
        usage_error(e.what());
    }
}

void apply(api_options& o, const std::string& name, const std::string& value) {
    if (name == "port") {
        o.port = static_cast<int>(number(name, value, 1, 65535));
    } else if (name == "host") {
        o.host = value;
    } else if (name == "max-concurrency") {
        o.max_concurrency = number(name, value, 0, 4096);
    } else if (name == "timeout") {
        o.timeout_ms = timeout_ms(value);
    } else if (name == "function-name") {
        o.function_name = function_name(value);
    } else if (name == "max-queue") {
        o.max_queue = number(name, value, 0, 1000000);
    } else if (name == "max-parked") {
        o.max_parked = number(name, value, 1, 100000);
    } else if (name == "max-body-bytes") {
        o.max_body_bytes = number(name, value, 1, std::uint64_t{1} << 30);
    } else if (name == "keep-ids") {
        o.keep_ids = number(name, value, 0, 10000000);
    } else if (name == "spin-us") {
        o.spin_us = static_cast<int>(number(name, value, 0, 1000000));
    } else if (name == "invocation-id") {
        o.invocation_ids = true;
    } else if (name == "debug") {
        o.debug = true;
    } else if (name == "version") {
        o.version = true;
    } else {  // help, h
        o.help = true;
    }
}

}  // namespace

api_options parse_options(int argc, const char* const* argv) {
    api_options o;
    for (const boost::program_options::option& given : split_flags(argc, argv)) {
        if (given.unregistered || given.string_key.empty()) {
            usage_error("unknown flag '" + given.original_tokens.at(0) + "'");
        }
        apply(o, given.string_key, given.value.empty() ? "" : given.value[0]);
    }
    return o;
}

std::string help_text() {
    std::string out = std::string(USAGE) +
                      "\n\nA local AWS Lambda Runtime API: a runtime polls it (set "
                      "AWS_LAMBDA_RUNTIME_API=HOST:PORT), and\nPOST "
                      "/2015-03-31/functions/function/invocations invokes the function, as the "
                      "Runtime Interface\nEmulator serves it. GET /_lambda-api/stats: what it has "
                      "seen (docs/lambda-api.md).\n"
                      "Flags (single or double dash; a value after a space or '=') [default]:\n";
    for (const flag_row& f : FLAGS) {
        std::string line = "  " + std::string(f.name);
        line.resize(std::max<size_t>(line.size() + 1, MEANING_COLUMN), ' ');
        if (*f.default_value != '\0') line += std::string("[") + f.default_value + "] ";
        out += wrapped(line, f.meaning);
    }
    return out;
}

std::string function_arn(const std::string& name) {
    return "arn:aws:lambda:us-east-1:012345678912:function:" + name;
}

}  // namespace actionloop::lambda_api
