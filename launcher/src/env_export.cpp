// env_export: see env_export.hpp.
#include "env_export.hpp"

#include <unistd.h>  // environ

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace actionloop {
namespace {

// Whether `entry` (one of ours) is still in the environment: one pointer compare per
// variable, where getenv would compare the name with each (strncmp was the largest cost left).
bool in_environment(const char* entry) {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        if (*e == entry) return true;
    }
    return false;
}

}  // namespace

env_export& env_export::process() {
    // Never destroyed: its buffers are in the environment until the process ends (an atexit
    // handler or a static destructor may still read it).
    static env_export* const PROCESS = new env_export();
    return *PROCESS;
}

env_export::variable& env_export::variable_of(std::string_view key) {
    for (variable& v : variables_) {
        if (v.key == key) return v;
    }
    variable& v = variables_.emplace_back();
    v.key = std::string(key);
    v.name = "__OW_";
    for (char c : key) {
        v.name.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
    return v;
}

void env_export::set(std::string_view key, std::string_view value) {
    variable& v = variable_of(key);
    const size_t value_at = v.name.size() + 1;
    if (v.current >= 0) {
        const char* ours = v.buffers[v.current].text.get();
        if (std::string_view(ours + value_at) == value && in_environment(ours)) return;
    }
    const int next = v.current == 0 ? 1 : 0;
    buffer& b = v.buffers[next];
    const size_t size = value_at + value.size() + 1;
    if (size > b.capacity) {
        b.capacity = std::max(size, 2 * b.capacity);
        b.text = std::make_unique<char[]>(b.capacity);
        std::memcpy(b.text.get(), v.name.data(), v.name.size());
        b.text[v.name.size()] = '=';
    }
    std::memcpy(b.text.get() + value_at, value.data(), value.size());
    b.text[size - 1] = '\0';
    if (::putenv(b.text.get()) == 0) v.current = next;
}

}  // namespace actionloop
