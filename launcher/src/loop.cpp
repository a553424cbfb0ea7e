// The activation loop: one request line in on stdin, one compact JSON line out on fd 3.
#include "loop.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <stdexcept>
#include <streambuf>

#include <ext/stdio_sync_filebuf.h>

#include <actionloop/detail/json_scan.hpp>

#include "activation.hpp"
#include "answer_writer.hpp"
#include "crash_report.hpp"
#include "lambda_error.hpp"
#include "line_reader.hpp"
#include "request_scan.hpp"

namespace actionloop {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The one place a failure becomes an answer: OpenWhisk's {"error": message}; Lambda's
// __lambda_error line, which the proxy posts to /error, with `type` as its errorType.
std::string error_answer(platform mode, const std::string& message, std::string_view type) {
    if (mode == platform::lambda) return lambda_error_line(message, type);
    return dump(json{{"error", message}});
}

// The errorType Lambda's own runtimes give an event they cannot read.
constexpr std::string_view UNMARSHAL_ERROR = "Runtime.UnmarshalError";

// A request line the launcher cannot serve (not JSON, over the bounds, a scalar `value` for
// OpenWhisk): said on stderr and answered; the action is not called.
std::string invalid_request_answer(platform mode, const std::string& what) {
    std::cerr << "actionloop: invalid request line: " << what << std::endl;
    return error_answer(mode, "invalid request: " + what, UNMARSHAL_ERROR);
}

// Inside a catch: the answer of an exception from the action, said on stderr too. Its type
// is looked up only for Lambda's errorType (while the exception is being handled).
std::string exception_answer(platform mode, const std::string& what) {
    std::cerr << "action error: " << what << std::endl;
    return error_answer(mode, what,
                        mode == platform::lambda ? current_exception_type() : std::string());
}

// Inside a catch (...) that is not a std::exception.
std::string unknown_exception_answer(platform mode) {
    std::cerr << "action error: " << UNKNOWN_EXCEPTION << std::endl;
    return error_answer(mode, std::string(UNKNOWN_EXCEPTION), UNKNOWN_TYPE);
}

// The bounds of a request line the json contract parses into a DOM: OW_MAX_JSON_DEPTH and
// OW_MAX_JSON_MEMBERS of the action's environment (its /init env), read once; the proxy's
// defaults otherwise. A DOM that deep would make the action's dumps and copies recurse past
// its stack.
size_t bound_from_env(const char* name, size_t fallback) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text < '0' || *text > '9') return fallback;
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    return *end == '\0' ? static_cast<size_t>(value) : fallback;
}

scan::bounds request_bounds() {
    static const scan::bounds BOUNDS{bound_from_env("OW_MAX_JSON_DEPTH", 512),
                                     bound_from_env("OW_MAX_JSON_MEMBERS", 1000000)};
    return BOUNDS;
}

// What a std::bad_alloc escaping the action's function is answered with: the activation's
// error, and the process keeps serving (the unwinding freed what the action held).
const char* const OUT_OF_MEMORY =
    "out of memory: the action could not allocate memory (std::bad_alloc)";

// Inside a catch of a std::bad_alloc.
std::string out_of_memory_answer(platform mode) { return exception_answer(mode, OUT_OF_MEMORY); }

// A web action's (and Knative mode's) request headers: its trace context, if any.
void add_traceparent_of(const json& value, context_builder& builder) {
    if (!value.is_object()) return;
    if (auto headers = value.find("__ow_headers"); headers != value.end() && headers->is_object()) {
        auto traceparent = headers->find("traceparent");
        if (traceparent != headers->end() && traceparent->is_string()) {
            builder.add_traceparent_header(traceparent->get<std::string>());
        }
    }
}

