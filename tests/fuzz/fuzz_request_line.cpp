// The launcher's fast path for request lines (launcher/src/request_scan.hpp), on any bytes,
// against nlohmann::json's DOM of the same line, which the launcher uses for every line the
// fast path leaves. Checks: a line the fast path takes is one JSON object to the DOM; its
// members are the DOM's, in the DOM's order, each with the DOM's value (a string member's text
// exactly); its `value` is the DOM's; a numeric `deadline` read as an integer is the DOM's.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "request_scan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace actionloop;
    using nlohmann::json;
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    const auto parts = scan_request_line(line);
    if (!parts) return 0;
    const json dom = json::parse(line, nullptr, false);
    FUZZ_CHECK(!dom.is_discarded());
    FUZZ_CHECK(dom.is_object());
    size_t i = 0;
    for (const auto& [key, value] : dom.items()) {
        if (key == "value") {
            FUZZ_CHECK(parts->value.has_value());
            FUZZ_CHECK(*parts->value == value);
            continue;
        }
        FUZZ_CHECK(i < parts->members.size());
        const auto& [name, raw] = parts->members[i++];
        FUZZ_CHECK(name == key);
        FUZZ_CHECK(json::parse(raw) == value);
        if (value.is_string()) FUZZ_CHECK(plain_text(raw) == value.get<std::string>());
        if (key == "deadline" && value.is_number_integer()) {
            FUZZ_CHECK(integer_of(raw) == value.get<long long>());
        }
    }
    FUZZ_CHECK(i == parts->members.size());
    FUZZ_CHECK(parts->value.has_value() == dom.contains("value"));
    return 0;
}
