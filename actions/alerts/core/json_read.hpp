// json_read.hpp — reading one member of a JSON object that may be missing or of another type,
// as the gateway's e-mail, the console's pages and alertctl read the notifications and answers
// they show: never an exception.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace alerts {

/// The member's text: a string as it is, another value as JSON text, "" when absent or null.
inline std::string json_text(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return {};
    return it->is_string() ? it->get<std::string>()
                           : it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The member's number, `fallback` when absent or not a number.
inline double json_number(const nlohmann::json& j, const char* key, double fallback = 0) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

}  // namespace alerts