// The context from a parsed request: every string member other than `value`.
context context_of(const json& request, platform mode) {
    context_builder builder(mode);
    for (auto it = request.begin(); it != request.end(); ++it) {
        if (it.key() == "value") continue;
        if (it.value().is_string()) {
            builder.add_string(it.key(), it.value().get_ref<const std::string&>());
        } else if (it.key() == "deadline" && it.value().is_number_integer()) {
            builder.add_deadline_ms(it.value().get<long long>());
        }
    }
    if (auto value = request.find("value"); value != request.end()) {
        add_traceparent_of(*value, builder);
    }
    return builder.build();
}

// The same from a line's parts (request_scan.hpp): the members in the same order.
context context_of(const request_parts& parts, platform mode) {
    context_builder builder(mode);
    for (const auto& [key, raw] : parts.members) {
        if (raw.front() == '"') {
            builder.add_string(key, plain_text(raw));
        } else if (key == "deadline") {
            if (const auto ms = integer_of(raw)) builder.add_deadline_ms(*ms);
        }
    }
    if (parts.value) add_traceparent_of(*parts.value, builder);
    return builder.build();
}

// The text of a JSON string given with its quotes; escapes go through nlohmann (rare).
std::string unquote(std::string_view quoted) {
    if (quoted.find('\\') == std::string_view::npos) {
        return std::string(quoted.substr(1, quoted.size() - 2));
    }
    return json::parse(quoted).get<std::string>();
}

bool is_container(std::string_view raw) {
    return !raw.empty() && (raw.front() == '{' || raw.front() == '[');
}

// A `value` that is a string, number or boolean is refused: the action's argument is an
// object or an array; null or none counts as {} (as in single-entrypoint mode, upstream's
// Knative runtime: docs/protocol.md, "/run").
std::string scalar_value_error(const char* type) {
    return std::string("the argument must be a dictionary but has type '") + type + "'";
}

const char* scalar_type_of_raw(std::string_view raw) {
    if (raw.empty() || is_container(raw) || raw.front() == 'n') return nullptr;
    if (raw.front() == '"') return "string";
    return raw.front() == 't' || raw.front() == 'f' ? "boolean" : "number";
}

// The raw path's: value.__ow_headers.traceparent, looked for only when the value names it.
void add_traceparent_header(std::string_view value, context_builder& builder) {
    if (value.find("__ow_headers") == std::string_view::npos) return;
    const auto headers = scan::find_member(value, "__ow_headers");
    if (!headers) return;
    const auto traceparent = scan::find_member(*headers, "traceparent");
    if (traceparent && traceparent->size() >= 2 && traceparent->front() == '"') {
        builder.add_traceparent_header(unquote(*traceparent));
    }
}

// The raw path's counterpart of context_of: builds the context and finds `value` (the last
// one wins, as with the DOM). False when the line is not an object.
bool scan_request(std::string_view line, std::string_view& value, context_builder& builder,
                  platform mode) {
    value = "{}";
    return scan::for_each_member(line, [&](std::string_view quoted, std::string_view raw) {
        const std::string key = unquote(quoted);
        if (key == "value" && mode == platform::lambda) {
            value = raw;  // any JSON, as it is
            add_traceparent_header(value, builder);
        } else if (key == "value") {
            if (const char* type = scalar_type_of_raw(raw)) {
                throw std::invalid_argument(scalar_value_error(type));
            }
            value = is_container(raw) ? raw : std::string_view("{}");
            add_traceparent_header(value, builder);
        } else if (raw.size() >= 2 && raw.front() == '"') {
            builder.add_string(key, unquote(raw));
        } else if (key == "deadline" && !raw.empty() && raw.front() != '{' && raw.front() != '[') {
            const json number = json::parse(raw, nullptr, false);
            if (number.is_number_integer()) builder.add_deadline_ms(number.get<long long>());
        }
    });
}

// JSON whitespace only: a newline inside a JSON string is always escaped.
void replace_newlines(std::string& answer) {
    std::replace(answer.begin(), answer.end(), '\n', ' ');
}

