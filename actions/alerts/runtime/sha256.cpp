// sha256.cpp — FIPS 180-4's SHA-256: 64-byte blocks, a 64-round compression of eight 32-bit
// words, the message padded with 0x80, zeros and its length in bits (big-endian).
#include "runtime/sha256.hpp"

#include <array>
#include <cstdint>
#include <cstring>

namespace alerts {

namespace {

using word = std::uint32_t;
using state = std::array<word, 8>;

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
constexpr std::array<word, 64> ROUND_CONSTANTS = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// The first 32 bits of the fractional parts of the square roots of the first 8 primes.
constexpr state INITIAL = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                           0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr word rotr(word x, int n) { return (x >> n) | (x << (32 - n)); }

word load_big_endian(const unsigned char* p) {
    return (word{p[0]} << 24) | (word{p[1]} << 16) | (word{p[2]} << 8) | word{p[3]};
}

// The message schedule of one block: its 16 words, extended to 64.
std::array<word, 64> schedule(const unsigned char* block) {
    std::array<word, 64> w{};
    for (std::size_t i = 0; i < 16; ++i) w[i] = load_big_endian(block + 4 * i);
    for (std::size_t i = 16; i < 64; ++i) {
        const word s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const word s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    return w;
}

void compress(state& h, const unsigned char* block) {
    const std::array<word, 64> w = schedule(block);
    state v = h;  // a b c d e f g h
    for (int i = 0; i < 64; ++i) {
        const word s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
        const word choice = (v[4] & v[5]) ^ (~v[4] & v[6]);
        const word t1 = v[7] + s1 + choice + ROUND_CONSTANTS[i] + w[i];
        const word s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
        const word majority = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
        v = {t1 + s0 + majority, v[0], v[1], v[2], v[3] + t1, v[4], v[5], v[6]};
    }
    for (int i = 0; i < 8; ++i) h[i] += v[i];
}

// The last one or two blocks: the rest of the message, 0x80, zeros, the length in bits.
void compress_tail(state& h, std::string_view rest, std::uint64_t total_bytes) {
    unsigned char tail[128] = {};
    std::memcpy(tail, rest.data(), rest.size());
    tail[rest.size()] = 0x80;
    const std::size_t length = rest.size() + 1 + 8 <= 64 ? 64 : 128;
    const std::uint64_t bits = total_bytes * 8;
    for (int i = 0; i < 8; ++i) {
        tail[length - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
    }
    for (std::size_t at = 0; at < length; at += 64) compress(h, tail + at);
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
    state h = INITIAL;
    const std::size_t whole = bytes.size() - bytes.size() % 64;
    const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
    for (std::size_t at = 0; at < whole; at += 64) compress(h, data + at);
    compress_tail(h, bytes.substr(whole), bytes.size());
    static constexpr char DIGITS[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(64);
    for (const word x : h) {
        for (int shift = 28; shift >= 0; shift -= 4) hex += DIGITS[(x >> shift) & 0xf];
    }
    return hex;
}

}  // namespace alerts
