// monitor_action: see monitor_action.hpp.
#include "monitor_action.hpp"

#include <doctest/doctest.h>

#include "expectations.hpp"
#include "test_util.hpp"

namespace support {

const std::string& monitor_zip_code() {
    static const std::string code = built_zip_code("actions/monitor.zip");
    return code;
}

std::unique_ptr<proxy_process> start_monitor(const nlohmann::json& env) {
    auto proxy = std::make_unique<proxy_process>(cpp_runtime());
    CHECK_REPLY(proxy->init(monitor_zip_code(), "main", &env), 200, OK_BODY);
    return proxy;
}

}  // namespace support
