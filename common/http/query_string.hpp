// query_string.hpp — reading a request target's query and path segments (pure, no I/O): what
// the console's handlers take from a request.
#pragma once

#include <string>

namespace actionloop {

/// The decoded value of `key` in a query string ("a=1&b=x%20y"), "" when absent; '+' is a space.
std::string query_value(const std::string& query, const std::string& key);

/// Percent-decodes `s` ('+' stays '+'): a path segment. A '%' not followed by two hex digits
/// stays as it is.
std::string percent_decode(const std::string& s);

}  // namespace actionloop
