// The one explicit instantiation of nlohmann::json that every action links (see action.hpp).
#define ACTIONLOOP_INSTANTIATE_JSON
#include <actionloop/action.hpp>

template class nlohmann::basic_json<>;
