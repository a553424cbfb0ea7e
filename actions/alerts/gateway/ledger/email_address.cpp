// email_address.cpp — see email_address.hpp.
#include "gateway/ledger/email_address.hpp"

namespace alerts::gateway {

namespace {

bool forbidden(unsigned char c) {
    if (c <= 0x20 || c == 0x7f) return true;
    for (const char bad : std::string_view("<>()[],;:\\\"")) {
        if (c == static_cast<unsigned char>(bad)) return true;
    }
    return false;
}

bool good_domain(std::string_view domain) {
    if (domain.empty() || domain.front() == '.' || domain.back() == '.') return false;
    return domain.find("..") == std::string_view::npos;
}

}  // namespace

bool is_email_address(std::string_view address) {
    if (address.empty() || address.size() > 254) return false;
    const auto at = address.find('@');
    if (at == std::string_view::npos || at == 0 || address.find('@', at + 1) != address.npos) {
        return false;
    }
    for (const char c : address) {
        if (forbidden(static_cast<unsigned char>(c))) return false;
    }
    return good_domain(address.substr(at + 1));
}

}  // namespace alerts::gateway
