// lambda_api_process: the real `lambda-api` binary (the local Lambda Runtime API,
// docs/lambda-api.md) as a child process on a free loopback port, its stderr in a file, with
// a client for each of its endpoints. Suites that test a runtime against it (the proxy in
// Lambda mode) give a runtime address() as AWS_LAMBDA_RUNTIME_API.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "process_tools.hpp"
#include "test_util.hpp"

namespace support {

class lambda_api_process {
public:
    /// Starts `lambda-api -port N ARGS…` and waits until it listens.
    explicit lambda_api_process(const std::vector<std::string>& args = {});
    ~lambda_api_process();
    lambda_api_process(const lambda_api_process&) = delete;
    lambda_api_process& operator=(const lambda_api_process&) = delete;

    int port() const { return port_; }
    /// "127.0.0.1:PORT", for AWS_LAMBDA_RUNTIME_API.
    std::string address() const;

    /// GET /2018-06-01/runtime/invocation/next (it parks until an invoke comes).
    http_reply next(std::chrono::seconds timeout = std::chrono::seconds(30)) const;
    /// POST /2015-03-31/functions/function/invocations with `event`.
    http_reply invoke(const std::string& event, const header_map& headers = {},
                      std::chrono::seconds timeout = std::chrono::seconds(30)) const;
    /// POST /2018-06-01/runtime/invocation/ID/response and …/ID/error.
    http_reply respond(const std::string& id, const std::string& body,
                       const header_map& headers = {}) const;
    http_reply fail(const std::string& id, const std::string& body,
                    const header_map& headers = {}) const;
    /// POST /2018-06-01/runtime/init/error.
    http_reply init_error(const std::string& body, const header_map& headers = {}) const;
    /// GET /_lambda-api/stats, parsed (a discarded value when it failed).
    nlohmann::json stats() const;
    /// Polls the stats until `done` holds for them (false: `timeout` passed).
    bool wait_for(const std::function<bool(const nlohmann::json&)>& done,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

    std::string stderr_text() const;
    /// Whether the process is still running.
    bool running();
    /// SIGTERM, then SIGKILL after a grace period; reaps it. Returns the wait status.
    int stop();

private:
    void start(const std::vector<std::string>& args);

    temp_dir root_;
    int port_ = 0;
    pid_t pid_ = -1;
    bool running_ = false;
    int status_ = 0;
};

/// Runs `lambda-api ARGS…` to its end (a bad flag, -h): its exit code and output.
command_result run_lambda_api(const std::vector<std::string>& args);

}  // namespace support
