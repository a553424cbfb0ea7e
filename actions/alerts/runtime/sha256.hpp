// sha256.hpp — SHA-256 (FIPS 180-4) of a byte string, as lowercase hex: the name of a deployed
// config in the actions' logs, the same digest `sha256sum FILE` prints, so an operator can
// tell which config each process decides with.
#pragma once

#include <string>
#include <string_view>

namespace alerts {

/// The SHA-256 digest of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace alerts
