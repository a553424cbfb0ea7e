// /init: check → decode → unpack → compile → start → {"ok":true} (docs/protocol.md, /init).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "action_proxy.hpp"
#include "http/http_error.hpp"
#include "logging.hpp"
#include "payload/compiler.hpp"
#include "payload/extractor.hpp"
#include "payload/init_request.hpp"

namespace actionloop {

namespace fs = std::filesystem;

namespace {

const char* const REINIT = "Cannot initialize the action more than once.";
const char* const NO_CODE = "Missing main/no code to execute.";
const char* const BUILD_FAILED =
    "The action failed to generate or locate a binary. See logs for details.";
const char* const START_FAILED = "Cannot start action. Check logs for details.";

std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

http_answer action_proxy::init(const std::string& body) {
    std::lock_guard<std::mutex> one_at_a_time(init_lock_);
    if (initialized_ && !settings_.debug) {
        go_log(REINIT);
        throw http_error(FORBIDDEN, REINIT);
    }
    init_request request = parse_init_request(body);
    if (request.code.empty()) throw http_error(FORBIDDEN, NO_CODE);
    env_.apply(request.env);
    std::string main = request.main.empty() ? "main" : request.main;
    std::string payload = request.binary ? decode_base64(request.code) : std::move(request.code);
    spdlog::debug("init: {} bytes of code, main '{}'", payload.size(), main);

    std::string dir = next_action_dir();
    std::string error = build_action(dir, payload, main);
    if (!error.empty()) {
        std::error_code ec;
        if (!settings_.debug)
            fs::remove_all(dir, ec);  // upstream keeps it; a full disk would stay full
        fail_init(error, BUILD_FAILED, "");
    }
    try {
        check_execution_env(dir);
    } catch (const start_error& e) {
        fail_init(e.what(), START_FAILED, "cannot start action: ");  // the dir is kept
    }
    std::unique_ptr<executor> started;
    try {
        started = start_action(dir);
    } catch (const start_error& e) {
        std::error_code ec;
        if (!settings_.debug) fs::remove_all(dir, ec);
        fail_init(e.what(), START_FAILED, "cannot start action: ", e.stderr_tail);
    }
    install(std::move(started));
    initialized_ = true;
    return {OK, "{\"ok\":true}\n"};
}

// The started action becomes the current one, on the loop (posted before /init's answer, so
// a /run that follows the answer finds it). Under -debug it replaces a previous one, which
// serves what was sent to it before and is then stopped.
void action_proxy::install(std::unique_ptr<executor> started) {
    {
        std::unique_lock<std::mutex> guard(attach_lock_);
        attached_.wait(guard, [this] { return loop_ != nullptr; });
    }
    activation_engine::hooks hooks;
    hooks.ended = [this](const activation_engine& engine, executor::outcome outcome) {
        end_activation(engine, outcome);
    };
    hooks.restarted = [this] { restarts_.fetch_add(1, std::memory_order_relaxed); };
    auto engine = std::make_shared<activation_engine>(*loop_, *blocking_, std::move(started),
                                                      std::move(hooks));
    boost::asio::post(*loop_, [this, engine = std::move(engine)]() mutable {
        if (engine_) engine_->retire();
        engine_ = std::move(engine);
        engine_->start();
    });
}

std::string action_proxy::next_action_dir() {
    return settings_.action_dir + "/" + std::to_string(++last_dir_);
}

// Unpacks the payload into dir/src and turns it into dir/bin: renamed as is when it is
// already runnable (or there is no compiler), compiled otherwise. Returns the error text.
std::string action_proxy::build_action(const std::string& dir, const std::string& payload,
                                       const std::string& main) {
    const fs::path src = dir + "/src";
    const fs::path bin = dir + "/bin";
    fs::path candidate = src / "exec";
    try {
        fs::create_directories(src);
        if (!settings_.save_jar.empty() && is_jar(payload)) {
            candidate = src / settings_.save_jar;  // kept unexpanded, for a Java compiler
            std::ofstream(candidate, std::ios::binary) << payload;
            fs::permissions(candidate, fs::perms(0644));
        } else {
            unpack_payload(payload, src);
        }
    } catch (const std::exception& e) {
        return e.what();
    }
    std::error_code ec;
    if (settings_.compiler.empty() || is_runnable_file(candidate)) {
        fs::rename(src, bin, ec);
        return ec ? ec.message() : std::string();
    }
    fs::create_directories(bin, ec);
    return run_compiler({settings_.compiler, main, src.string(), bin.string(), env_.for_action(),
                         settings_.compile_timeout_ms});
}

void action_proxy::check_execution_env(const std::string& dir) {
    if (settings_.execution_env.empty()) return;
    const std::string path = "./" + dir + "/bin/exec.env";
    std::ifstream file(path);
    if (!file) throw start_error("open " + path + ": no such file or directory");
    std::stringstream content;
    content << file.rdbuf();
    if (trim(content.str()) != settings_.execution_env) {
        spdlog::warn("exec.env mismatch: expected '{}', the action's is '{}'",
                     settings_.execution_env, trim(content.str()));
        write_stdout("Expected exec.env should start with " + settings_.execution_env +
                     "\nActual value: " + content.str());
        throw start_error("Execution environment version mismatch. See logs for details.");
    }
}

std::unique_ptr<executor> action_proxy::start_action(const std::string& dir) {
    executor_options options;
    // The action runs in its own directory, so the files shipped next to exec are found by
    // a relative path; the command is absolute for the same reason.
    const fs::path bin = fs::absolute(dir + "/bin");
    options.command = (bin / "exec").string();
    options.cwd = bin.string();
    ::chmod(options.command.c_str(), 0755);
    options.env = env_.for_action();
    options.wait_for_ack = !settings_.wait_for_ack.empty();
    // The offer of pipelining (answered in the ack; our launcher accepts it).
    if (options.wait_for_ack && settings_.pipeline) options.env.push_back("ACTIONLOOP_PIPELINE=1");
    options.ack_timeout_ms = settings_.ack_timeout_ms;
    options.max_answer_bytes = settings_.max_answer_bytes;
    auto started = std::make_unique<executor>(std::move(options));
    started->start();
    return started;
}

// Upstream's two ways of reporting an init failure: the raw text in the answer, or (with
// OW_LOG_INIT_ERROR) the text on stderr, the sentinels, and a generic answer.
// With OW_LOG_INIT_ERROR, an action that failed to start is also quoted in the answer: the
// last lines it wrote to stderr (`stderr_tail`, at most 20 lines and 4 KiB).
void action_proxy::fail_init(const std::string& error, const char* generic,
                             const std::string& prefix, const std::string& stderr_tail) {
    if (!settings_.log_init_error) throw http_error(BAD_GATEWAY, prefix + error);
    write_stderr(error + "\n");
    write_sentinels();
    if (stderr_tail.empty()) throw http_error(BAD_GATEWAY, generic);
    throw http_error(BAD_GATEWAY, std::string(generic) + " (" + error +
                                      ") The action's last lines on stderr:\n" + stderr_tail);
}

}  // namespace actionloop
