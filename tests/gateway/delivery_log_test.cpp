// delivery_log_test.cpp — alertgw's notification line (gateway/report/delivery_log) is the
// actions' line (core/notification_log) with the delivery's fields: read from the outbox's
// JSON, alertDelay carried on to the delivery, in both log formats.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "gateway/report/delivery_log.hpp"

using namespace alerts::gateway;
using json = nlohmann::json;

namespace {

held_entry offline_entry() {
    held_entry entry;
    entry.id = "1700000004600-0";
    entry.commit_ms = 1700000004600;
    entry.dedup_key = "Offline:cam1:1";
    entry.notification = json{
        {"notifType", "Offline"},
        {"account", "acct1"},
        {"device", "cam1"},
        {"region", "hall"},
        {"level", "2"},
        {"recipients", {"a@x.org", "b@x.org"}},
        {"eventTs", 1700000000.5},
        {"publishTs", 1700000004.5},
        {"alertDelay", 4.0},
        {"dedupKey",
         "Offline:cam1:1"}}.dump();
    entry.delivered_to = {"mail", "hook"};
    return entry;
}

}  // namespace

TEST_CASE("delivery log: the notification's line carries alertDelay on to the delivery") {
    const notification_lines lines = notification_log(offline_entry(), 1700000005.0, 300);
    CHECK(lines.delivered ==
          "notifType=Offline alertDelay=4.500 deliveryDelay=0.400 account=acct1 device=cam1 "
          "region=hall level=2 eventTs=1700000000.500 publishTs=1700000004.500 "
          "recipients=a@x.org,b@x.org dedupKey=Offline:cam1:1 entry=1700000004600-0 "
          "deliveredTo=mail,hook");
    CHECK(lines.over_threshold.empty());
    CHECK(notification_log(offline_entry(), 1700000005.0, 4).over_threshold ==
          "level=warning systemAlert=alertDelayOverThreshold notifType=Offline alertDelay=4.500 "
          "threshold=4.000 account=acct1 device=cam1 dedupKey=Offline:cam1:1");
}

TEST_CASE("delivery log: in the JSON log format the same fields are one object") {
    const notification_lines lines = notification_log(offline_entry(), 1700000005.0, 4, true);
    CHECK(json::parse(lines.delivered) ==
          json::parse(R"({"notifType":"Offline","alertDelay":4.5,"deliveryDelay":0.4,
              "account":"acct1","device":"cam1","region":"hall","level":"2",
              "eventTs":1700000000.5,"publishTs":1700000004.5,"recipients":"a@x.org,b@x.org",
              "dedupKey":"Offline:cam1:1","entry":"1700000004600-0","deliveredTo":"mail,hook"})"));
    CHECK(json::parse(lines.over_threshold) ==
          json::parse(R"({"level":"warning","systemAlert":"alertDelayOverThreshold",
              "notifType":"Offline","alertDelay":4.5,"threshold":4.0,"account":"acct1",
              "device":"cam1","dedupKey":"Offline:cam1:1"})"));
}

TEST_CASE("delivery log: a notification that is not JSON still gets its line") {
    held_entry entry = offline_entry();
    entry.notification = "not json";
    const notification_lines lines = notification_log(entry, 1700000005.0, 300);
    CHECK(lines.delivered ==
          "notifType=\"\" alertDelay=1700000005.000 deliveryDelay=0.400 account=\"\" device=\"\" "
          "eventTs=0.000 publishTs=0.000 recipients=\"\" dedupKey=Offline:cam1:1 "
          "entry=1700000004600-0 deliveredTo=mail,hook");
}

TEST_CASE("delivery log: a site's notification, which has no device, names its site") {
    held_entry entry = offline_entry();
    entry.dedup_key = "SiteOffline-1700000000500-ab";
    entry.notification = json{
        {"notifType", "SiteOffline"},
        {"account", "acct1"},
        {"site", "lobby"},
        {"siteName", "Main lobby"},
        {"camerasDown", 2},
        {"cameras", 3},
        {"devicesDown", json::array()},
        {"devicesBack", json::array()},
        {"recipients", {"a@x.org"}},
        {"webhooks", {"hook"}},
        {"eventTs", 1700000000.5},
        {"publishTs", 1700000004.5},
        {"alertDelay", 4.0}}.dump();
    const notification_lines lines = notification_log(entry, 1700000005.0, 4);
    CHECK(lines.delivered ==
          "notifType=SiteOffline alertDelay=4.500 deliveryDelay=0.400 account=acct1 device=\"\" "
          "site=lobby eventTs=1700000000.500 publishTs=1700000004.500 recipients=a@x.org "
          "dedupKey=SiteOffline-1700000000500-ab entry=1700000004600-0 deliveredTo=mail,hook");
    CHECK(lines.over_threshold ==
          "level=warning systemAlert=alertDelayOverThreshold notifType=SiteOffline "
          "alertDelay=4.500 threshold=4.000 account=acct1 device=\"\" site=lobby "
          "dedupKey=SiteOffline-1700000000500-ab");
}
