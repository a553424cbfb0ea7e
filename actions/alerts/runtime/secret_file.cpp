// secret_file.cpp — see secret_file.hpp.
#include "runtime/secret_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace alerts {

std::string read_secret_file(const std::string& what, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::invalid_argument(what + " '" + path +
                                    "': cannot read it: " + std::strerror(errno));
    }
    std::string secret(MAX_SECRET_FILE + 1, '\0');
    in.read(secret.data(), static_cast<std::streamsize>(secret.size()));
    secret.resize(static_cast<std::size_t>(in.gcount()));
    if (secret.size() > MAX_SECRET_FILE) {
        throw std::invalid_argument(what + " '" + path + "': larger than " +
                                    std::to_string(MAX_SECRET_FILE) + " bytes");
    }
    if (!secret.empty() && secret.back() == '\n') secret.pop_back();
    if (!secret.empty() && secret.back() == '\r') secret.pop_back();
    if (secret.empty()) throw std::invalid_argument(what + " '" + path + "': empty");
    return secret;
}

}  // namespace alerts
