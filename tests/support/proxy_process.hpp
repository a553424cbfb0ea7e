// proxy_process: the real proxy binary as a child process, on a free loopback port, in a
// fresh temp working directory, with an explicit environment and its stdout and stderr in
// files — plus the OpenWhisk test-harness requests (initPayload, runPayload, checkStreams).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "process_tools.hpp"
#include "test_util.hpp"

namespace support {

/// The activation log sentinel, without its newline.
inline constexpr const char* SENTINEL = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX";

/// Occurrences of SENTINEL in `text`.
std::size_t sentinel_count(const std::string& text);

/// `text` with every sentinel removed, then trimmed (OpenWhisk's checkStreams).
std::string strip_sentinels(const std::string& text);

/// isBinaryCode: trimmed `code` non-empty, length a multiple of 4, base64 alphabet.
bool is_binary_code(const std::string& code);

/// The body OpenWhisk's `initPayload(code, main, env)` sends.
nlohmann::json init_payload(const std::string& code, const std::string& main = "main",
                            const nlohmann::json* env = nullptr);

/// How to start the proxy.
struct proxy_options {
    env_map env;                    // on top of PATH (see with_path)
    std::vector<std::string> args;  // after `-port N`
    bool with_path = true;          // give the proxy this process's PATH
    /// Called with the working dir before the proxy starts (e.g. to pre-create action/5).
    std::function<void(const std::filesystem::path&)> prepare;
    std::chrono::milliseconds start_timeout = std::chrono::seconds(15);
};

/// A proxy started with `env` (on top of PATH) and `args` (after `-port N`).
proxy_options with_env(env_map env, std::vector<std::string> args = {});

/// The C++ runtime as the image runs it: the real `compile` as OW_COMPILER and the ack
/// (so the launcher accepts pipelining), plus `extra`.
proxy_options cpp_runtime(env_map extra = {});

/// What checkStreams leaves after removing sentinels and trimming.
struct stream_texts {
    std::string out;
    std::string err;
};

class proxy_process {
public:
    explicit proxy_process(proxy_options options = {});
    ~proxy_process();
    proxy_process(const proxy_process&) = delete;
    proxy_process& operator=(const proxy_process&) = delete;

    int port() const { return port_; }
    pid_t pid() const { return pid_; }
    /// The proxy's working directory (its ./action lives here).
    const std::filesystem::path& cwd() const { return cwd_; }
    /// The temp root holding cwd() and the two log files; removed by the destructor.
    const std::filesystem::path& root() const { return root_.path(); }

    http_reply post(const std::string& path, const std::string& body,
                    std::chrono::seconds timeout = std::chrono::seconds(120)) const;
    http_reply get(const std::string& path) const;
    /// POST /init with init_payload(code, main, env).
    http_reply init(const std::string& code, const std::string& main = "main",
                    const nlohmann::json* env = nullptr) const;
    /// POST /run with {"value": value, ...extra}.
    http_reply run(const nlohmann::json& value,
                   const nlohmann::json& extra = nlohmann::json::object(),
                   std::chrono::seconds timeout = std::chrono::seconds(60)) const;
    /// POST /run with `body` as is.
    http_reply run_raw(const std::string& body,
                       std::chrono::seconds timeout = std::chrono::seconds(60)) const;
    /// Sends raw bytes on a fresh connection (see raw_exchange).
    http_reply raw(const std::string& request,
                   std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

    std::string stdout_text() const;
    std::string stderr_text() const;
    /// Waits until both streams hold at least `expected` sentinels (false: `timeout` passed).
    /// The action's lines may trail its answers by a few milliseconds (output_pipe.hpp).
    bool wait_for_sentinels(std::size_t expected, std::chrono::milliseconds timeout) const;
    /// Waits (bounded) until both streams hold `expected` sentinels, CHECKs that each holds
    /// exactly that many, and returns both texts without sentinels, trimmed.
    stream_texts check_streams(std::size_t expected) const;

    /// Whether the proxy process is still running.
    bool running();
    /// SIGINT (the proxy's immediate stop), then SIGKILL after a grace period; reaps it and
    /// kills whatever it started.
    /// Returns the wait status (0 when already stopped).
    int stop();

    /// Live direct children of the proxy (its action processes, compilers, …).
    std::vector<pid_t> children() const;

private:
    void start(const proxy_options& options);
    void wait_until_listening(std::chrono::milliseconds timeout);

    temp_dir root_;
    std::filesystem::path cwd_;
    int port_ = 0;
    pid_t pid_ = -1;
    bool running_ = false;
    int status_ = 0;
};

/// Initializes `proxy` with the fixture `script` (tests/fixtures) and requires a 200.
void init_with(const proxy_process& proxy, const std::string& script);

}  // namespace support
