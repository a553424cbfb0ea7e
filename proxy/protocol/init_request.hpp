// Decoding /init's body (docs/protocol.md, /init): the JSON shape, with Go's error texts.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/framing.hpp"

namespace actionloop {

struct init_request {
    std::string code;
    std::string main;
    bool binary = false;
    nlohmann::json env;  // null or an object
};

/// Throws refusal 400 "Error unmarshaling request: …" on a body upstream rejects, and on one
/// over `limits` ("Error unmarshaling request: the JSON nests deeper than 512 levels
/// (OW_MAX_JSON_DEPTH)", "… has more than N members (OW_MAX_JSON_MEMBERS)"), checked before
/// it is parsed: upstream's Go refuses nesting past 10000 the same way ("exceeded max depth").
init_request parse_init_request(std::string_view body, const json_limits& limits = {});

}  // namespace actionloop
