// /init body decoding with upstream's error texts.
#include "protocol/init_request.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "protocol/error_answer.hpp"

namespace actionloop {
namespace {

using nlohmann::json;

[[noreturn]] void reject(const std::string& detail) {
    throw refusal(BAD_REQUEST, "Error unmarshaling request: " + detail);
}

const char* go_type(const json& j) {
    switch (j.type()) {
        case json::value_t::string:
            return "string";
        case json::value_t::boolean:
            return "bool";
        case json::value_t::array:
            return "array";
        case json::value_t::object:
            return "object";
        default:
            return "number";
    }
}

[[noreturn]] void reject_type(const json& j, const std::string& field, const char* type) {
    reject(std::string("json: cannot unmarshal ") + go_type(j) +
           " into Go struct field initBodyRequest." + field + " of type " + type);
}

// Go's wording for a syntax error ("invalid character 'x' looking for beginning of object
// key string"), from where nlohmann's parser stopped: the offending byte and what it was
// parsing. Upstream's text, so a client sees the same message from either proxy.
std::string go_syntax_error(std::string_view body, const json::parse_error& e) {
    const std::string what = e.what();
    size_t at = e.byte > 0 ? std::min<size_t>(e.byte - 1, body.size() - 1) : 0;
    if (what.find("invalid literal") != std::string::npos) {  // Go names its first byte
        while (at > 0 && std::isalpha(static_cast<unsigned char>(body[at - 1]))) --at;
    }
    const char c = body[at];
    const char* context = "looking for beginning of value";
    if (what.find("while parsing object key") != std::string::npos) {
        context = "looking for beginning of object key string";
    } else if (what.find("while parsing object separator") != std::string::npos) {
        context = "after object key";
    } else if (what.find("while parsing object") != std::string::npos) {
        context = "after object key:value pair";
    } else if (what.find("while parsing array") != std::string::npos) {
        context = "after array element";
    } else if (what.find("while parsing value - invalid string") != std::string::npos ||
               what.find("invalid string") != std::string::npos) {
        context = "in string literal";
    }
    if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
        return std::string("invalid character '") + escaped + "' " + context;
    }
    return std::string("invalid character '") + c + "' " + context;
}

json parse_json(std::string_view body, const json_limits& limits) {
    size_t i = body.find_first_not_of(" \t\r\n");
    if (i == std::string_view::npos) reject("unexpected end of JSON input");
    if (auto excess = json_bounds_error(body, limits)) reject("the JSON " + *excess);
    char c = body[i];
    if (std::string_view("{[\"-0123456789tfn").find(c) == std::string_view::npos) {
        reject(std::string("invalid character '") + c + "' looking for beginning of value");
    }
    try {
        return json::parse(body);
    } catch (const json::parse_error& e) {
        if (std::string_view(e.what()).find("unexpected end of input") != std::string_view::npos) {
            reject("unexpected end of JSON input");
        }
        reject(go_syntax_error(body, e));
    } catch (const json::exception& e) {  // e.g. a number out of range: 1e999
        reject(e.what());
    }
}

std::string string_field(const json& value, const char* name) {
    auto it = value.find(name);
    if (it == value.end() || it->is_null()) return {};
    if (!it->is_string()) reject_type(*it, std::string("value.") + name, "string");
    return it->get<std::string>();
}

}  // namespace

init_request parse_init_request(std::string_view body, const json_limits& limits) {
    json root = parse_json(body, limits);
    init_request request;
    if (root.is_null()) return request;
    if (!root.is_object()) {
        reject(std::string("json: cannot unmarshal ") + go_type(root) +
               " into Go value of type openwhisk.initBodyRequest");
    }
    auto value = root.find("value");
    if (value == root.end() || value->is_null()) return request;
    if (!value->is_object()) reject_type(*value, "value", "openwhisk.initRequest");
    request.code = string_field(*value, "code");
    request.main = string_field(*value, "main");
    if (auto binary = value->find("binary"); binary != value->end() && !binary->is_null()) {
        if (!binary->is_boolean()) reject_type(*binary, "value.binary", "bool");
        request.binary = binary->get<bool>();
    }
    if (auto env = value->find("env"); env != value->end() && !env->is_null()) {
        if (!env->is_object()) reject_type(*env, "value.env", "map[string]interface {}");
        request.env = std::move(*env);
    }
    return request;
}

}  // namespace actionloop