// The action's argument from the request's `value` (null when the request has none).
json take_args(json* value, platform mode) {
    if (value == nullptr) return json::object();
    if (mode == platform::lambda) return std::move(*value);  // any JSON, null included
    if (value->is_null()) return json::object();
    if (value->is_string()) throw std::invalid_argument(scalar_value_error("string"));
    if (value->is_boolean()) throw std::invalid_argument(scalar_value_error("boolean"));
    if (value->is_number()) throw std::invalid_argument(scalar_value_error("number"));
    return std::move(*value);
}

json* value_of(json& request) {
    auto it = request.find("value");
    return it == request.end() ? nullptr : &*it;
}

}  // namespace

std::string handle_request(std::string_view line, const entry_point& entry, platform mode) {
    const scan::bounds bounds = request_bounds();
    // The bound counts what the platform sent: the proxy appends one member of its own
    // (`proxy_deadline`, docs/protocol.md) to every line.
    const scan::bounds line_bounds{bounds.depth, bounds.members + 1};
    if (const scan::excess found = scan::check_bounds(line, line_bounds);
        found != scan::excess::none) {
        return invalid_request_answer(mode, "the request " + scan::excess_text(found, bounds));
    }
    // The lines the platforms send are read without a DOM of the whole line; any other is
    // read as a whole, with the same answers (request_scan.hpp).
    std::optional<request_parts> parts = scan_request_line(line);
    json request;
    if (!parts) {
        try {
            request = json::parse(line.data(), line.data() + line.size());
        } catch (const json::exception& e) {
            return invalid_request_answer(mode, e.what());
        }
    }
    const context ctx = parts                 ? context_of(*parts, mode)
                        : request.is_object() ? context_of(request, mode)
                                              : context();
    const serving current(ctx);
    json args;
    try {
        if (parts) {
            args = take_args(parts->value ? &*parts->value : nullptr, mode);
        } else {
            args = request.is_object() ? take_args(value_of(request), mode) : json::object();
        }
    } catch (const std::invalid_argument& e) {
        return invalid_request_answer(mode, e.what());
    }
    try {
        return dump(entry(std::move(args), ctx));
    } catch (const std::bad_alloc&) {
        return out_of_memory_answer(mode);
    } catch (const std::exception& e) {
        return exception_answer(mode, e.what());
    } catch (...) {
        return unknown_exception_answer(mode);
    }
}

void handle_raw_request(std::string_view line, const raw_entry_point& entry, std::string& answer,
                        platform mode) {
    answer.clear();
    std::string_view value;
    context_builder builder(mode);
    try {
        if (!scan_request(line, value, builder, mode)) {
            if (!json::accept(line)) throw std::invalid_argument("not a JSON object");
            value = "{}";  // valid JSON but no object: like the json path, no context, {}
            builder = context_builder(mode);
        }
    } catch (const std::exception& e) {
        answer = invalid_request_answer(mode, e.what());
        return;
    }
    const context ctx = builder.build();
    const serving current(ctx);
    try {
        entry(value, answer, ctx);
        if (answer.empty()) throw std::runtime_error("the action gave an empty answer");
        replace_newlines(answer);
    } catch (const std::bad_alloc&) {
        answer = out_of_memory_answer(mode);
    } catch (const std::exception& e) {
        answer = exception_answer(mode, e.what());
    } catch (...) {
        answer = unknown_exception_answer(mode);
    }
}

namespace {

// What the action wrote through std::cout, or std::cerr and std::clog: a stream buffer in
// front of the standard one that forwards every character at once (so the order with printf
// is kept) and remembers whether the last one ended its line. Before the end-of-activation
// sentinels (ours, or the proxy's after the answer), an unterminated line is ended, so the
// sentinel starts a line of its own. What the action writes with printf or write(2) is not
// seen here.
class line_tracker : public std::streambuf {
public:
    line_tracker(std::streambuf* inner, bool& open) : inner_(inner), open_(open) {}
    std::streambuf* inner() const { return inner_; }

protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        open_ = traits_type::to_char_type(c) != '\n';
        return inner_->sputc(traits_type::to_char_type(c));
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        if (n > 0) open_ = s[n - 1] != '\n';
        return inner_->sputn(s, n);
    }
    int sync() override { return inner_->pubsync(); }

private:
    std::streambuf* inner_;
    bool& open_;
};

