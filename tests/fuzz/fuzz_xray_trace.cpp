// Lambda mode's trace header (launcher/src/xray_trace.hpp) and error line
// (launcher/src/lambda_error.hpp), on any bytes: the Lambda-Runtime-Trace-Id header comes from
// the platform, and an exception's what() from any code. Checks: a trace read from the header
// has a trace-id of 32 lowercase hex digits, not all zeros, made of the header's own digits;
// the traceparent built from it is well formed; the error line is one line of valid JSON whose
// errorMessage is the input when it is UTF-8, and whose type and empty stackTrace are kept.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "lambda_error.hpp"
#include "xray_trace.hpp"

namespace {

bool is_lower_hex(std::string_view text) {
    return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// The header with its hex digits lowercased, for finding the trace-id's digits in it.
std::string lowered(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace actionloop;
    const std::string_view input(reinterpret_cast<const char*>(data), size);

    if (const auto trace = parse_xray_trace(input)) {
        FUZZ_CHECK(trace->trace_id.size() == 32);
        FUZZ_CHECK(is_lower_hex(trace->trace_id));
        FUZZ_CHECK(trace->trace_id.find_first_not_of('0') != std::string::npos);
        const std::string header = lowered(input);
        const std::string root =
            "1-" + trace->trace_id.substr(0, 8) + "-" + trace->trace_id.substr(8);
        FUZZ_CHECK(header.find(root) != std::string::npos);
        if (trace->sampled) FUZZ_CHECK(input.find("Sampled") != std::string_view::npos);
    }

    const std::string line = lambda_error_line(input, "T");
    FUZZ_CHECK(line.find('\n') == std::string::npos);
    const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
    FUZZ_CHECK(!parsed.is_discarded());
    FUZZ_CHECK(parsed.size() == 1);
    const nlohmann::json& error = parsed["__lambda_error"];
    FUZZ_CHECK(error.size() == 3);
    FUZZ_CHECK(error["errorType"] == "T");
    FUZZ_CHECK(error["stackTrace"] == nlohmann::json::array());
    // Valid UTF-8 comes back as it was (the strict dump refuses anything else).
    bool utf8 = true;
    try {
        (void)nlohmann::json(std::string(input)).dump();
    } catch (const nlohmann::json::type_error&) {
        utf8 = false;
    }
    if (utf8) FUZZ_CHECK(error["errorMessage"] == std::string(input));
    FUZZ_CHECK(error["errorMessage"].is_string());
    return 0;
}
