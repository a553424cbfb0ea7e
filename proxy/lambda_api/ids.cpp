#include "lambda_api/ids.hpp"

namespace actionloop::lambda_api {
namespace {

constexpr char HEX[] = "0123456789abcdef";

// The low `digits` nibbles of `bits`, most significant first.
void append_hex(std::string& out, std::uint64_t bits, int digits) {
    for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
        out.push_back(HEX[(bits >> shift) & 0xfu]);
    }
}

}  // namespace

std::string id_source::uuid() {
    std::uint64_t high = random_();
    std::uint64_t low = random_();
    // RFC 4122: version 4 in the time_hi nibble, the variant 10xx at the top of clock_seq.
    high = (high & ~0xf000ull) | 0x4000ull;
    low = (low & ~(0xc000ull << 48)) | (0x8000ull << 48);
    std::string out;
    out.reserve(36);
    append_hex(out, high >> 32, 8);
    out.push_back('-');
    append_hex(out, high >> 16, 4);
    out.push_back('-');
    append_hex(out, high, 4);
    out.push_back('-');
    append_hex(out, low >> 48, 4);
    out.push_back('-');
    append_hex(out, low, 12);
    return out;
}

std::string id_source::trace_header(std::int64_t now_ms) {
    std::string out = "Root=1-";
    out.reserve(86);
    append_hex(out, static_cast<std::uint64_t>(now_ms / 1000), 8);
    out.push_back('-');
    append_hex(out, random_(), 8);
    append_hex(out, random_(), 16);
    out += ";Parent=";
    append_hex(out, random_(), 16);
    out += ";Sampled=1";
    return out;
}

}  // namespace actionloop::lambda_api
