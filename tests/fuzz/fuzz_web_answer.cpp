// Single-entrypoint mode's answer side (protocol/knative/web_answer.hpp): any answer line of an
// action becomes an HTTP answer under small JSON bounds. Checks: a line over the bounds is the
// 502 that names them; otherwise a status between 200 and 599 (502 only for a line that is not
// one object or array); no header line can be broken (CR, LF); a 204 or 304 has no body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/framing.hpp"
#include "fuzz_check.hpp"
#include "protocol/error_answer.hpp"
#include "protocol/knative/ordered_parse.hpp"
#include "protocol/knative/web_answer.hpp"

namespace actionloop {

// run_step.cpp's (the rest of run_step, the host and its engine, is not linked here).
answer not_object_answer() {
    return error_answer(BAD_GATEWAY, "The action did not return a dictionary or array.");
}

}  // namespace actionloop

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace actionloop;
    const json_limits limits{64, 2048};
    const std::string line(reinterpret_cast<const char*>(data), size);
    const answer a = knative::web_response(line, "X-Asked", limits);
    FUZZ_CHECK(a.status >= 200 && a.status <= 599);
    const auto excess = json_bounds_error(line, limits);
    if (excess) {
        FUZZ_CHECK(a.status == 502);
        FUZZ_CHECK(a.body == "{\"error\":\"The action's answer " + *excess + ".\"}");
        return 0;
    }
    const auto parsed = knative::parse_ordered(line);
    const bool container = !parsed.is_discarded() && parsed.is_structured();
    if (!container) FUZZ_CHECK(a.status == 502);
    for (const auto& [name, value] : a.headers) {
        FUZZ_CHECK(name.find_first_of("\r\n") == std::string::npos);
        FUZZ_CHECK(value.find_first_of("\r\n") == std::string::npos);
    }
    if (a.status == 204 || a.status == 304) FUZZ_CHECK(a.body.empty());
    return 0;
}
