// The /init body as the proxy decodes it: parse_init_request (JSON shape, Go's error texts),
// env_map::apply of its env, decode_base64 of a binary payload, and detect_kind on the result.
// Invariants: only refusal escapes; a decoded payload has the size base64 promises; every
// rejection is a 400 with a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "payload/env_map.hpp"
#include "payload/extractor.hpp"
#include "protocol/base64.hpp"
#include "protocol/error_answer.hpp"
#include "protocol/init_request.hpp"

namespace {

using namespace actionloop;

// The decoded size promised by the input: 3 bytes per 4 characters, minus the padding.
size_t expected_size(std::string_view text) {
    std::string bare;
    for (char c : text) {
        if (c != '\r' && c != '\n') bare.push_back(c);
    }
    size_t padding = 0;
    while (padding < bare.size() && bare[bare.size() - 1 - padding] == '=') ++padding;
    return bare.size() / 4 * 3 - padding;
}

void check_decode(std::string_view text) {
    try {
        const std::string decoded = decode_base64(text);
        FUZZ_CHECK(decoded.size() == expected_size(text));
        const payload_kind kind = detect_kind(decoded);
        FUZZ_CHECK(!is_runnable(decoded) || kind == payload_kind::elf ||
                   kind == payload_kind::script);
    } catch (const refusal& e) {
        FUZZ_CHECK(e.status() == BAD_REQUEST);
        FUZZ_CHECK(std::string_view(e.what()).find("illegal base64 data at input byte") !=
                   std::string_view::npos);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    check_decode(body);  // the base64 decoder on raw bytes, not only on JSON strings
    try {
        init_request request = parse_init_request(body);
        char* no_environ[] = {nullptr};
        env_map env("fuzz", "", "", no_environ);
        env.apply(request.env);
        FUZZ_CHECK(env.for_action().size() >= env.values().size());
        if (request.binary) {
            check_decode(request.code);
        } else {
            detect_kind(request.code);
        }
    } catch (const refusal& e) {
        FUZZ_CHECK(e.status() == BAD_REQUEST);
        FUZZ_CHECK(std::string_view(e.what()).rfind("Error unmarshaling request: ", 0) == 0);
    }
    return 0;
}
