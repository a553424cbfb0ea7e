#include "lambda_api_process.hpp"

#include <signal.h>

#include <stdexcept>

#include "process_tools.hpp"

namespace support {
namespace {

constexpr int API_START_ATTEMPTS = 3;
constexpr const char* INVOCATION = "/2018-06-01/runtime/invocation/";

}  // namespace

lambda_api_process::lambda_api_process(const std::vector<std::string>& args) : root_("lambda-api") {
    for (int attempt = 1;; ++attempt) {
        start(args);
        // Listening, or gone (its port taken between pick_free_port and its bind: again).
        const bool up = wait_until([this] { return !running() || port_accepts(port_); },
                                   std::chrono::seconds(10));
        if (up && running()) return;
        stop();
        if (attempt == API_START_ATTEMPTS) {
            throw std::runtime_error("lambda-api did not start listening on port " +
                                     std::to_string(port_) + "; stderr: " + stderr_text());
        }
    }
}

lambda_api_process::~lambda_api_process() { stop(); }

void lambda_api_process::start(const std::vector<std::string>& args) {
    port_ = pick_free_port();
    spawn_spec spec;
    spec.argv = {ACTIONLOOP_LAMBDA_API_BIN, "-port", std::to_string(port_)};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = path_only_env();
    spec.cwd = root_.path();
    spec.stdout_file = root_.path() / "lambda-api.stdout";
    spec.stderr_file = root_.path() / "lambda-api.stderr";
    pid_ = spawn_process(spec);
    running_ = true;
}

std::string lambda_api_process::address() const { return "127.0.0.1:" + std::to_string(port_); }

http_reply lambda_api_process::next(std::chrono::seconds timeout) const {
    return http_get(port_, std::string(INVOCATION) + "next", timeout);
}

http_reply lambda_api_process::invoke(const std::string& event, const header_map& headers,
                                      std::chrono::seconds timeout) const {
    return http_post(port_, "/2015-03-31/functions/function/invocations", event, timeout, headers);
}

http_reply lambda_api_process::respond(const std::string& id, const std::string& body,
                                       const header_map& headers) const {
    return http_post(port_, INVOCATION + id + "/response", body, std::chrono::seconds(30), headers);
}

http_reply lambda_api_process::fail(const std::string& id, const std::string& body,
                                    const header_map& headers) const {
    return http_post(port_, INVOCATION + id + "/error", body, std::chrono::seconds(30), headers);
}

http_reply lambda_api_process::init_error(const std::string& body,
                                          const header_map& headers) const {
    return http_post(port_, "/2018-06-01/runtime/init/error", body, std::chrono::seconds(30),
                     headers);
}

nlohmann::json lambda_api_process::stats() const {
    const http_reply reply = http_get(port_, "/_lambda-api/stats", std::chrono::seconds(10));
    return nlohmann::json::parse(reply.body, nullptr, false);
}

bool lambda_api_process::wait_for(const std::function<bool(const nlohmann::json&)>& done,
                                  std::chrono::milliseconds timeout) const {
    return wait_until(
        [&] {
            const nlohmann::json s = stats();
            return s.is_object() && done(s);
        },
        timeout);
}

std::string lambda_api_process::stderr_text() const {
    return read_file(root_.path() / "lambda-api.stderr");
}

bool lambda_api_process::running() {
    if (running_ && try_reap(pid_, status_)) running_ = false;
    return running_;
}

int lambda_api_process::stop() {
    if (pid_ <= 0) return 0;
    if (running_) {
        status_ = terminate_and_reap(pid_, std::chrono::seconds(3));
        running_ = false;
    }
    pid_ = -1;
    return status_;
}

command_result run_lambda_api(const std::vector<std::string>& args) {
    std::vector<std::string> argv{ACTIONLOOP_LAMBDA_API_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    temp_dir cwd("lambda-api-cmd");
    return run_command(argv, "", path_only_env(), cwd.path(), std::chrono::seconds(30));
}

}  // namespace support
