// ctl_command.hpp — alertctl's pure part: a command line -> the console API request it makes,
// and the API's answer -> the text a terminal shows (actions/alerts/README.md, "Operating the
// pipeline"). No I/O: alertctl.cpp sends the request (libcurl) and prints.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace alerts::ctl {

/// A command line alertctl cannot run; what() says why (exit status 2).
class usage_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

struct ctl_request {
    std::string method;  // GET, POST, DELETE
    std::string path;    // with its query
    std::string body;    // JSON, or ""
    bool write = false;  // needs the token
    std::string view;    // how to show the answer: "silences", "silence", "state", ...
};

struct ctl_invocation {
    std::string url = "http://127.0.0.1:9095";  // --url, ALERTCTL_URL
    std::string token_file;                     // --token-file, ALERTCTL_TOKEN_FILE
    bool json = false;                          // --json: the API's answers as they are
    std::vector<ctl_request> requests;          // in order (replay and purge take several ids)
};

/// "alertctl --help".
std::string usage();

/// Reads the command line (after argv[0]) with the environment's defaults already in `base`;
/// throws usage_error. `now`: seconds since the epoch, for --start/--until given relatively.
ctl_invocation parse_command(const std::vector<std::string>& args, ctl_invocation base, double now);

/// A duration: "90", "90s", "30m", "2h", "1d" -> seconds; throws usage_error naming `flag`.
double parse_duration(const std::string& flag, const std::string& text);
/// A time: seconds since the epoch, or "YYYY-MM-DDTHH:MM[:SS]Z"; throws usage_error.
double parse_time(const std::string& flag, const std::string& text);

/// The answer as a terminal shows it (`view` of the request), ending with a newline.
std::string render(const std::string& view, const nlohmann::json& answer, double now);

}  // namespace alerts::ctl
