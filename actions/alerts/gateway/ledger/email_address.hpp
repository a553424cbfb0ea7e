// email_address.hpp — is a recipient an address alertgw may put in RCPT TO (pure).
#pragma once

#include <string_view>

namespace alerts::gateway {

/// "local@domain": one '@', neither side empty, at most 254 bytes, no space, control
/// character or any of <>()[],;:\" (nothing that could end the SMTP command or smuggle a
/// second address), a domain without empty labels.
bool is_email_address(std::string_view address);

}  // namespace alerts::gateway
