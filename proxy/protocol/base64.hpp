// Base64, the one codec of the proxy: /init's binary code (strict, Go's rules and error text),
// a web action's image body (lenient, Node's rules), and __ow_body in single-entrypoint mode.
#pragma once

#include <string>
#include <string_view>

namespace actionloop {

/// Standard base64 with padding; '\r' and '\n' are skipped, as Go does. Throws refusal 400
/// "cannot decode the request: illegal base64 data at input byte N".
std::string decode_base64(std::string_view text);

/// Node's lenient base64: both alphabets (+/ and -_), decoding stops at the first '=', any
/// other character is skipped, trailing bits that make no byte are dropped.
std::string decode_base64_lenient(std::string_view text);

/// Standard padded base64.
std::string encode_base64(std::string_view bytes);

}  // namespace actionloop
