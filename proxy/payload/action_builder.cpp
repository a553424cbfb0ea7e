#include "payload/action_builder.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "logging.hpp"
#include "payload/compiler.hpp"
#include "payload/exec_file.hpp"
#include "payload/extractor.hpp"

namespace actionloop {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

action_builder::action_builder(const settings& config, const env_map& env)
    : settings_(config), env_(env) {
    fs::create_directories(settings_.action_dir);
    // Numbering continues from the highest existing action/N, as upstream.
    for (const auto& entry : fs::directory_iterator(settings_.action_dir)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        if (name.size() < 10) last_dir_ = std::max(last_dir_, std::stol(name));
    }
}

std::string action_builder::next_dir() {
    return settings_.action_dir + "/" + std::to_string(++last_dir_);
}

std::string action_builder::build(const std::string& dir, const std::string& payload,
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
        return ec ? ec.message() : make_exec_runnable(bin.string());
    }
    fs::create_directories(bin, ec);
    const std::string error = run_compiler({settings_.compiler, main, src.string(), bin.string(),
                                            env_.for_action(), settings_.compile_timeout_ms});
    return error.empty() ? make_exec_runnable(bin.string()) : error;
}

std::optional<std::string> action_builder::check_execution_env(const std::string& dir) const {
    if (settings_.execution_env.empty()) return std::nullopt;
    // Upstream's "./action/N/…" for the usual relative folder; an absolute one (Lambda mode's
    // under TMPDIR) as it is: "./" + "/tmp/…" would be a path relative to the cwd.
    const std::string path = (dir.rfind('/', 0) == 0 ? "" : "./") + dir + "/bin/exec.env";
    std::ifstream file(path);
    if (!file) {
        // Upstream's words, then what to do: a zip compiled without OW_EXECUTION_ENV (the
        // README's, by a local build) sent to the image is the usual case.
        const std::string& want = settings_.execution_env;
        return "open " + path + ": no such file or directory (this runtime's OW_EXECUTION_ENV is " +
               want + ": it starts only an action whose exec.env holds that; compile and proxy " +
               "-compile write it when OW_EXECUTION_ENV=" + want +
               " is set where they run, as in the image)";
    }
    std::stringstream content;
    content << file.rdbuf();
    if (trim(content.str()) == settings_.execution_env) return std::nullopt;
    spdlog::warn("exec.env mismatch: expected '{}', the action's is '{}'", settings_.execution_env,
                 trim(content.str()));
    write_stdout("Expected exec.env should start with " + settings_.execution_env +
                 "\nActual value: " + content.str());
    return "Execution environment version mismatch. See logs for details.";
}

}  // namespace actionloop
