// damaged_keys.cpp — the skipped keys' count and log lines (see damaged_keys.hpp).
#include "redis/damaged_keys.hpp"

#include <algorithm>

namespace alerts {

std::string printable_key(std::string_view key, std::size_t max) {
    static constexpr char HEX[] = "0123456789abcdef";
    std::string out;
    out.reserve(std::min(key.size(), max) + 8);
    for (std::size_t i = 0; i < key.size() && i < max; ++i) {
        const auto c = static_cast<unsigned char>(key[i]);
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c >= 0x7f) {
            out += "\\x";
            out += HEX[c >> 4];
            out += HEX[c & 0xf];
        } else {
            out += static_cast<char>(c);
        }
    }
    if (key.size() > max) out += "… (" + std::to_string(key.size()) + " bytes)";
    return out;
}

void damaged_keys::add(std::string_view key, std::string_view what) {
    ++count_;
    if (lines_.size() >= MAX_LINES) return;
    std::string line = "alerts: redis: skipped '";
    line += printable_key(key);
    line += "': ";
    line += what;
    lines_.push_back(std::move(line));
}

void damaged_keys::flush(std::ostream& out) {
    for (const std::string& line : lines_) out << line << '\n';
    if (count_ > lines_.size()) {
        out << "alerts: redis: skipped " << count_ - lines_.size()
            << " more damaged keys in this activation\n";
    }
    if (count_ > 0) out.flush();
    clear();
}

void damaged_keys::clear() {
    lines_.clear();
    count_ = 0;
}

}  // namespace alerts
