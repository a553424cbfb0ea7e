// The bootstrap's pure part: the task root and the command line (task_root.hpp).
#include "bootstrap/task_root.hpp"

namespace actionloop::bootstrap {

namespace {

// `folder`/`name`, with one slash between them whatever `folder` ends with.
std::string join(const std::string& folder, const char* name) {
    if (!folder.empty() && folder.back() == '/') return folder + name;
    return folder + '/' + name;
}

}  // namespace

std::string folder_of(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return "";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

std::string absolute(const std::string& path, const std::string& cwd) {
    std::string out = path;
    if (!out.empty() && out.front() != '/' && !cwd.empty()) out = join(cwd, path.c_str());
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    return out;
}

std::string task_root(const char* lambda_task_root, const std::string& self_exe, const char* argv0,
                      const std::string& cwd) {
    std::string root;
    if (lambda_task_root != nullptr && *lambda_task_root != '\0') {
        root = lambda_task_root;
    } else if (!self_exe.empty()) {
        root = folder_of(self_exe);
    } else if (argv0 != nullptr) {
        root = folder_of(argv0);
    }
    return root.empty() ? root : absolute(root, cwd);
}

start_plan plan_start(const std::string& root, const std::vector<std::string>& args) {
    start_plan plan;
    plan.library_path = join(root, "lib");
    plan.loader = join(plan.library_path, LOADER_NAME);
    plan.proxy = join(join(root, "bin"), "proxy");
    plan.argv = {plan.loader, "--library-path", plan.library_path, plan.proxy};
    plan.argv.insert(plan.argv.end(), args.begin(), args.end());
    return plan;
}

}  // namespace actionloop::bootstrap
