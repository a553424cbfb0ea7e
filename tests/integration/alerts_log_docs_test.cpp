// What the docs show of monitor: the JSON log examples of its notification lines
// (docs/protocol.md, "Logs: plain and JSON"; docs/alerts.md, "Notifications") are what it
// prints (the same batches in the real proxy with OW_LOG_FORMAT=json give those records, byte
// for byte but for the time); README.md's and actions/alerts/README.md's example ETags have
// ids of their own, so that following one after the other finds no duplicate.
#include <doctest/doctest.h>

#include <set>
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

// The ETag ids ({"id":"…","account" …) a Markdown file's commands send.
std::set<std::string> etag_ids(const char* path) {
    const std::string text = read_file(fs::path(ACTIONLOOP_SOURCE_DIR) / path);
    const std::string open = R"({"id":")";
    std::set<std::string> ids;
    for (std::size_t at = text.find(open); at != std::string::npos; at = text.find(open, at)) {
        at += open.size();
        const std::size_t end = text.find('"', at);
        if (text.compare(end, 11, R"(","account")") == 0) ids.insert(text.substr(at, end - at));
    }
    return ids;
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

TEST_CASE("alerts: README.md's and actions/alerts/README.md's example ETags have different ids") {
    const std::set<std::string> top = etag_ids("README.md");
    const std::set<std::string> alerts = etag_ids("actions/alerts/README.md");
    CHECK(top.size() >= 2);
    CHECK(alerts.size() >= 4);
    for (const std::string& id : alerts) {
        CAPTURE(id);
        CHECK(top.count(id) == 0);
    }
}
