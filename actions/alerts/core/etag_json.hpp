// etag_json.hpp — converts the batch's "etags" array (nlohmann::json, as the launcher hands it
// over) into core ETags. A malformed ETag is rejected on its own, with its index and reason;
// the rest of the batch goes on. The ETags' strings are views into the json value, which must
// outlive them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "etag.hpp"

namespace alerts {

struct rejection {
    std::size_t index = 0;
    std::string error;  // "etag 7: missing field 'ts'"
};

struct parsed_batch {
    std::vector<etag> etags;
    std::vector<rejection> rejected;

    void clear() {
        etags.clear();
        rejected.clear();
    }
};

/// Appends the ETags of `etags` (a json array) to `out`; throws std::invalid_argument when
/// `etags` is not an array.
void parse_etags(const nlohmann::json& etags, parsed_batch& out);

/// Parses one ETag; on failure returns false and sets `error` (without the "etag N: " prefix).
bool parse_etag(const nlohmann::json& j, etag& out, std::string& error);

}  // namespace alerts
