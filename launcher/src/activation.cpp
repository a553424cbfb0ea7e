// context_builder: an activation's context from its request's members.
#include "activation.hpp"

#include <cctype>
#include <cstdlib>

namespace actionloop {
namespace {

std::string env_name(std::string_view key) {
    std::string name("__OW_");
    for (char c : key) {
        name.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
    return name;
}

// No deadline for a value that is not positive, or past what the clock can represent (a
// conversion to its nanoseconds would overflow).
context::time_point from_epoch_ms(long long ms) {
    using std::chrono::milliseconds;
    const auto latest =
        std::chrono::duration_cast<milliseconds>(context::time_point::max().time_since_epoch());
    if (ms <= 0 || ms >= latest.count()) return context::time_point::max();
    return context::time_point(milliseconds(ms));
}

context::time_point parse_deadline(const std::string& text) {
    char* end = nullptr;
    const long long ms = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || end == nullptr || *end != '\0') return context::time_point::max();
    return from_epoch_ms(ms);
}

}  // namespace

void context_builder::add_string(const std::string& key, const std::string& text) {
    // The environment is kept for compatibility only; the context does not read it.
    setenv(env_name(key).c_str(), text.c_str(), 1);
    if (key == "activation_id") {
        activation_id_ = text;
    } else if (key == "action_name") {
        action_name_ = text;
    } else if (key == "namespace") {
        namespace_ = text;
    } else if (key == "api_host") {
        api_host_ = text;
    } else if (key == "deadline") {
        deadline_ = parse_deadline(text);
    }
}

void context_builder::add_deadline_ms(long long ms) { deadline_ = from_epoch_ms(ms); }

context context_builder::build() {
    return context(std::move(activation_id_), std::move(action_name_), std::move(namespace_),
                   std::move(api_host_), deadline_);
}

}  // namespace actionloop
