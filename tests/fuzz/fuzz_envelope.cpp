// Single-entrypoint mode's request side (protocol/knative/envelope.hpp): parse_envelope under
// small JSON bounds, then translate_init and translate_run, as the handler calls them. Checks:
// only the mode's refusals are thrown (413 over the bounds, 500, 403); a body within the bounds
// reads as ordered_json::parse reads it (parse_ordered, the linear-time reader); a run line is
// one JSON object with `value` and only strings beside it; an init body is one the classic
// /init decodes. The first byte picks raw or not and whether a Content-Type is sent.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/framing.hpp"
#include "fuzz_check.hpp"
#include "protocol/error_answer.hpp"
#include "protocol/init_request.hpp"
#include "protocol/knative/envelope.hpp"

namespace {

using namespace actionloop;
using namespace actionloop::knative;

const json_limits LIMITS{64, 2048};

bool is_mode_status(int status) { return status == 413 || status == 500 || status == 403; }

void check_run(const ordered_json& envelope, const web_request& req, bool raw) {
    std::string line;
    try {
        line = translate_run(envelope, req, raw, "fuzz", "user");
    } catch (const refusal& e) {
        FUZZ_CHECK(e.status() == 403);
        return;
    }
    const ordered_json parsed = ordered_json::parse(line, nullptr, false);
    FUZZ_CHECK(parsed.is_object() && parsed.contains("value"));
    for (const auto& [key, member] : parsed.items())
        FUZZ_CHECK(key == "value" || member.is_string());
}

void check_init(const ordered_json& envelope) {
    const auto init = envelope.find("init");
    if (init == envelope.end()) return;
    try {
        const init_fields fields = translate_init(*init);
        parse_init_request(fields.init_body, LIMITS);  // may refuse a too-deep env, only so
    } catch (const refusal& e) {
        FUZZ_CHECK(is_mode_status(e.status()) || e.status() == 400);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const bool raw = (data[0] & 1) != 0;
    const bool json_type = (data[0] & 2) == 0;
    web_request req{"POST",
                    "/?a=1&a=2",
                    {{"Host", "x"}},
                    std::string(reinterpret_cast<const char*>(data + 1), size - 1)};
    if (json_type) req.headers.emplace_back("Content-Type", "application/json");
    ordered_json envelope;
    try {
        envelope = parse_envelope(req, LIMITS);
    } catch (const refusal& e) {
        FUZZ_CHECK(e.status() == 413 || e.status() == 500);
        if (e.status() == 413) FUZZ_CHECK(json_bounds_error(req.body, LIMITS).has_value());
        return 0;
    }
    FUZZ_CHECK(envelope.is_object());
    if (json_type && !json_bounds_error(req.body, LIMITS)) {
        const ordered_json model = ordered_json::parse(req.body, nullptr, false);
        const ordered_json ours = parse_ordered(req.body);
        FUZZ_CHECK(ours.is_discarded() == model.is_discarded());
        if (!model.is_discarded()) FUZZ_CHECK(ours.dump() == model.dump());
    }
    check_init(envelope);
    check_run(envelope, req, raw);
    return 0;
}
