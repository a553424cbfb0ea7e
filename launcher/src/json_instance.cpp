// The one explicit instantiation of nlohmann::json that every action links: the <nlohmann/json.hpp>
// that actions compile against declares it extern (cmake/json_literals.cmake), so their
// translation units, and the precompiled header, do not instantiate its members again.
#define ACTIONLOOP_INSTANTIATE_JSON
#include <nlohmann/json.hpp>

template class nlohmann::basic_json<>;
