// monitor_action: see monitor_action.hpp.
#include "monitor_action.hpp"

#include <filesystem>

#include <doctest/doctest.h>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "test_util.hpp"

namespace support {

const std::string& monitor_zip_code() {
    static const std::string code = [] {
        const std::filesystem::path zip =
            std::filesystem::path(ACTIONLOOP_BINARY_DIR) / "actions" / "monitor.zip";
        const std::string bytes = read_file(zip);
        REQUIRE_MESSAGE(!bytes.empty(), "missing " << zip);
        return base64_encode(bytes);
    }();
    return code;
}

std::unique_ptr<proxy_process> start_monitor(const nlohmann::json& env) {
    auto proxy = std::make_unique<proxy_process>(cpp_runtime());
    CHECK_REPLY(proxy->init(monitor_zip_code(), "main", &env), 200, OK_BODY);
    return proxy;
}

}  // namespace support
