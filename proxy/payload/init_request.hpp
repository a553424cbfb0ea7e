// payload/: what /init receives, turned into a runnable action directory. This header is the
// folder's public face (the first step); behind it are
//   extractor.hpp  type detection and safe unpacking of zip and tar.gz, the -compile zip writer
//   compiler.hpp   running OW_COMPILER on the unpacked sources
//   env_map.hpp    the environment the action and the compiler get
// and init_handler.cpp, the /init step (action_proxy::init) built on them.
//
// Decoding /init's body (docs/protocol.md, /init): the JSON shape, with Go's error texts, and
// strict standard base64.
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

/// Throws http_error 400 "Error unmarshaling request: …" on a body upstream rejects.
init_request parse_init_request(std::string_view body);

/// Standard base64 with padding; '\r' and '\n' are skipped, as Go does. Throws http_error 400
/// "cannot decode the request: illegal base64 data at input byte N".
std::string decode_base64(std::string_view text);

}  // namespace actionloop
