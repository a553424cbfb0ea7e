// The docs' JSON log examples of monitor's notification lines (docs/protocol.md, "Logs: plain
// and JSON"; docs/alerts.md, "Notifications") are what monitor prints: the same batches in the
// real proxy with OW_LOG_FORMAT=json give those records, byte for byte but for the time.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "expectations.hpp"
#include "monitor_action.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

namespace {

// The one line of `text` that contains `needle`, with its "time" member removed.
std::string line_with(const std::string& text, const std::string& needle) {
    std::istringstream in(text);
    std::string found;
    for (std::string line; std::getline(in, line);) {
        if (!contains(line, needle)) continue;
        CHECK_MESSAGE(found.empty(), "two lines with " << needle);
        found = line;
    }
    REQUIRE_MESSAGE(!found.empty(), "no line with " << needle << " in:\n" << text);
    const std::size_t time = found.find(R"("time":")");
    REQUIRE(time != std::string::npos);
    return found.erase(time, found.find(',', time) + 1 - time);
}

std::string doc(const char* name) {
    return read_file(fs::path(ACTIONLOOP_SOURCE_DIR) / "docs" / name);
}

json etag(const std::string& id, const std::string& state, double ts) {
    return {{"id", id}, {"account", "00001234"}, {"device", "100a1b2c"}, {"type", "status"},
            {"ts", ts}, {"state", state}};
}

}  // namespace

TEST_CASE("alerts: the docs' JSON log examples are monitor's records") {
    proxy_process proxy(cpp_runtime({{"OW_LOG_FORMAT", "json"}}));
    const json env = {
        {"ALERT_CONFIG",
         (fs::path(ACTIONLOOP_SOURCE_DIR) / "actions/alerts/sample-config.json").string()}};
    CHECK_REPLY(proxy.init(monitor_zip_code(), "main", &env), 200, OK_BODY);
    const auto run = [&](const json& etags, double now, const json& tags) {
        json body = tags;
        body["value"] = {{"etags", etags}, {"now", now}};
        CHECK(proxy.run_raw(body.dump()).status == 200);
    };
    run(json::array({etag("e-2", "offline", 1764460801)}), 1764460802.5, {{"activation_id", "x"}});
    run(json::array(), 1764461105, {{"activation_id", "batch-1"}});  // Offline
    run(json::array({etag("e-3", "online", 1764461200)}), 1764461200, {{"activation_id", "y"}});
    run(json::array(), 1764461300,
        {{"activation_id", "a1"}, {"transaction_id", "t1"}, {"action_name", "/ns/x"}});  // Online
    REQUIRE(proxy.wait_for_sentinels(4, std::chrono::seconds(10)));
    const std::string out = proxy.stdout_text();
    CHECK(line_with(out, R"("notifType":"Online")") ==
          line_with(doc("protocol.md"), R"("notifType":"Online")"));
    CHECK(line_with(out, R"("notifType":"Offline")") ==
          line_with(doc("alerts.md"), R"("stream":"stdout","activationId":"batch-1")"));
}
