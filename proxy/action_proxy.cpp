// action_proxy construction and the offline -compile mode.
#include "action_proxy.hpp"

#include <filesystem>
#include <stdexcept>

#include "payload/extractor.hpp"

namespace actionloop {

namespace fs = std::filesystem;

action_proxy::action_proxy(settings config, char** environ_entries)
    : settings_(std::move(config)),
      env_(ACTIONLOOP_VERSION, settings_.execution_env, settings_.wait_for_ack, environ_entries) {
    if (settings_.debug) env_.apply({{"OW_DEBUG", "/tmp/action.log"}});  // as upstream
    fs::create_directories(settings_.action_dir);
    // Numbering continues from the highest existing action/N, as upstream.
    for (const auto& entry : fs::directory_iterator(settings_.action_dir)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        if (name.size() < 10) last_dir_ = std::max(last_dir_, std::stol(name));
    }
}

void action_proxy::attach(boost::asio::io_context& loop, boost::asio::thread_pool& blocking) {
    std::lock_guard<std::mutex> guard(attach_lock_);
    loop_ = &loop;
    blocking_ = &blocking;
    attached_.notify_all();
}

std::string action_proxy::compile_to_zip(const std::string& payload, const std::string& main,
                                         const std::string& env_json) {
    if (payload.empty()) {
        throw std::runtime_error(
            "proxy -compile: stdin is empty; give the action on stdin: a source file or a zip "
            "of sources (built with OW_COMPILER), or an executable, e.g. "
            "proxy -compile main < main.cpp > action.zip");
    }
    if (!env_json.empty()) {
        auto env = nlohmann::json::parse(env_json, nullptr, false);  // invalid: ignored
        if (!env.is_discarded()) env_.apply(env);
    }
    std::string dir = next_action_dir();
    std::string error = build_action(dir, payload, main.empty() ? "main" : main);
    if (!error.empty()) throw std::runtime_error(error);
    return zip_directory(dir + "/bin");
}

}  // namespace actionloop
