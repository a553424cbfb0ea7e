// env_export: see env_export.hpp.
#include "env_export.hpp"

#include <unistd.h>  // environ

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <iterator>

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

// The members OpenWhisk's invoker sends with each activation (api_host comes from the
// container's environment upstream; a platform may send it too).
bool is_upstream_name(std::string_view key) {
    static constexpr std::string_view UPSTREAM[] = {
        "api_key",       "namespace",      "action_name", "action_version",
        "activation_id", "transaction_id", "deadline",    "api_host"};
    return std::find(std::begin(UPSTREAM), std::end(UPSTREAM), key) != std::end(UPSTREAM);
}

// 1 to MAX_NAME_BYTES letters, digits and '_': a name every shell and getenv agree on.
bool is_plain_name(std::string_view key) {
    if (key.empty() || key.size() > env_export::MAX_NAME_BYTES) return false;
    return std::all_of(key.begin(), key.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    });
}

}  // namespace

env_export& env_export::process() {
    // Never destroyed: its buffers are in the environment until the process ends (an atexit
    // handler or a static destructor may still read it).
    static env_export* const PROCESS = new env_export();
    return *PROCESS;
}

env_export::variable* env_export::find(std::vector<variable>& variables, std::string_view key) {
    for (variable& v : variables) {
        if (v.key == key) return &v;
    }
    return nullptr;
}

env_export::variable& env_export::add(std::string_view key) {
    variable& v = variables_.emplace_back();
    v.key = std::string(key);
    v.name = "__OW_";
    for (char c : key) {
        v.name.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
    return v;
}

// Whether a name not exported yet may be: upstream's always, others while there is room.
bool env_export::admits(std::string_view key) {
    if (is_upstream_name(key)) return true;
    if (!is_plain_name(key) || others_ >= MAX_OTHER_NAMES) return false;
    ++others_;
    return true;
}

bool env_export::set(std::string_view key, std::string_view value) {
    const bool fits = value.size() <= MAX_VALUE_BYTES;
    variable* v = find(variables_, key);
    if (v == nullptr) {
        if (!fits || !admits(key)) return false;
        v = &add(key);
    }
    write(*v, fits ? value : std::string_view());
    return fits;
}

bool env_export::set_named(std::string_view name, std::string_view value) {
    if (value.size() > MAX_VALUE_BYTES) {
        unset_named(name);
        return false;
    }
    variable* v = find(named_, name);
    if (v == nullptr) {
        v = &named_.emplace_back();
        v->key = std::string(name);
        v->name = v->key;
    }
    write(*v, value);
    return true;
}

void env_export::unset_named(std::string_view name) {
    if (const variable* v = find(named_, name)) {
        ::unsetenv(v->name.c_str());
    } else {
        ::unsetenv(std::string(name).c_str());
    }
}

void env_export::write(variable& v, std::string_view value) {
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
    // An empty view may have no data at all: memcpy must not see its null pointer (UBSan).
    if (!value.empty()) std::memcpy(b.text.get() + value_at, value.data(), value.size());
    b.text[size - 1] = '\0';
    if (::putenv(b.text.get()) == 0) v.current = next;
}

}  // namespace actionloop
