// The alert core's parsers of untrusted input, and the decision core behind them, as
// alert_service::run drives them (without the store): parse_config of value.config,
// parse_etags of value.etags, then one or two process() calls and the answer's JSON and log
// lines. An input is a JSON activation value {"config":…, "etags":[…], "now":…, "later":[…]};
// a bare array is an etags array on its own. Invariants: only config_error and
// std::invalid_argument escape the parsers; every ETag is either parsed or rejected, once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/alert_core.hpp"
#include "core/config.hpp"
#include "core/etag_json.hpp"
#include "core/result_json.hpp"
#include "fuzz_check.hpp"

namespace {

using nlohmann::json;

void check_batch(const json& etags, alerts::parsed_batch& batch) {
    batch.clear();
    try {
        alerts::parse_etags(etags, batch);
        FUZZ_CHECK(batch.etags.size() + batch.rejected.size() == etags.size());
        for (size_t i = 0; i < batch.rejected.size(); ++i) {
            FUZZ_CHECK(batch.rejected[i].index < etags.size());
            FUZZ_CHECK(i == 0 || batch.rejected[i].index > batch.rejected[i - 1].index);
        }
    } catch (const std::invalid_argument&) {
        FUZZ_CHECK(!etags.is_array());
    }
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
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const json value = json::parse(text, nullptr, false);
    if (value.is_discarded()) return 0;
    alerts::parsed_batch batch;
    if (!value.is_object()) {
        check_batch(value, batch);
        return 0;
    }
    std::shared_ptr<const alerts::alert_config> config;
    if (auto it = value.find("config"); it != value.end()) {
        try {
            config = std::make_shared<const alerts::alert_config>(alerts::parse_config(*it));
        } catch (const alerts::config_error& e) {
            FUZZ_CHECK(std::string_view(e.what()).rfind("config: ", 0) == 0);
        }
    }
    if (auto it = value.find("etags"); it != value.end()) check_batch(*it, batch);
    if (!config) return 0;
    double now = 0;
    if (auto it = value.find("now"); it != value.end() && it->is_number()) now = it->get<double>();
    alerts::core_options options;
    if (auto it = value.find("datacenter"); it != value.end() && it->is_string()) {
        options.datacenter = it->get<std::string>();
    }
    alerts::alert_core core(options);
    core.set_config(config);
    process(core, batch, now);
    if (auto it = value.find("later"); it != value.end()) {  // a second activation
        check_batch(*it, batch);
        process(core, batch, now + 600);
    }
    return 0;
}