// The trackers in front of std::cout, std::cerr and std::clog for as long as the loop runs.
class output_lines {
public:
    output_lines()
        : out_(std::cout.rdbuf(), out_open_),
          err_(std::cerr.rdbuf(), err_open_),
          log_(std::clog.rdbuf(), err_open_) {
        std::cout.rdbuf(&out_);
        std::cerr.rdbuf(&err_);
        std::clog.rdbuf(&log_);
    }
    ~output_lines() {
        std::cout.rdbuf(out_.inner());
        std::cerr.rdbuf(err_.inner());
        std::clog.rdbuf(log_.inner());
    }
    output_lines(const output_lines&) = delete;
    output_lines& operator=(const output_lines&) = delete;

    // Ends the line the activation left open on stdout and on stderr, through stdio (where
    // the iostreams' text went, in order).
    void end_open_lines() {
        if (out_open_ && std::fputc('\n', stdout) != EOF) out_open_ = false;
        if (err_open_ && std::fputc('\n', stderr) != EOF) err_open_ = false;
    }

    // True while std::cout, std::cerr and std::clog write straight into stdio's stdout and
    // stderr (libstdc++'s synchronised buffers, the default) through our trackers: then what
    // the action writes with them is in order with printf and our sentinels without a flush of
    // theirs. False after std::ios::sync_with_stdio(false) or a stream given another buffer.
    bool through_stdio() const {
        return through_stdio_ && std::cout.rdbuf() == &out_ && std::cerr.rdbuf() == &err_ &&
               std::clog.rdbuf() == &log_;
    }

private:
    static bool synchronised(std::streambuf* buffer) {
        return dynamic_cast<__gnu_cxx::stdio_sync_filebuf<char>*>(buffer) != nullptr;
    }

    bool out_open_ = false;
    bool err_open_ = false;
    line_tracker out_;
    line_tracker err_;
    line_tracker log_;
    bool through_stdio_ =
        synchronised(out_.inner()) && synchronised(err_.inner()) && synchronised(log_.inner());
};

// Serves request lines with handle(line, answer) until EOF.
// The text of an exception escaping a hook.
std::string what_of(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const std::bad_alloc&) {
        return OUT_OF_MEMORY;
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "unknown exception";
    }
}

// Runs the action's on_init: "" when it returned (or there is none), else "on_init: <what>"
// (also printed on stderr, where OW_LOG_INIT_ERROR's answer quotes it).
std::string run_on_init(const lifecycle& hooks) {
    if (!hooks.on_init) return {};
    std::string error;
    try {
        hooks.on_init();
    } catch (...) {
        error = "on_init: " + what_of(std::current_exception());
        std::cerr << "action error: " << error << std::endl;
    }
    std::cout.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    return error;
}

// The milliseconds of a shutdown line (after its prefix); 0 when unreadable.
std::chrono::milliseconds time_left_of(std::string_view line) {
    long long ms = 0;
    for (char c : line.substr(SHUTDOWN_LINE_PREFIX.size())) {
        if (c < '0' || c > '9' || ms > 1'000'000'000'000LL) break;
        ms = ms * 10 + (c - '0');
    }
    return std::chrono::milliseconds(ms);
}

// Runs the action's on_shutdown; an exception is logged (the process ends anyway).
void run_on_shutdown(const lifecycle& hooks, std::string_view line) {
    try {
        hooks.on_shutdown(time_left_of(line));
    } catch (...) {
        std::cerr << "action error: on_shutdown: " << what_of(std::current_exception())
                  << std::endl;
    }
    std::cout.flush();
    std::cerr.flush();
    std::fflush(stdout);
    std::fflush(stderr);
}

