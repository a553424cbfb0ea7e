// batch_text.hpp — the activation's `value` parsed straight from its JSON text (the raw entry
// point of the launcher), without building a DOM: ETags go into a parsed_batch with views into
// the text (strings with escapes are decoded into the batch), `now` is read, `config` is only
// located. The one ETag parser of the actions (validation in etag_fields.cpp); the text must be
// strict JSON (RFC 8259; string bytes are not checked for UTF-8).
#pragma once

#include <cstddef>
#include <string_view>

#include "core/etag_fields.hpp"

namespace alerts {

/// The most ETags a batch may hold by default (ALERT_MAX_BATCH_ETAGS; docs/alerts.md, "Batch").
inline constexpr std::size_t DEFAULT_MAX_BATCH_ETAGS = 50000;

/// The members of `value` other than the ETags.
struct value_members {
    bool has_now = false;
    double now = 0;
    std::string_view config;  // raw JSON text of value.config; empty when absent or null
};

/// Parses `text` (the value: an object). Throws std::invalid_argument for text that is not
/// JSON, a value that is not an object, 'etags' not an array, 'now' not a finite number, or
/// 'etags' with more than `max_etags` elements: then at the first element over the bound, in
/// the same pass, without reading further. `text` must outlive the ETags.
void parse_value_text(std::string_view text, parsed_batch& out, value_members& members,
                      std::size_t max_etags = DEFAULT_MAX_BATCH_ETAGS);

}  // namespace alerts
