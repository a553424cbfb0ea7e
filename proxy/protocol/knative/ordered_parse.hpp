// Single-entrypoint mode's JSON reader: a body or an answer as nlohmann::ordered_json (members
// in the order received, as __ow_body and the web answer keep them), in linear time.
// ordered_json::parse inserts each key by a linear search of its object: an object of 80,000
// keys took ~19 s on the event loop. Here a wide object keeps an index of its keys while it is
// built, so each key costs O(1), and the result is the same value.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace actionloop::knative {

using ordered_json = nlohmann::ordered_json;

/// `text` as ordered_json::parse(text, nullptr, false) reads it: the members in the order
/// received, a repeated key keeping its first place and its last value; a discarded value
/// when `text` is not one JSON value. Linear in the size of `text`, without recursion (bound
/// the depth first, engine/framing.hpp: dumps and copies of the result recurse).
ordered_json parse_ordered(std::string_view text);

}  // namespace actionloop::knative
