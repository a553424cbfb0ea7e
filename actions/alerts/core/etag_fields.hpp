// etag_fields.hpp — what the batch parser (batch_text) yields and the validation of one ETag:
// the members it found become a core ETag, or a rejection with its index and reason (the rest
// of the batch goes on). The ETags' strings are views into the value's text or into
// `unescaped`.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/etag.hpp"

namespace alerts {

struct rejection {
    std::size_t index = 0;
    std::string error;  // "etag 7: missing field 'ts'"
};

struct parsed_batch {
    std::vector<etag> etags;
    std::vector<rejection> rejected;
    /// Strings that had escapes, decoded (the ETags' views point here).
    std::deque<std::string> unescaped;

    void clear() {
        etags.clear();
        rejected.clear();
        unescaped.clear();
    }
};

/// One ETag's members as the parser found them, before validation.
struct etag_fields {
    enum class kind : unsigned char { absent, string, number, other };
    struct member {
        kind type = kind::absent;
        std::string_view text;  // kind::string
        double number = 0;      // kind::number
    };
    member values[8];

    /// The slot of an ETag member name, -1 for a name the core does not use.
    static int index(std::string_view key);
};

/// Validates `f` into `out`; on failure returns false and sets `error` (no "etag N: ").
bool etag_from_fields(const etag_fields& f, etag& out, std::string& error);

/// Appends the ETag with batch position `index` to `out.etags`, or its rejection.
void add_etag(const etag_fields& f, std::size_t index, parsed_batch& out);

}  // namespace alerts
