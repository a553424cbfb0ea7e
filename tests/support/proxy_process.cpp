#include "proxy_process.hpp"

#include <signal.h>

#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include <doctest/doctest.h>

#include "test_util.hpp"

namespace support {
namespace {

constexpr int START_ATTEMPTS = 3;

bool base64_alphabet(const std::string& text) {
    std::size_t padding = 0;
    for (char c : text) {
        const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/';
        if (c == '=') {
            ++padding;
        } else if (!plain || padding > 0) {
            return false;
        }
    }
    return padding <= 2;
}

}  // namespace

std::size_t sentinel_count(const std::string& text) { return count_occurrences(text, SENTINEL); }

std::string strip_sentinels(const std::string& text) {
    return trim(replace_all(text, SENTINEL, ""));
}

bool is_binary_code(const std::string& code) {
    const std::string trimmed = trim(code);
    return !trimmed.empty() && trimmed.size() % 4 == 0 && base64_alphabet(trimmed);
}

nlohmann::json init_payload(const std::string& code, const std::string& main,
                            const nlohmann::json* env) {
    nlohmann::json value = {{"code", code},
                            {"main", main},
                            {"binary", is_binary_code(code)},
                            {"env", env != nullptr ? *env : nlohmann::json(nullptr)}};
    return {{"value", value}};
}

proxy_process::proxy_process(proxy_options options)
    : root_("actionloop-proxy"), cwd_(root_.path() / "work") {
    become_subreaper();
    std::filesystem::create_directories(cwd_);
    if (options.prepare) {
        options.prepare(cwd_);
    }
    for (int attempt = 1;; ++attempt) {
        try {
            start(options);
            wait_until_listening(options.start_timeout);
            return;
        } catch (const std::exception&) {
            stop();
            if (attempt == START_ATTEMPTS) {
                throw;
            }
        }
    }
}

proxy_process::~proxy_process() { stop(); }

void proxy_process::start(const proxy_options& options) {
    port_ = pick_free_port();
    spawn_spec spec;
    spec.argv = {ACTIONLOOP_PROXY_BIN, "-port", std::to_string(port_)};
    spec.argv.insert(spec.argv.end(), options.args.begin(), options.args.end());
    spec.env = options.with_path ? path_only_env() : env_map{};
    // Under `scripts/test --tsan` the proxy is instrumented: it must halt on a report and
    // write it where the script collects it, like the test executables.
    if (const char* tsan = std::getenv("TSAN_OPTIONS")) {
        spec.env["TSAN_OPTIONS"] = tsan;
    }
    for (const auto& [name, value] : options.env) {
        spec.env[name] = value;
    }
    spec.cwd = cwd_;
    spec.stdout_file = root_.path() / "proxy.stdout";
    spec.stderr_file = root_.path() / "proxy.stderr";
    pid_ = spawn_process(spec);
    running_ = true;
}

void proxy_process::wait_until_listening(std::chrono::milliseconds timeout) {
    const bool up = wait_until([this] { return !running() || port_accepts(port_); }, timeout);
    if (!up || !running()) {
        throw std::runtime_error("the proxy did not start listening on port " +
                                 std::to_string(port_) + "; stderr: " + stderr_text());
    }
}

http_reply proxy_process::post(const std::string& path, const std::string& body,
                               std::chrono::seconds timeout) const {
    return http_post(port_, path, body, timeout);
}

http_reply proxy_process::get(const std::string& path) const { return http_get(port_, path); }

http_reply proxy_process::init(const std::string& code, const std::string& main,
                               const nlohmann::json* env) const {
    return post("/init", init_payload(code, main, env).dump());
}

http_reply proxy_process::run(const nlohmann::json& value, const nlohmann::json& extra,
                              std::chrono::seconds timeout) const {
    nlohmann::json body = extra;
    body["value"] = value;
    return run_raw(body.dump(), timeout);
}

http_reply proxy_process::run_raw(const std::string& body, std::chrono::seconds timeout) const {
    return post("/run", body, timeout);
}

http_reply proxy_process::raw(const std::string& request, std::chrono::milliseconds timeout) const {
    return raw_exchange(port_, request, timeout);
}

std::string proxy_process::stdout_text() const { return read_file(root_.path() / "proxy.stdout"); }

std::string proxy_process::stderr_text() const { return read_file(root_.path() / "proxy.stderr"); }

proxy_options with_env(env_map env, std::vector<std::string> args) {
    proxy_options options;
    options.env = std::move(env);
    options.args = std::move(args);
    return options;
}

proxy_options cpp_runtime(env_map extra) {
    proxy_options options;
    options.env = std::move(extra);
    options.env["OW_COMPILER"] = compiler_script().string();
    options.env["OW_WAIT_FOR_ACK"] = "1";
    return options;
}

bool proxy_process::wait_for_sentinels(std::size_t expected,
                                       std::chrono::milliseconds timeout) const {
    return wait_until(
        [&] {
            return sentinel_count(stdout_text()) >= expected &&
                   sentinel_count(stderr_text()) >= expected;
        },
        timeout);
}

stream_texts proxy_process::check_streams(std::size_t expected) const {
    wait_for_sentinels(expected, std::chrono::seconds(2));
    const std::string out = stdout_text();
    const std::string err = stderr_text();
    CHECK_MESSAGE(sentinel_count(out) == expected, "stdout: " << out);
    CHECK_MESSAGE(sentinel_count(err) == expected, "stderr: " << err);
    return {strip_sentinels(out), strip_sentinels(err)};
}

bool proxy_process::running() {
    if (running_ && try_reap(pid_, status_)) {
        running_ = false;
    }
    return running_;
}

int proxy_process::stop() {
    if (pid_ <= 0) {
        return 0;
    }
    const std::vector<pid_t> leftovers = descendant_pids(pid_);
    if (running_) {
        // SIGINT first: the immediate stop. SIGTERM would let activations still in flight
        // (a test's hung action) finish first, up to OW_SHUTDOWN_TIMEOUT_MS.
        ::kill(pid_, SIGINT);
        status_ = terminate_and_reap(pid_, std::chrono::seconds(3));
        running_ = false;
    }
    ::kill(-pid_, SIGKILL);  // its process group: actions it did not move elsewhere
    for (pid_t pid : leftovers) {
        ::kill(pid, SIGKILL);
    }
    kill_orphans();
    pid_ = -1;
    return status_;
}

std::vector<pid_t> proxy_process::children() const {
    return pid_ > 0 ? child_pids(pid_) : std::vector<pid_t>{};
}

void init_with(const proxy_process& proxy, const std::string& script) {
    REQUIRE(proxy.init(fixture_text(script)).status == 200);
}

}  // namespace support