template <class Handle>
int serve(const Handle& handle, const lifecycle& hooks, int in_fd, int out_fd) {
    install_crash_report();  // a crash prints a backtrace first (crash_report.hpp)
    // The ack; when the proxy offers pipelining (ours does, see docs/protocol.md) it is
    // accepted in the ack, and the sentinels after each activation are then written here,
    // where they are in order with the action's own output whatever the proxy has queued.
    const char* ack = std::getenv("__OW_WAIT_FOR_ACK");
    const bool acked = ack != nullptr && *ack != '\0';
    const char* offer = std::getenv("ACTIONLOOP_PIPELINE");
    const bool pipelined = acked && offer != nullptr && std::string_view(offer) == "1";
    // Read once: each activation is then served by its platform's rules at no cost. Lambda
    // mode writes no sentinels (they are OpenWhisk's log markers; Lambda has none).
    const platform mode = platform_of_environment();
    // Nor where the proxy says nobody reads them (ACTIONLOOP_SENTINELS=0: single-entrypoint
    // mode with plain log lines).
    const char* sentinels_env = std::getenv("ACTIONLOOP_SENTINELS");
    const bool sentinels = mode == platform::openwhisk &&
                           !(sentinels_env != nullptr && std::string_view(sentinels_env) == "0");
    answer_writer out(out_fd, pipelined, stdout, stderr, sentinels);
    set_crash_flush(&answer_writer::flush_held);
    // The action's on_init, before the ack: its exception is the init's error.
    if (const std::string error = run_on_init(hooks); !error.empty()) {
        if (acked) out.ack_error(error);
        return 1;
    }
    const bool shutdown_hook = static_cast<bool>(hooks.on_shutdown);
    if (acked && !out.ack(shutdown_hook)) return 1;

    output_lines lines;
    line_reader input(in_fd);
    std::string_view line;
    std::string answer;
    while (input.next(line)) {
        // The proxy's shutdown line (sent only when the ack offered it): its first byte never
        // starts an activation's line, so one compare costs the others nothing.
        if (shutdown_hook && !line.empty() && line.front() == SHUTDOWN_LINE_PREFIX.front() &&
            line.substr(0, SHUTDOWN_LINE_PREFIX.size()) == SHUTDOWN_LINE_PREFIX) {
            const bool flushed = out.flush();
            run_on_shutdown(hooks, line);
            return flushed ? 0 : 1;
        }
        out.started();
        try {
            handle(line, answer, mode);
        } catch (const std::bad_alloc&) {  // outside the action's function (the request's DOM)
            answer = out_of_memory_answer(mode);
        }
        // Logs first, so they come before the end-of-activation sentinels. When the iostreams
        // write into stdio, `out` flushes stdio itself, or keeps the batch there (an iostream
        // flush would flush stdio). Otherwise their text is flushed here, and the answer is
        // never held: their next write would bypass the held sentinels.
        const bool through_stdio = lines.through_stdio();
        if (!through_stdio) {
            std::cout.flush();
            std::cerr.flush();
        }
        // An unterminated line of the action's ends here, before the sentinels (written next
        // by `out` when pipelined, else by the proxy once it has the answer).
        lines.end_open_lines();
        if (!out.answer(answer, through_stdio && input.has_line())) return 1;
    }
    return out.flush() ? 0 : 1;
}

}  // namespace

int run_loop(const entry_point& entry, const lifecycle& hooks, int in_fd, int out_fd) {
    return serve([&entry](std::string_view line, std::string& answer,
                          platform mode) { answer = handle_request(line, entry, mode); },
                 hooks, in_fd, out_fd);
}

int run_raw_loop(const raw_entry_point& entry, const lifecycle& hooks, int in_fd, int out_fd) {
    return serve([&entry](std::string_view line, std::string& answer,
                          platform mode) { handle_raw_request(line, entry, answer, mode); },
                 hooks, in_fd, out_fd);
}

}  // namespace actionloop
