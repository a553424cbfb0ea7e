// notification_log_test.cpp — the one writer of a notification's log line and its late
// system alert (core/notification_log), shared by the actions and alertgw: the fields in their
// order, both formats (key=value; one JSON object, numbers as numbers), and values that hold
// line breaks staying on their line in both.
#include <nlohmann/json.hpp>
#include <string>

#include "alert_test_util.hpp"
#include "core/notification_log.hpp"

using namespace alerts;

namespace {

// What the actions print: no delivery fields.
notification_log_fields action_fields() {
    notification_log_fields f;
    f.type = "Offline";
    f.alert_delay = 4.0;
    f.account = "acct1";
    f.device = "cam1";
    f.event_ts = 1700000000.5;
    f.publish_ts = 1700000004.5;
    f.recipients = "a@x.org,b@x.org";
    return f;
}

// What alertgw prints: the delivery delay after alertDelay, the outbox entry at the end.
notification_log_fields gateway_fields() {
    notification_log_fields f = action_fields();
    f.delivery_delay = 0.0126;
    f.region = "hall";
    f.level = "2";
    f.dedup_key = "Offline:cam1:1";
    f.entry = "1700000004600-0";
    f.delivered_to = "mail,hook";
    return f;
}

}  // namespace

TEST_CASE("notification log: the actions' line, key=value and as one JSON object") {
    const notification_log_fields f = action_fields();
    CHECK(notification_log_line(f, false) ==
          "notifType=Offline alertDelay=4.000 account=acct1 device=cam1 "
          "eventTs=1700000000.500 publishTs=1700000004.500 recipients=a@x.org,b@x.org");
    CHECK(notification_log_line(f, true) ==
          R"({"notifType":"Offline","alertDelay":4.000,"account":"acct1","device":"cam1",)"
          R"("eventTs":1700000000.500,"publishTs":1700000004.500,"recipients":"a@x.org,b@x.org"})");
}

TEST_CASE("notification log: alertgw's line adds deliveryDelay, the region and the entry") {
    const notification_log_fields f = gateway_fields();
    CHECK(notification_log_line(f, false) ==
          "notifType=Offline alertDelay=4.000 deliveryDelay=0.013 account=acct1 device=cam1 "
          "region=hall level=2 eventTs=1700000000.500 publishTs=1700000004.500 "
          "recipients=a@x.org,b@x.org dedupKey=Offline:cam1:1 entry=1700000004600-0 "
          "deliveredTo=mail,hook");
    const nlohmann::json record = nlohmann::json::parse(notification_log_line(f, true));
    CHECK(record == nlohmann::json::parse(R"({"notifType":"Offline","alertDelay":4.0,
        "deliveryDelay":0.013,"account":"acct1","device":"cam1","region":"hall","level":"2",
        "eventTs":1700000000.5,"publishTs":1700000004.5,"recipients":"a@x.org,b@x.org",
        "dedupKey":"Offline:cam1:1","entry":"1700000004600-0","deliveredTo":"mail,hook"})"));
    CHECK(notification_log_line(f, true).find(R"("alertDelay":4.000,"deliveryDelay":0.013,)") !=
          std::string::npos);  // the order of the key=value line
}

TEST_CASE("notification log: the late line, with the dedupKey when alertgw knows it") {
    notification_log_fields f = action_fields();
    CHECK(late_log_line(f, 300, false) ==
          "level=warning systemAlert=alertDelayOverThreshold notifType=Offline alertDelay=4.000 "
          "threshold=300.000 account=acct1 device=cam1");
    CHECK(late_log_line(f, 300, true) ==
          R"({"level":"warning","systemAlert":"alertDelayOverThreshold","notifType":"Offline",)"
          R"("alertDelay":4.000,"threshold":300.000,"account":"acct1","device":"cam1"})");
    f = gateway_fields();
    CHECK(late_log_line(f, 2.5, false) ==
          "level=warning systemAlert=alertDelayOverThreshold notifType=Offline alertDelay=4.000 "
          "threshold=2.500 account=acct1 device=cam1 dedupKey=Offline:cam1:1");
}

TEST_CASE("notification log: a value with line breaks or quotes stays on its line, both formats") {
    notification_log_fields f = gateway_fields();
    f.device = "cam7\nnotifType=Alert account=acct1\r\x1b[2J";
    f.delivered_to = "";
    const std::string plain = notification_log_line(f, false);
    CHECK(plain.find('\n') == std::string::npos);
    CHECK(plain.find('\r') == std::string::npos);
    CHECK(plain.find(R"(device="cam7\nnotifType=Alert account=acct1\r\x1b[2J")") !=
          std::string::npos);
    CHECK(plain.find(R"(deliveredTo="")") != std::string::npos);
    const std::string json = notification_log_line(f, true);
    CHECK(json.find('\n') == std::string::npos);
    CHECK(nlohmann::json::parse(json)["device"] == "cam7\nnotifType=Alert account=acct1\r\x1b[2J");
    const std::string bad_utf8 = "bad \xff utf-8";  // replaced, never a throw
    f.device = bad_utf8;
    CHECK(nlohmann::json::parse(notification_log_line(f, true))["device"] ==
          "bad \xEF\xBF\xBD utf-8");
}
