// Lambda mode's pure half (proxy/lambda/invocation.hpp) on untrusted bytes: an event from the
// Runtime API and an answer line from the action. Checked: an event event_problem() accepts
// makes a request line that is one JSON object whose `value` is that event (nothing smuggled
// into the line's other fields); every post's body is JSON; an error post's body is an object.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "lambda/invocation.hpp"

namespace {

using namespace actionloop;
using namespace actionloop::lambda;
using nlohmann::json;

void check_event(std::string_view event) {
    invocation inv;
    inv.request_id = "r";
    inv.event = std::string(event);
    inv.trace_id = std::string(event.substr(0, 64));  // header text of any bytes
    if (event_problem(event, json_limits{64, 10000})) return;
    const json line = json::parse(request_line(inv), nullptr, false);
    FUZZ_CHECK(line.is_object());
    FUZZ_CHECK(line["activation_id"] == "r");
    const json value = json::parse(event, nullptr, false);
    if (!value.is_discarded()) FUZZ_CHECK(line["value"] == value);
}

void check_answer(std::string_view text) {
    invocation inv;
    inv.request_id = "r";
    activation_result result;
    result.line = std::string(text);
    const post p = result_post(inv, result, 100);
    if (p.error_type.empty()) return;  // a response is the line as it is
    FUZZ_CHECK(json::parse(p.body, nullptr, false).is_object());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_event(text);
    check_answer(text);
    check_answer(std::string("{\"__lambda_error\":") + std::string(text));
    return 0;
}
