// The one base64 codec (protocol/base64.hpp): strict for /init's binary code (Go's rules and
// error text), lenient for a web action's image body (Node's rules), and the encoder.
#include <doctest/doctest.h>

#include <string>

#include "protocol/base64.hpp"
#include "protocol/error_answer.hpp"

using namespace actionloop;

TEST_CASE("base64 is strict standard base64 with padding") {
    CHECK(decode_base64("aGVsbG8=") == "hello");
    CHECK(decode_base64("aGVs\nbG8=") == "hello");
    CHECK(decode_base64("") == "");
    auto error_at = [](std::string_view text) {
        try {
            decode_base64(text);
        } catch (const refusal& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(error_at("aGV$") == "cannot decode the request: illegal base64 data at input byte 3");
    CHECK(error_at("aGVsbG8") == "cannot decode the request: illegal base64 data at input byte 4");
    CHECK(error_at("aG=s") == "cannot decode the request: illegal base64 data at input byte 3");
}

TEST_CASE("base64: the lenient decoder takes both alphabets and skips what is not base64") {
    CHECK(decode_base64_lenient("Zm9v\nYmFy") == "foobar");
    CHECK(decode_base64_lenient("_-8=") == "\xff\xef");
    CHECK(decode_base64_lenient("/+8") == "\xff\xef");
    CHECK(decode_base64_lenient("Zm9v=YmFy") == "foo");  // stops at the first '='
    CHECK(decode_base64_lenient("") == "");
}

TEST_CASE("base64: encoding is standard and padded, and the strict decoder reads it back") {
    CHECK(encode_base64("") == "");
    CHECK(encode_base64("f") == "Zg==");
    CHECK(encode_base64("fo") == "Zm8=");
    CHECK(encode_base64("foo") == "Zm9v");
    std::string all;
    for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
    for (size_t n = 0; n <= all.size(); n += 37) {
        const std::string bytes = all.substr(0, n);
        CHECK(decode_base64(encode_base64(bytes)) == bytes);
        CHECK(decode_base64_lenient(encode_base64(bytes)) == bytes);
    }
}
