// The console's pure parts on their own: the pages escape every value from the data (an id, a
// name, a comment cannot add markup or script), and the delay timeline's percentiles per minute.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/silence.hpp"
#include "gateway/console/console_pages.hpp"
#include "gateway/report/delay_timeline.hpp"

using alerts::gateway::delay_timeline;
using json = nlohmann::json;

TEST_CASE("console pages: a value from the data never becomes markup or script") {
    const std::string evil = "\"><script>alert(1)</script><b a='";
    const json state = {{"counts", {{"offline", 1}}},
                        {"devices",
                         {{"offline",
                           {{{"account", evil},
                             {"device", evil},
                             {"name", evil},
                             {"state", "offline"},
                             {"announced", "offline"},
                             {"since", 1.0}}}}}}};
    const std::string page = alerts::gateway::offline_page(state, evil, 100);
    CHECK(page.find("<script>alert") == std::string::npos);
    CHECK(page.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
    const json silences = {{"silences",
                            {{{"id", "x');alert(1);//"},
                              {"status", "active"},
                              {"matchers", {{"account", evil}}},
                              {"startsAt", 1},
                              {"endsAt", 2},
                              {"createdBy", evil},
                              {"comment", evil}}}}};
    const std::string s = alerts::gateway::silences_page(silences, 1);
    CHECK(s.find("onclick") == std::string::npos);  // ids go to the script as data only
    CHECK(s.find("data-id=\"x&#39;);alert(1);//\"") != std::string::npos);
    CHECK(s.find("<b a=") == std::string::npos);
    CHECK(alerts::gateway::html_escape("a&b<c>\"'") == "a&amp;b&lt;c&gt;&quot;&#39;");
}

TEST_CASE("console pages: the offline page groups by site, else by bridge") {
    auto down = [](const char* device, const char* site, const char* bridge) {
        json d = {{"account", "a"},
                  {"device", device},
                  {"state", "offline"},
                  {"announced", "offline"},
                  {"since", 1.0}};
        if (*site) d["site"] = site;
        if (*bridge) d["bridge"] = bridge;
        return d;
    };
    const json state = {{"counts", {{"offline", 4}}},
                        {"devices",
                         {{"offline",
                           {down("c1", "hq", ""), down("c2", "hq", "b1"), down("c3", "", "b1"),
                            down("c4", "", "")}}}}};
    const std::string page = alerts::gateway::offline_page(state, "", 100);
    CHECK(page.find("account a · site hq · 2 cameras") != std::string::npos);
    CHECK(page.find("account a · behind bridge b1 · 1 camera") != std::string::npos);
    CHECK(page.find("account a · (no site) · 1 camera") != std::string::npos);
}

TEST_CASE("console pages: a site's notification shows its site where a device's shows the device") {
    const json site = {{"notifType", "SiteOffline"},
                       {"account", "acct1"},
                       {"site", "lobby"},
                       {"siteName", "Main <lobby>"},
                       {"camerasDown", 31},
                       {"cameras", 40},
                       {"devicesDown", json::array()},
                       {"devicesBack", json::array()},
                       {"publishTs", 1764461130.5},
                       {"alertDelay", 0.5}};
    const json camera = {{"notifType", "Offline"},    {"account", "acct1"},
                         {"device", "cam1"},          {"name", "Gate"},
                         {"site", "lobby"},           {"siteName", "Main lobby"},
                         {"publishTs", 1764461130.5}, {"alertDelay", 0.5}};
    const std::string page = alerts::gateway::notifications_page(
        {{"notifications",
          {{{"entry", "1-0"}, {"key", "SiteOffline-1"}, {"n", site}},
           {{"entry", "2-0"}, {"key", "Offline-2"}, {"n", camera}}}}},
        0);
    CHECK(page.find("<td>SiteOffline</td><td>acct1</td><td>site lobby</td><td>Main &lt;lobby&gt;"
                    "</td><td>0.5 s</td><td>SiteOffline-1</td><td>31 of 40 cameras down</td>") !=
          std::string::npos);
    CHECK(page.find("<td>Offline</td><td>acct1</td><td>cam1</td><td>Gate</td><td>0.5 s</td>"
                    "<td>Offline-2</td><td></td>") != std::string::npos);
    const std::string letters = alerts::gateway::dead_letters_page(
        {{"deadLetters", {{{"id", "3-0"}, {"target", "a"}, {"key", "SiteOffline-1"}, {"n", site}}}},
         {"total", 1}});
    CHECK(letters.find("<td>SiteOffline</td><td>acct1/site lobby</td>") != std::string::npos);
    CHECK(letters.find("acct1/<") == std::string::npos);
}

TEST_CASE("console pages: the silence form offers the types the silence API accepts") {
    const std::string page = alerts::gateway::silences_page({{"silences", json::array()}}, 0);
    int offered = 0;
    for (std::size_t at = page.find("<option>"); at != std::string::npos;
         at = page.find("<option>", at + 1)) {
        const std::size_t from = at + 8;
        const std::string type = page.substr(from, page.find("</option>", from) - from);
        CAPTURE(type);
        CHECK_NOTHROW(alerts::parse_silence_request(
            {{"matchers", {{"notifType", type}}}, {"duration", 60}}, 1000, "id"));
        ++offered;
    }
    CHECK(offered == 8);
    // A site's notifications are not a silence's: the API refuses them, the form leaves them out.
    for (const char* type : {"SiteOffline", "SiteChanged", "SiteOnline"}) {
        CHECK(page.find(std::string("<option>") + type + "</option>") == std::string::npos);
        CHECK_THROWS_AS(alerts::parse_silence_request(
                            {{"matchers", {{"notifType", type}}}, {"duration", 60}}, 1000, "id"),
                        alerts::silence_error);
    }
}

TEST_CASE("delay timeline: per minute its count, p50, p99 and max, the oldest minutes dropped") {
    delay_timeline t(3);
    for (int i = 1; i <= 100; ++i) t.add(600 + i * 0.1, i * 0.01, 0.002);  // minute 10
    t.add(660, 5, 1);                                                      // minute 11
    auto points = t.points();
    REQUIRE(points.size() == 2);
    CHECK(points[0].minute == 600);
    CHECK(points[0].count == 100);
    CHECK(points[0].alert_p50 == doctest::Approx(0.5).epsilon(0.05));
    CHECK(points[0].alert_p99 == doctest::Approx(0.99).epsilon(0.05));
    CHECK(points[0].alert_max == doctest::Approx(1.0));
    CHECK(points[0].delivery_p99 == doctest::Approx(0.002).epsilon(0.05));
    CHECK(points[1].alert_max == 5);
    t.add(60 * 13, 1, 1);  // minute 13: minute 10 is out of the last 3
    points = t.points();
    REQUIRE(points.size() == 2);
    CHECK(points[0].minute == 660);
    CHECK(points[1].minute == 780);
    // Three days and more land in the last bucket, the max stays exact.
    t.add(60 * 13 + 1, 400000, 1);
    CHECK(t.points().back().alert_max == 400000);
}
