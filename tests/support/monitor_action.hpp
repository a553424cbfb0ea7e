// The shipped `monitor` alert action (build/actions/monitor.zip) in a real proxy, as the image
// runs it: what the Redis, Sentinel and gateway suites start.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "proxy_process.hpp"

namespace support {

/// monitor.zip as /init's base64 `code` (read once; REQUIREs that the build made it).
const std::string& monitor_zip_code();

/// A proxy (cpp_runtime()) with monitor initialised with `env` (its ALERT_* settings); CHECKs
/// that /init answered ok.
std::unique_ptr<proxy_process> start_monitor(const nlohmann::json& env);

}  // namespace support
