// damaged_keys.hpp — what one activation of the Redis store skipped because it was not its own
// (docs/alerts.md, "Damaged keys"): a member of the due set that is no device key, a device key
// whose text is no record, a device key of another type that a commit replaced. Each is
// counted (the activation's `damaged` stat) and named on stderr, its key escaped (printable_key)
// so that a key with CR/LF cannot write lines of its own; at most MAX_LINES lines an
// activation, then one line with how many more.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace alerts {

/// `key` with every byte outside printable ASCII, and the backslash, escaped (\r, \n, \t,
/// \\, \xNN), cut after `max` bytes of the key (then "…" and its length).
std::string printable_key(std::string_view key, std::size_t max = 200);

class damaged_keys {
public:
    static constexpr std::size_t MAX_LINES = 5;

    /// One skipped item: its key and what was wrong with it ("holds no device record").
    void add(std::string_view key, std::string_view what);
    std::uint64_t count() const { return count_; }
    /// Writes the lines (at most MAX_LINES + 1) and forgets them.
    void flush(std::ostream& out);
    void clear();

private:
    std::vector<std::string> lines_;
    std::uint64_t count_ = 0;
};

}  // namespace alerts
