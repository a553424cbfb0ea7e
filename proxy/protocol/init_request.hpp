// Decoding /init's body (docs/protocol.md, /init): the JSON shape, with Go's error texts.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace actionloop {

struct init_request {
    std::string code;
    std::string main;
    bool binary = false;
    nlohmann::json env;  // null or an object
};

/// Throws refusal 400 "Error unmarshaling request: …" on a body upstream rejects.
init_request parse_init_request(std::string_view body);

}  // namespace actionloop
