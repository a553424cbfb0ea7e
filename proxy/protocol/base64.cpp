#include "protocol/base64.hpp"

#include "protocol/error_answer.hpp"

namespace actionloop {

namespace {

constexpr const char* ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The 6-bit value of an alphabet character, -1 for anything else. `url_too`: '-' and '_'
// count as '+' and '/'.
int value_of(char c, bool url_too) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || (url_too && c == '-')) return 62;
    if (c == '/' || (url_too && c == '_')) return 63;
    return -1;
}

[[noreturn]] void illegal_at(size_t at) {
    throw refusal(BAD_REQUEST, "cannot decode the request: illegal base64 data at input byte " +
                                   std::to_string(at));
}

}  // namespace

std::string decode_base64(std::string_view text) {
    std::string out;
    out.reserve(text.size() / 4 * 3);
    unsigned quantum = 0;
    int count = 0, padding = 0;
    size_t quantum_start = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\r' || c == '\n') continue;
        if (count == 0) quantum_start = i;
        int v = value_of(c, false);
        if (v < 0 && !(c == '=' && count >= 2)) illegal_at(i);
        if (v < 0) {
            ++padding;
        } else if (padding > 0) {
            illegal_at(i);
        }
        quantum = (quantum << 6) | static_cast<unsigned>(v < 0 ? 0 : v);
        if (++count == 4) {
            out.push_back(static_cast<char>(quantum >> 16));
            if (padding < 2) out.push_back(static_cast<char>((quantum >> 8) & 0xff));
            if (padding < 1) out.push_back(static_cast<char>(quantum & 0xff));
            if (padding > 0 && i + 1 < text.size() &&
                text.find_first_not_of("\r\n", i + 1) != std::string_view::npos) {
                illegal_at(i + 1);
            }
            quantum = 0;
            count = 0;
        }
    }
    if (count != 0) illegal_at(quantum_start);
    return out;
}

std::string decode_base64_lenient(std::string_view text) {
    std::string out;
    unsigned bits = 0;
    int count = 0;
    for (const char c : text) {
        if (c == '=') break;
        const int v = value_of(c, true);
        if (v < 0) continue;
        bits = (bits << 6) | static_cast<unsigned>(v);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out.push_back(static_cast<char>((bits >> count) & 0xff));
        }
    }
    return out;
}

std::string encode_base64(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const unsigned n = static_cast<unsigned char>(bytes[i]) << 16 |
                           static_cast<unsigned char>(bytes[i + 1]) << 8 |
                           static_cast<unsigned char>(bytes[i + 2]);
        out += {ALPHABET[n >> 18], ALPHABET[(n >> 12) & 63], ALPHABET[(n >> 6) & 63],
                ALPHABET[n & 63]};
    }
    if (i + 1 == bytes.size()) {
        const unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
        out += {ALPHABET[n >> 18], ALPHABET[(n >> 12) & 63], '=', '='};
    } else if (i + 2 == bytes.size()) {
        const unsigned n = static_cast<unsigned char>(bytes[i]) << 16 |
                           static_cast<unsigned char>(bytes[i + 1]) << 8;
        out += {ALPHABET[n >> 18], ALPHABET[(n >> 12) & 63], ALPHABET[(n >> 6) & 63], '='};
    }
    return out;
}

}  // namespace actionloop
