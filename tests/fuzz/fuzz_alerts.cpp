// The alert core's parsers of untrusted input, and the decision core behind them, as
// alert_service::run_text drives them (without the store): batch_text's parse_value_text of the
// activation value's text (the actions' one ETag parser), parse_config of value.config, then
// one or two process() calls and the answer's JSON and log lines. An input is a JSON activation
// value {"config":…, "etags":[…], "now":…, "later":[…]}; a bare array is an etags array on its
// own. Invariants: only config_error and std::invalid_argument escape the parsers; every ETag is
// either parsed or rejected, once, in order; batch_text accepts the JSON nlohmann accepts,
// refusing only a value of the wrong shape or nested too deep. (The other way round is not
// checked: batch_text lets invalid UTF-8 and out-of-range numbers through, nlohmann does not.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/alert_core.hpp"
#include "core/batch_text.hpp"
#include "core/config.hpp"
#include "core/result_json.hpp"
#include "fuzz_check.hpp"

namespace {

using nlohmann::json;

bool is_shape_error(std::string_view what) {
    return what == "'etags' must be an array" || what == "'now' must be a number" ||
           what == "the activation value must be an object" ||
           what.find("nested too deep") != std::string_view::npos;
}

// Parses `text` with batch_text; `dom` is nlohmann's reading of the same text (discarded when
// nlohmann refuses it). Returns false when batch_text refuses the value.
bool parse_value(std::string_view text, const json& dom, alerts::parsed_batch& batch,
                 alerts::value_members& members) {
    try {
        alerts::parse_value_text(text, batch, members);
    } catch (const std::invalid_argument& e) {
        if (!dom.is_discarded()) FUZZ_CHECK(is_shape_error(e.what()));
        return false;
    }
    if (dom.is_discarded()) return true;
    FUZZ_CHECK(dom.is_object());
    const auto etags = dom.find("etags");
    const std::size_t n = etags == dom.end() ? 0 : etags->size();
    FUZZ_CHECK(etags == dom.end() || etags->is_array());
    FUZZ_CHECK(batch.etags.size() + batch.rejected.size() == n);
    for (std::size_t i = 0; i < batch.rejected.size(); ++i) {
        FUZZ_CHECK(batch.rejected[i].index < n);
        FUZZ_CHECK(i == 0 || batch.rejected[i].index > batch.rejected[i - 1].index);
    }
    FUZZ_CHECK(members.has_now == dom.contains("now"));
    return true;
}

void process(alerts::alert_core& core, const alerts::parsed_batch& batch, double now) {
    const alerts::batch_result& result = core.process(batch.etags, now);
    const json answer = alerts::result_json(core, result, batch.rejected);
    FUZZ_CHECK(answer.is_object());
    for (const alerts::notification& n : result.notifications) {
        alerts::log_line(core, n);
        if (n.late) alerts::late_line(core, n);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    // nlohmann takes a NUL byte for the end of its input (batch_text refuses what follows it as
    // text after the value): no reference then.
    const bool has_nul = text.find('\0') != std::string::npos;
    json value = has_nul ? json(json::value_t::discarded) : json::parse(text, nullptr, false);
    if (value.is_array()) {  // an etags array on its own
        text = "{\"etags\":" + text + "}";
        value = json::parse(text, nullptr, false);
    }
    alerts::parsed_batch batch;
    alerts::value_members members;
    if (!parse_value(text, value, batch, members)) return 0;
    std::shared_ptr<const alerts::alert_config> config;
    if (!members.config.empty()) {
        const json config_value = json::parse(members.config, nullptr, false);
        if (config_value.is_discarded()) return 0;  // invalid UTF-8
        try {
            config =
                std::make_shared<const alerts::alert_config>(alerts::parse_config(config_value));
        } catch (const alerts::config_error& e) {
            FUZZ_CHECK(std::string_view(e.what()).rfind("config: ", 0) == 0);
        }
    }
    if (!config) return 0;
    alerts::core_options options;
    if (value.is_object()) {
        if (auto it = value.find("datacenter"); it != value.end() && it->is_string()) {
            options.datacenter = it->get<std::string>();
        }
    }
    alerts::alert_core core(options);
    core.set_config(config);
    const double now = members.has_now ? members.now : 0;
    process(core, batch, now);
    if (!value.is_object()) return 0;
    if (auto it = value.find("later"); it != value.end()) {  // a second activation
        const json later{{"etags", *it}};
        const std::string later_text = later.dump(-1, ' ', false, json::error_handler_t::replace);
        if (!parse_value(later_text, json::parse(later_text, nullptr, false), batch, members)) {
            return 0;
        }
        process(core, batch, now + 600);
    }
    return 0;
}
