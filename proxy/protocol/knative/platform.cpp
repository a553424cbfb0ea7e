// The environment of single-entrypoint mode, read once at start-up.
#include "protocol/knative/platform.hpp"
#include "protocol/knative/text.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>

#include <boost/beast/core/string.hpp>

namespace actionloop::knative {
namespace {

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

bool is_true(const char* value) { return value != nullptr && boost::beast::iequals(value, "true"); }

std::string text_of(const char* value) { return value != nullptr ? value : ""; }

std::string read_whole(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw std::runtime_error("OW_ACTION_CODE_FILE: cannot read " + path);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

}  // namespace

platform platform_of(const char* value) {
    if (value == nullptr) return platform::openwhisk;
    const std::string text = value;
    if (text == "openwhisk") return platform::openwhisk;
    if (text == "knative") return platform::knative;
    return platform::unsupported;
}

std::string unsupported_platform_message(const std::string& value) {
    return "__OW_RUNTIME_PLATFORM (" + value +
           ") is not supported by the runtime. Accepted values: openwhisk (the default, also "
           "when unset) and knative, in lower case.";
}

bool method_set::allows(const std::string& method) const {
    if (method == "GET" || method == "HEAD") return get;
    if (method == "POST") return post;
    if (method == "PUT") return put;
    if (method == "DELETE") return del;
    if (method == "OPTIONS") return options;
    return false;
}

method_set parse_http_methods(const char* value, std::vector<std::string>& warnings) {
    method_set methods;
    const std::string text = text_of(value);
    if (text.size() < 2 || text.front() != '[' || text.back() != ']') return methods;
    methods.post = false;
    const std::string list = text.substr(1, text.size() - 2);
    size_t start = 0;
    while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        const std::string name = upper(trim(list.substr(start, comma - start)));
        if (name == "GET") {
            methods.get = true;
        } else if (name == "POST") {
            methods.post = true;
        } else if (name == "PUT") {
            methods.put = true;
        } else if (name == "DELETE") {
            methods.del = true;
        } else if (name == "OPTIONS") {
            methods.options = true;
        } else {
            warnings.push_back("__OW_HTTP_METHODS: ignoring the unknown method '" + name + "'");
        }
        start = comma + 1;
    }
    return methods;
}

std::optional<dedicated_action> dedicated_from_env(const env_lookup& env) {
    dedicated_action action;
    action.code = text_of(env("__OW_ACTION_CODE"));
    if (action.code.empty()) {
        const std::string file = text_of(env("OW_ACTION_CODE_FILE"));
        if (file.empty()) return std::nullopt;
        action.code = read_whole(file);
        if (action.code.empty()) return std::nullopt;
    }
    action.main = text_of(env("__OW_ACTION_MAIN"));
    action.binary = is_true(env("__OW_ACTION_BINARY"));
    action.raw = is_true(env("__OW_ACTION_RAW"));
    action.name = text_of(env("__OW_ACTION_NAME"));
    return action;
}

platform_config load_platform_config() {
    platform_config config;
    std::vector<std::string> warnings;
    config.methods = parse_http_methods(std::getenv("__OW_HTTP_METHODS"), warnings);
    for (const auto& warning : warnings) std::cerr << warning << std::endl;
    config.dedicated = dedicated_from_env([](const char* name) { return std::getenv(name); });
    config.user = text_of(std::getenv("__OW_NAMESPACE"));
    return config;
}

}  // namespace actionloop::knative
