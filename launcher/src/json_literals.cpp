// The one definition of nlohmann-json's two literal operators, "..."_json and
// "..."_json_pointer, for every program that links the launcher.
//
// The launcher compiles against <stage>/lib/actionloop/json/nlohmann/json.hpp, a copy of the
// system header in which these operators are declared instead of defined inline (see
// cmake/json_literals.cmake): an inline definition made every user translation unit — and the
// precompiled header `compile` uses — instantiate json::parse<const char*> (the whole parser),
// about 0.6 s of each /init. The bodies below are the header's own, so behaviour is unchanged.
// This file is only built when the header was derived (launcher/CMakeLists.txt).
#include <nlohmann/json.hpp>  // the derived one, with the extern template of basic_json<>

#ifndef ACTIONLOOP_JSON_LITERALS_OUTLINED
#error "json_literals.cpp needs the derived <nlohmann/json.hpp> (cmake/json_literals.cmake)"
#endif

NLOHMANN_JSON_NAMESPACE_BEGIN
inline namespace literals {
inline namespace json_literals {

nlohmann::json operator"" _json(const char* s, std::size_t n) {
    return nlohmann::json::parse(s, s + n);
}

nlohmann::json::json_pointer operator"" _json_pointer(const char* s, std::size_t n) {
    return nlohmann::json::json_pointer(std::string(s, n));
}

}  // namespace json_literals
}  // namespace literals
NLOHMANN_JSON_NAMESPACE_END
