// Small text helpers the knative files share (header names, method lists, header values).
#pragma once

#include <cctype>
#include <string>

namespace actionloop::knative {

/// `s` in ASCII lower case.
inline std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// `s` without leading and trailing spaces and tabs.
inline std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace actionloop::knative
