// secret_file.hpp — a secret (a password, a header, a URL with its token) read from a file, as
// the actions' Redis settings (runtime/redis_url) and alertgw's flags and variables take them:
// never from a command line, never printed.
#pragma once

#include <cstddef>
#include <string>

namespace alerts {

/// The most a secret file may hold: a password or a header, not a document.
constexpr std::size_t MAX_SECRET_FILE = 4096;

/// The content of the file at `path`, without one trailing newline (\n or \r\n). Throws
/// std::invalid_argument naming `what` (the variable or flag that named the file) and the
/// path, never the content, when the file cannot be read, is empty, or holds more than
/// MAX_SECRET_FILE bytes.
std::string read_secret_file(const std::string& what, const std::string& path);

}  // namespace alerts
