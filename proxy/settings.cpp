// Settings from the command line and the environment, and the help that lists them all.
#include "settings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>

namespace actionloop {
namespace {

constexpr std::uint64_t DEFAULT_MAX_EXTRACT_BYTES = std::uint64_t{1} << 30;  // 1 GiB

struct knob {
    const char* name;  // a flag with its argument, or an environment variable
    const char* default_value;
    const char* meaning;
};

// The one list of what the proxy reads; help_text() prints it, the README's table mirrors it.
const knob FLAGS[] = {
    {"-port N", "8080", "TCP port to listen on (1..65535)"},
    {"-host ADDR", "0.0.0.0",
     "address to listen on (all interfaces; 127.0.0.1: loopback only); "
     "also OW_HOST"},
    {"-metrics-port N", "off",
     "serve GET /metrics (Prometheus text format) on this port of the same address; "
     "also OW_METRICS_PORT"},
    {"-debug", "off", "verbose logs, a second /init allowed, failed action dirs kept"},
    {"-compile MAIN", "",
     "offline compile: a source file or zip on stdin, a zip of the built "
     "action on stdout (needs OW_COMPILER for sources)"},
    {"-env JSON", "{}",
     "with -compile: the /init env the compiler sees, e.g. "
     "'{\"ACTIONLOOP_CXXFLAGS\":\"-O2\"}'"},
    {"-version", "", "print the version and exit"},
    {"-h, -help", "", "print this help and exit"},
};

const knob VARIABLES[] = {
    {"OW_COMPILER", "empty",
     "compile script run at /init for sources (compile MAIN SRC BIN); "
     "empty: no compilation"},
    {"OW_WAIT_FOR_ACK", "empty", "wait for the action's {\"ok\":true} on fd 3 at start"},
    {"OW_EXECUTION_ENV", "empty", "bin/exec.env must hold this value, else the start fails"},
    {"OW_LOG_INIT_ERROR", "empty",
     "init errors go to stderr with sentinels; the answer is generic, plus the action's last "
     "20 stderr lines when it failed to start"},
    {"OW_SAVE_JAR", "empty",
     "a jar upload is saved whole as src/<this name> instead of "
     "being unpacked (for a Java compiler)"},
    {"OW_HOST", "0.0.0.0", "address to listen on when -host is not given"},
    {"OW_MAX_BODY_BYTES", "52428800", "larger request bodies get 413"},
    {"OW_MAX_ANSWER_BYTES", "52428800", "a longer action answer line gets 502 and a restart"},
    {"OW_MAX_EXTRACT_BYTES", "1073741824", "an archive expanding to more gets 502 at /init"},
    {"OW_MAX_JSON_DEPTH", "512",
     "a JSON body nested deeper is refused before it is parsed (/init: 400, single-entrypoint "
     "/: 413, its action's answer: 502; the C++ launcher's /run: an error answer)"},
    {"OW_MAX_JSON_MEMBERS", "1000000",
     "a JSON body with more object members and array elements (all levels) is refused the "
     "same way"},
    {"OW_EXTRACT_TIMEOUT_MS", "60000",
     "an archive that takes longer to check and unpack gets 502 at /init"},
    {"OW_DEADLINE_GRACE_MS", "100",
     "time past a /run's deadline before the action is "
     "stopped (502) and restarted"},
    {"OW_RUN_TIMEOUT_MS", "300000",
     "the bound of a /run without a usable deadline (none, already passed, or out of "
     "range: Knative, plain HTTP clients), and the most a single-entrypoint deadline may "
     "give: past it the action is stopped (502) and restarted; /health answers 503 while an "
     "activation has run longer than this; 0: no bound"},
    {"OW_ACK_TIMEOUT_MS", "60000", "how long to wait for the ack"},
    {"OW_COMPILE_TIMEOUT_MS", "300000", "how long the compiler may run"},
    {"OW_THREADS", "64",
     "worker threads for what blocks: /init (unpack, compile, start), an action's restart, "
     "a large single-entrypoint body; HTTP and /run are served on one event-loop thread"},
    {"OW_METRICS_PORT", "off", "port for GET /metrics when -metrics-port is not given"},
    {"OW_SHUTDOWN_TIMEOUT_MS", "25000",
     "after SIGTERM, how long activations in flight may take to finish before the action is "
     "stopped and the proxy exits 0"},
    {"OW_PIPELINE", "on", "pipelined /runs for actions that accept them; 0 turns it off"},
    {"OW_SPIN_US", "50",
     "microseconds the idle event loop polls before it sleeps, while requests come less than "
     "1 ms apart and no activation is in flight; 0 turns it off"},
    {"OW_SCHED_BATCH", "auto",
     "auto: the event loop and a pipelining action run under SCHED_BATCH while activations "
     "overlap (a woken action does not preempt the proxy: more /runs per second under "
     "concurrency), under the default policy otherwise; 1: the proxy and every process it "
     "starts always; 0: never"},
    {"OW_CGROUP_DIR", "found",
     "the memory cgroup directory whose OOM-kill count (memory.events, v1 memory.oom_control) "
     "and limit name an out-of-memory death; unset: the one /proc/self/cgroup names"},
    {"SPDLOG_LEVEL", "warn", "the proxy's own diagnostics on stderr (-debug: debug)"},
    {"OW_LOG_FORMAT", "plain",
     "json: every line the action prints on stdout/stderr, and the proxy's own diagnostics, "
     "as one JSON object (time, stream, activationId, transactionId, action, message); the "
     "sentinels stay as they are"},
    {"OW_LOG_LINE_BYTES", "16384",
     "in JSON mode, a longer line is cut there and its record says \"truncated\": N"},
    // Lambda's logs (in Lambda mode they replace OW_LOG_FORMAT).
    {"AWS_LAMBDA_LOG_FORMAT", "Text",
     "Lambda mode: JSON (any case): every line the action prints, and the proxy's own "
     "diagnostics, as Lambda's JSON record (timestamp, level, requestId, message); anything "
     "else: the lines as they are; never sentinels"},
    {"AWS_LAMBDA_LOG_LEVEL", "TRACE",
     "Lambda mode with JSON logs: records below this level (TRACE, DEBUG, INFO, WARN, ERROR, "
     "FATAL; any case) are not written; a value that names no level filters nothing"},
    // The port's bounds and the log backlog (issue 33).
    {"OW_MAX_CONNECTIONS", "4096",
     "open connections past this get 503 with Retry-After and are closed (/health is still "
     "answered); 0: no bound"},
    {"OW_MAX_QUEUED", "1000",
     "single-entrypoint mode: requests waiting for the action or in it past this get 503 with "
     "Retry-After; 0: no bound"},
    {"OW_WORKERS", "1",
     "action processes serving activations in parallel, each with its own pipes: a number, or "
     "auto (the container's CPUs); /init's env may set it too (the action's own wins)"},
    {"OW_MAX_WORKERS", "64", "the cap on OW_WORKERS, wherever it was set"},
    {"OW_MAX_INFLIGHT", "0",
     "activations admitted at once (running and queued); past it 429 with Retry-After at "
     "once; 0: no bound"},
    {"OW_LOG_BUFFER_BYTES", "4194304",
     "the proxy's own log lines held while its stdout/stderr is not read; past it they are "
     "dropped and counted (the action's output is never dropped: the action waits)"},
    {"ACTIONLOOP_CXXFLAGS", "empty",
     "extra flags for compile (e.g. -O2): in /init's env, or "
     "in the shell for -compile"},
    {"__OW_*", "", "passed whole to the action and the compiler"},
    {"__OW_RUNTIME_PLATFORM", "openwhisk",
     "knative: single-entrypoint mode (every request to /); any other value but openwhisk: "
     "exit 9"},
    {"__OW_HTTP_METHODS", "POST", "knative mode: the methods / accepts, written [GET,POST]"},
    {"__OW_ACTION_CODE", "empty",
     "knative mode: the action's code (base64 when binary); set: a dedicated runtime"},
    {"__OW_ACTION_MAIN", "main", "knative mode: the dedicated action's entry point"},
    {"__OW_ACTION_BINARY", "false", "knative mode: true: __OW_ACTION_CODE is base64"},
    {"__OW_ACTION_RAW", "false", "knative mode: true: the dedicated action is a raw web action"},
    {"__OW_ACTION_NAME", "empty", "knative mode: the dedicated action's name (action_name)"},
    {"OW_ACTION_CODE_FILE", "empty",
     "knative mode: a file holding what __OW_ACTION_CODE would (when that is unset)"},
    // Lambda mode (docs/LAMBDA.md).
    {"AWS_LAMBDA_RUNTIME_API", "empty",
     "host:port of the Lambda Runtime API; set: Lambda mode (the proxy polls it for "
     "invocations instead of listening)"},
    {"LAMBDA_TASK_ROOT", "/var/task", "Lambda mode: the folder whose `exec` is the action"},
    {"AWS_LAMBDA_MAX_CONCURRENCY", "1",
     "Lambda mode: invocations served at once (Managed Instances): that many workers, each "
     "with its own poll of /next"},
};

const char* const USAGE =
    "usage: proxy [-port N] [-host ADDR] [-metrics-port N] [-debug] [-version] "
    "[-compile MAIN [-env JSON]] [-h]";

std::string env_string(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
}

// The words an on/off variable takes (OW_PIPELINE, OW_SCHED_BATCH).
bool on_word(const std::string& text) { return text == "1" || text == "true" || text == "on"; }
bool off_word(const std::string& text) { return text == "0" || text == "false" || text == "off"; }

template <typename T>
T env_number(const char* name, T fallback) {
    std::string text = env_string(name);
    if (text.empty()) return fallback;
    try {
        long long value = std::stoll(text);
        if (value < 0) throw std::invalid_argument("negative");
        return static_cast<T>(value);
    } catch (const std::exception&) {
        throw std::invalid_argument(std::string(name) + " must be a non-negative integer, got '" +
                                    text + "'");
    }
}

// A whole decimal port number in 1..65535 (std::stoi would take "80x" as 80).
int parse_port(const std::string& text, const char* name = "-port") {
    const bool digits = !text.empty() && text.size() <= 5 &&
                        text.find_first_not_of("0123456789") == std::string::npos;
    const int port = digits ? std::stoi(text) : 0;
    if (port < 1 || port > 65535) {
        throw std::invalid_argument("invalid " + std::string(name) + " '" + text +
                                    "': a number from 1 to 65535\n" + USAGE);
    }
    return port;
}

[[noreturn]] void usage_error(const std::string& reason) {
    throw std::invalid_argument(reason + "\n" + USAGE);
}

// Go's booleans, after '=' only (-debug=false): a switch alone is on.
bool go_boolean(const std::string& flag, const std::string& text) {
    for (const char* yes : {"1", "t", "T", "true", "TRUE", "True"}) {
        if (text == yes) return true;
    }
    for (const char* no : {"0", "f", "F", "false", "FALSE", "False"}) {
        if (text == no) return false;
    }
    usage_error("invalid boolean value '" + text + "' for " + flag + ": true or false");
}

const char* const SWITCHES[] = {"debug", "version", "help", "h"};

// Boost.Program_options takes a switch without a value; this hook hands it -switch=VALUE
// (and --switch=VALUE) whole, as the option "switch=", for go_boolean.
std::pair<std::string, std::string> switch_with_value(const std::string& token) {
    if (token.size() < 2 || token[0] != '-') return {};
    const std::string word = token.substr(token.rfind("--", 0) == 0 ? 2 : 1);
    const size_t eq = word.find('=');
    if (eq == std::string::npos) return {};
    for (const char* name : SWITCHES) {
        if (word.compare(0, eq, name) == 0) return {"switch=", word};
    }
    return {};
}

// The proxy's flags, Go-style: Boost.Program_options with allow_long_disguise takes -port as
// --port (and -h as --h: no short flags), and -port VALUE, -port=VALUE, --port=VALUE; flags
// stay in the order given.
std::vector<boost::program_options::option> split_flags(int argc, char** argv) {
    namespace po = boost::program_options;
    namespace style = po::command_line_style;
    po::options_description flags;
    for (const char* name : {"port", "host", "metrics-port", "compile", "env", "switch="}) {
        flags.add_options()(name, po::value<std::string>());
    }
    for (const char* name : SWITCHES) flags.add_options()(name, po::bool_switch());
    try {
        return po::command_line_parser(argc, argv)
            .options(flags)
            .style(style::allow_long | style::allow_long_disguise | style::long_allow_adjacent |
                   style::long_allow_next)
            .extra_parser(switch_with_value)
            .allow_unregistered()
            .run()
            .options;
    } catch (const po::invalid_command_line_syntax& e) {
        std::string name = e.get_option_name();
        name = name.substr(name.find_first_not_of('-'));
        name = name.substr(0, name.find('='));
        usage_error("flag needs an argument: -" + name);
    }
}

void parse_flags(int argc, char** argv, settings& s, bool& host_given, bool& metrics_given) {
    for (const boost::program_options::option& given : split_flags(argc, argv)) {
        const std::string& name = given.string_key;
        if (given.unregistered || name.empty()) {
            usage_error("unknown flag '" + given.original_tokens.at(0) + "'");
        }
        const std::string value = given.value.empty() ? "" : given.value[0];
        if (name == "switch=") {  // debug=false, h=1, ...
            const std::string flag = value.substr(0, value.find('='));
            const bool on = go_boolean("-" + flag, value.substr(value.find('=') + 1));
            (flag == "debug" ? s.debug : flag == "version" ? s.version : s.help) = on;
        } else if (name == "debug" || name == "version" || name == "help" || name == "h") {
            (name == "debug" ? s.debug : name == "version" ? s.version : s.help) = true;
        } else if (name == "compile") {
            s.compile_main = value;
        } else if (name == "env") {
            s.env_json = value;
        } else if (name == "port") {
            s.port = parse_port(value);
        } else if (name == "metrics-port") {
            s.metrics_port = parse_port(value, "-metrics-port");
            metrics_given = true;
        } else {  // host
            s.host = value;
            host_given = true;
        }
    }
}

// Lambda's logs: in Lambda mode (AWS_LAMBDA_RUNTIME_API set, as main.cpp tells the modes
// apart) AWS_LAMBDA_LOG_FORMAT and AWS_LAMBDA_LOG_LEVEL decide the log lines' form, read as
// Lambda's managed runtimes read them (log_record.hpp: lambda_log_format), whatever
// OW_LOG_FORMAT says; in the other modes they are not read.
void read_lambda_logs(settings& s) {
    if (env_string("AWS_LAMBDA_RUNTIME_API").empty()) return;
    s.json_logs =
        lambda_log_format(env_string("AWS_LAMBDA_LOG_FORMAT"), env_string("AWS_LAMBDA_LOG_LEVEL"));
}

void append_rows(std::string& out, const knob* begin, const knob* end) {
    for (const knob* k = begin; k != end; ++k) {
        std::string line = "  " + std::string(k->name);
        line.resize(std::max<size_t>(line.size() + 1, 25), ' ');
        std::string def =
            *k->default_value != '\0' ? std::string("[") + k->default_value + "] " : std::string();
        out += line + def + k->meaning + "\n";
    }
}

// Lambda mode's variables (AWS_LAMBDA_MAX_CONCURRENCY: 1 … OW_MAX_WORKERS).
void read_lambda_settings(settings& s) {
    s.lambda_runtime_api = env_string("AWS_LAMBDA_RUNTIME_API");
    const std::string root = env_string("LAMBDA_TASK_ROOT");
    if (!root.empty()) s.lambda_task_root = root;
    s.lambda_concurrency = env_number("AWS_LAMBDA_MAX_CONCURRENCY", s.lambda_concurrency);
    if (s.lambda_concurrency == 0 || s.lambda_concurrency > s.max_workers) {
        throw std::invalid_argument("AWS_LAMBDA_MAX_CONCURRENCY must be 1 to " +
                                    std::to_string(s.max_workers) + " (OW_MAX_WORKERS); got " +
                                    env_string("AWS_LAMBDA_MAX_CONCURRENCY"));
    }
}

}  // namespace

settings load_settings(int argc, char** argv) {
    settings s;
    bool host_given = false;
    bool metrics_given = false;
    parse_flags(argc, argv, s, host_given, metrics_given);
    if (!host_given && !env_string("OW_HOST").empty()) s.host = env_string("OW_HOST");
    if (!metrics_given && !env_string("OW_METRICS_PORT").empty()) {
        s.metrics_port = parse_port(env_string("OW_METRICS_PORT"), "OW_METRICS_PORT");
    }
    s.compiler = env_string("OW_COMPILER");
    s.wait_for_ack = env_string("OW_WAIT_FOR_ACK");
    s.execution_env = env_string("OW_EXECUTION_ENV");
    s.log_init_error = !env_string("OW_LOG_INIT_ERROR").empty();
    s.save_jar = env_string("OW_SAVE_JAR");
    s.max_body_bytes = env_number("OW_MAX_BODY_BYTES", s.max_body_bytes);
    s.max_answer_bytes = env_number("OW_MAX_ANSWER_BYTES", s.max_answer_bytes);
    s.max_json_depth = env_number("OW_MAX_JSON_DEPTH", s.max_json_depth);
    s.max_json_members = env_number("OW_MAX_JSON_MEMBERS", s.max_json_members);
    s.deadline_grace_ms = env_number("OW_DEADLINE_GRACE_MS", s.deadline_grace_ms);
    s.run_timeout_ms = env_number("OW_RUN_TIMEOUT_MS", s.run_timeout_ms);
    // A bound centuries away is none (the clock's nanoseconds would overflow).
    if (s.run_timeout_ms > std::int64_t{100} * 365 * 24 * 3600 * 1000) s.run_timeout_ms = 0;
    s.ack_timeout_ms = env_number("OW_ACK_TIMEOUT_MS", s.ack_timeout_ms);
    s.compile_timeout_ms = env_number("OW_COMPILE_TIMEOUT_MS", s.compile_timeout_ms);
    s.threads = env_number("OW_THREADS", s.threads);
    s.shutdown_timeout_ms = env_number("OW_SHUTDOWN_TIMEOUT_MS", s.shutdown_timeout_ms);
    if (s.threads == 0) s.threads = 1;
    s.spin_us = env_number("OW_SPIN_US", s.spin_us);
    const std::string sched_batch = env_string("OW_SCHED_BATCH");
    if (on_word(sched_batch)) {
        s.sched_batch = settings::batch_policy::always;
    } else if (off_word(sched_batch)) {
        s.sched_batch = settings::batch_policy::never;
    } else if (!sched_batch.empty() && sched_batch != "auto") {
        throw std::invalid_argument("invalid OW_SCHED_BATCH '" + sched_batch +
                                    "': use auto (the default), 1 or 0");
    }
    s.pipeline = !off_word(env_string("OW_PIPELINE"));
    const std::string log_format = env_string("OW_LOG_FORMAT");
    if (!log_format.empty() && log_format != "plain" && log_format != "json") {
        throw std::invalid_argument("invalid OW_LOG_FORMAT '" + log_format +
                                    "': use plain (the default) or json");
    }
    s.json_logs.json = log_format == "json";
    s.log_line_bytes = env_number("OW_LOG_LINE_BYTES", s.log_line_bytes);
    if (s.log_line_bytes == 0) s.log_line_bytes = 1;
    read_lambda_logs(s);
    // The port's bounds and the log backlog (issue 33).
    s.max_connections = env_number("OW_MAX_CONNECTIONS", s.max_connections);
    s.max_queued = env_number("OW_MAX_QUEUED", s.max_queued);
    s.log_buffer_bytes = env_number("OW_LOG_BUFFER_BYTES", s.log_buffer_bytes);
    s.workers = env_string("OW_WORKERS");
    s.max_workers = std::max(1u, env_number("OW_MAX_WORKERS", s.max_workers));
    s.max_inflight = env_number("OW_MAX_INFLIGHT", s.max_inflight);
    s.cxxflags = env_string("ACTIONLOOP_CXXFLAGS");
    s.cgroup_dir = env_string("OW_CGROUP_DIR");
    if (const char* platform = std::getenv("__OW_RUNTIME_PLATFORM")) s.runtime_platform = platform;
    read_lambda_settings(s);
    // Single-entrypoint mode with plain lines: no boundaries to write (issue 39). JSON lines
    // keep them: they attribute each line to its activation.
    if (s.runtime_platform == std::optional<std::string>("knative") && !s.json_logs.json &&
        s.lambda_runtime_api.empty()) {
        s.json_logs.sentinels = false;
    }
    return s;
}

// A positive decimal number in `name`, else `fallback`.
static std::uint64_t positive_env(const char* name, std::uint64_t fallback) {
    const std::string text = env_string(name);
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
        return fallback;
    }
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || value == 0) return fallback;
    return value;
}

std::uint64_t max_extract_bytes_now() {
    return positive_env("OW_MAX_EXTRACT_BYTES", DEFAULT_MAX_EXTRACT_BYTES);
}

std::uint64_t extract_timeout_ms_now() {
    constexpr std::uint64_t DEFAULT_MS = 60000;
    return positive_env("OW_EXTRACT_TIMEOUT_MS", DEFAULT_MS);
}

std::string help_text() {
    std::string out = std::string(USAGE) + "\n\n" +
                      "The ActionLoop proxy of actionloop-cpp: POST /init and /run on the port.\n"
                      "Flags (single or double dash; a value after a space or '=': -port 8181, "
                      "--port=8181) [default]:\n";
    append_rows(out, std::begin(FLAGS), std::end(FLAGS));
    out += "Environment [default]:\n";
    append_rows(out, std::begin(VARIABLES), std::end(VARIABLES));
    return out;
}

}  // namespace actionloop
