// alertgw's console (actions/alerts/README.md, "Operating the pipeline"), end to end: the real
// alertgw serving its API on a free port, a real redis-server, the monitor action in 2 real
// proxies sharing it, the SMTP server and the webhook receiver of gateway_rig.hpp.
#include <ctime>

#include "gateway_rig.hpp"

using namespace gwtest;

namespace {

const std::string TOKEN = "s3cret-console-token-0123";

struct api_reply {
    int status = -1;
    json body;
    std::string www_authenticate;
};

// One request to the console: METHOD PATH with a JSON body and, when given, the bearer token.
api_reply api(int port, const std::string& method, const std::string& path,
              const std::string& body = "", const std::string& token = TOKEN) {
    std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                          "Connection: close\r\nContent-Type: application/json\r\n";
    if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    const support::http_reply r = support::raw_exchange(port, request);
    api_reply out;
    out.status = r.status;
    out.body = json::parse(r.body, nullptr, false);
    out.www_authenticate = r.header("www-authenticate");
    return out;
}

double wall_now() { return static_cast<double>(std::time(nullptr)); }

std::string ts_text(double t) { return std::to_string(t); }

std::string status_batch(const std::vector<std::pair<std::string, std::string>>& changes, double ts,
                         double now) {
    std::string etags;
    for (const auto& [device, state] : changes) {
        if (!etags.empty()) etags += ",";
        etags += R"({"account":"acct1","device":")" + device + R"(","type":"status","ts":)" +
                 ts_text(ts) + R"(,"state":")" + state + "\"}";
    }
    return R"({"etags":[)" + etags + R"(],"now":)" + ts_text(now) + "}";
}

std::multiset<std::string> types_of(const json& answer) {
    std::multiset<std::string> out;
    for (const json& n : answer["notifications"]) {
        out.insert(n["notifType"].get<std::string>() + ":" + n["device"].get<std::string>());
    }
    return out;
}

// A console-serving gateway: its port, and the token file.
struct console_gateway {
    child process;
    int port = 0;
};

console_gateway start_console(rig& r, const std::string& name, bool with_token = true) {
    console_gateway g;
    g.port = support::pick_free_port();
    // One attempt: a refused notification is a dead letter at once (the tests replay them).
    std::vector<std::string> flags = {"--console-port", std::to_string(g.port), "--max-attempts",
                                      "1"};
    if (with_token) {
        const fs::path token = r.dir() / (name + "-token");
        write_text(token, TOKEN + "\n");
        flags.insert(flags.end(), {"--console-token-file", token.string()});
    }
    g.process = r.gateway(name, flags);
    REQUIRE_MESSAGE(support::wait_until([&] { return support::port_accepts(g.port); }, 10s),
                    g.process.err());
    return g;
}

}  // namespace

TEST_CASE("the console refuses writes without its token, answers bad requests with why, and "
          "reads without the token") {
    rig r;
    r.start_smtp();
    r.start_hook();
    console_gateway g = start_console(r, "gwC");
    const std::string silence =
        R"({"matchers":{"account":"acct1"},"duration":600,"comment":"test"})";
    const api_reply none = api(g.port, "POST", "/api/v1/silences", silence, "");
    CHECK(none.status == 401);
    CHECK(none.www_authenticate == "Bearer");
    CHECK(none.body["error"] == "this needs the console's token: Authorization: Bearer TOKEN");
    CHECK(api(g.port, "POST", "/api/v1/silences", silence, TOKEN + "x").status == 401);
    CHECK(
        api(g.port, "DELETE", "/api/v1/deadletters?all=1", "", "wrong-token-wrong-token").status ==
        401);
    const api_reply made = api(g.port, "POST", "/api/v1/silences", silence);
    REQUIRE(made.status == 201);
    CHECK(made.body["silence"]["status"] == "active");
    CHECK(made.body["silence"]["createdBy"] == "api");
    const api_reply list = api(g.port, "GET", "/api/v1/silences", "", "");
    REQUIRE(list.status == 200);
    REQUIRE(list.body["silences"].size() == 1);
    CHECK(list.body["silences"][0]["id"] == made.body["silence"]["id"]);

    const api_reply bad = api(g.port, "POST", "/api/v1/silences", R"({"matchers":{}})");
    CHECK(bad.status == 400);
    CHECK(bad.body["error"] == "matchers must have at least one matcher");
    const api_reply not_json = api(g.port, "POST", "/api/v1/silences", "{nope");
    CHECK(not_json.status == 400);
    CHECK(not_json.body["error"].get<std::string>().rfind("the body is not JSON", 0) == 0);
    CHECK(api(g.port, "GET", "/api/v1/nothing").status == 404);
    CHECK(api(g.port, "DELETE", "/api/v1/silences/0000000000000000").status == 404);
    CHECK(api(g.port, "GET", "/api/v1/deadletters/not-an-id").status == 404);
    CHECK(api(g.port, "GET", "/api/v1/deadletters?count=0").status == 400);
    CHECK(api(g.port, "DELETE", "/api/v1/deadletters").body["error"] ==
          "purging every dead letter needs ?all=1");
    // A body over the bound is refused before it is read.
    CHECK(api(g.port, "POST", "/api/v1/silences", std::string(300 * 1024, ' ')).status == 413);

    // Without a token file, the console only reads.
    console_gateway reader = start_console(r, "gwR", false);
    const api_reply off = api(reader.port, "POST", "/api/v1/silences", silence);
    CHECK(off.status == 403);
    CHECK(off.body["error"] == "writes are off: alertgw runs without --console-token-file");
    CHECK(api(reader.port, "GET", "/api/v1/silences", "", "").body["silences"].size() == 1);
    CHECK(exited_zero(g.process.stop()));
    CHECK(exited_zero(reader.process.stop()));
}

TEST_CASE("a silence made through the console holds back both containers' Offlines from their "
          "next batch, and ended early, what is still down is announced at once") {
    rig r;
    r.start_smtp();
    r.start_hook();
    console_gateway g = start_console(r, "gwS");
    const fs::path config = r.dir() / "config.json";
    write_text(config, R"({"accounts":{"acct1":{"recipients":["ops@example.com"],"devices":)"
                       R"({"cam1":{},"cam2":{},"cam3":{}}}}})");
    const json env = {{"ALERT_CONFIG", config.string()},
                      {"ALERT_REDIS_URL", r.redis().url()},
                      {"ALERT_REDIS_PREFIX", PREFIX}};
    auto p1 = start_monitor(env);
    auto p2 = start_monitor(env);
    const double w = wall_now();
    // Both containers have read the silences' version (none) before the silence exists.
    CHECK(run_batch(*p1, status_batch({}, w, w))["notifications"].empty());
    CHECK(run_batch(*p2, status_batch({}, w, w))["notifications"].empty());
    const api_reply made = api(
        g.port, "POST", "/api/v1/silences",
        R"({"matchers":{"account":"acct1","notifType":"Offline"},"duration":3600,"createdBy":"ops"})");
    REQUIRE(made.status == 201);
    const std::string id = made.body["silence"]["id"];

    run_batch(*p1, status_batch({{"cam1", "offline"}}, w + 1, w + 1));
    run_batch(*p2, status_batch({{"cam2", "offline"}}, w + 2, w + 2));
    const json held = run_batch(*p2, status_batch({}, w + 400, w + 400));
    CHECK(held["notifications"].empty());
    CHECK(held["stats"]["silenced"] == 2);
    CHECK(run_batch(*p1, status_batch({}, w + 401, w + 401))["notifications"].empty());

    const api_reply ended = api(g.port, "DELETE", "/api/v1/silences/" + id, R"({"by":"ops"})");
    REQUIRE(ended.status == 200);
    CHECK(ended.body["silence"]["status"] == "ended");
    CHECK(ended.body["silence"]["endedBy"] == "expired by ops");
    // Both Offlines from the next batch of either container (p1 here), once.
    const json announced = run_batch(*p1, status_batch({}, w + 402, w + 402));
    CHECK(types_of(announced) == std::multiset<std::string>{"Offline:cam1", "Offline:cam2"});
    CHECK(run_batch(*p2, status_batch({}, w + 403, w + 403))["notifications"].empty());
    // The devices it no longer holds are not read again by every batch: nothing left due.
    CHECK(r.redis().command({"ZCOUNT", PREFIX + "due", "-inf", ts_text(w + 403)}) == "0");

    // Until resolved: cam3's outage was announced; its silence ends with the device's return,
    // and the Online that closes the outage goes out.
    run_batch(*p1, status_batch({{"cam3", "offline"}}, w + 500, w + 500));
    CHECK(types_of(run_batch(*p2, status_batch({}, w + 800, w + 800))) ==
          std::multiset<std::string>{"Offline:cam3"});
    const api_reply until =
        api(g.port, "POST", "/api/v1/silences",
            R"({"matchers":{"account":"acct1","device":"cam3"},"untilResolved":true})");
    REQUIRE(until.status == 201);
    run_batch(*p2, status_batch({{"cam3", "online"}}, w + 900, w + 900));
    json silences = api(g.port, "GET", "/api/v1/silences").body["silences"];
    REQUIRE(silences.size() == 2);
    CHECK(silences[1]["untilResolved"] == true);
    CHECK(silences[1]["endedBy"] == "resolved");
    CHECK(silences[1]["status"] == "ended");
    CHECK(types_of(run_batch(*p1, status_batch({}, w + 1000, w + 1000))) ==
          std::multiset<std::string>{"Online:cam3"});
    CHECK(exited_zero(g.process.stop()));
}

TEST_CASE("a dead letter replayed through the console is delivered once, to the target that "
          "gave up only, and cannot be replayed twice") {
    rig r;
    r.start_smtp();
    r.start_hook("ok", {"poison-0"});  // the webhook refuses that key with 500
    console_gateway g = start_console(r, "gwD");
    r.add("poison", 1);
    child other = r.gateway("gwD2", {"--max-attempts", "1"});
    REQUIRE(support::wait_until([&] { return r.dead_letters().size() == 1; }, 20s));
    REQUIRE(support::wait_until([&] { return r.mail_keys().count("poison-0") == 1; }, 10s));
    const api_reply list = api(g.port, "GET", "/api/v1/deadletters", "", "");
    REQUIRE(list.status == 200);
    CHECK(list.body["total"] == 1);
    REQUIRE(list.body["deadLetters"].size() == 1);
    const json letter = list.body["deadLetters"][0];
    CHECK(letter["key"] == "poison-0");
    CHECK(letter["target"] == r.hook_name());
    CHECK(letter["error"] == "HTTP 500");
    CHECK(letter["n"]["dedupKey"] == "poison-0");
    const std::string id = letter["id"];
    CHECK(api(g.port, "GET", "/api/v1/deadletters/" + id, "", "").body["deadLetter"]["key"] ==
          "poison-0");

    // The receiver is fixed; the replay goes to the webhook only.
    r.start_hook();
    const api_reply replayed = api(g.port, "POST", "/api/v1/deadletters/" + id + "/replay");
    REQUIRE(replayed.status == 200);
    CHECK(replayed.body["replayed"] == id);
    CHECK(api(g.port, "POST", "/api/v1/deadletters/" + id + "/replay").status == 404);
    REQUIRE(support::wait_until([&] { return r.hook_keys().count("poison-0") == 1; }, 20s));
    CHECK(support::wait_until([&] { return r.pending_count() == "0"; }, 10s));
    std::this_thread::sleep_for(500ms);  // nothing more arrives
    CHECK(r.hook_keys().count("poison-0") == 1);
    CHECK(r.mail_keys().count("poison-0") == 1);  // not e-mailed again
    CHECK(r.dead_letters().empty());
    CHECK(api(g.port, "GET", "/api/v1/deadletters").body["total"] == 0);
    // The recent notifications list shows both outbox entries of it.
    const json recent = api(g.port, "GET", "/api/v1/notifications?count=5").body["notifications"];
    REQUIRE(recent.size() == 2);
    CHECK(recent[0]["only"] == r.hook_name());
    CHECK(recent[1]["key"] == "poison-0");
    CHECK(exited_zero(other.stop()));
    CHECK(exited_zero(g.process.stop()));
}

TEST_CASE("state now and explanations follow a scripted stream: every held-back notification "
          "is explained with the rule that decided it") {
    rig r;
    r.start_smtp();
    r.start_hook();
    console_gateway g = start_console(r, "gwE");
    const double w = wall_now();
    const fs::path config = r.dir() / "config.json";
    const json cfg = {
        {"reminders", {{"offline", {600}}}},
        {"maintenance",
         {{{"account", "acct1"}, {"device", "dock"}, {"from", w}, {"until", w + 3600}}}},
        {"accounts",
         {{"acct1",
           {{"recipients", {"ops@example.com"}},
            {"devices",
             {{"bridge", {{"name", "Site bridge"}}},
              {"gate", {{"bridge", "bridge"}}},
              {"dock", json::object()},
              {"quiet", json::object()},
              {"blip", json::object()},
              {"flaky", json::object()},
              {"gone", {{"name", "Gone cam"}}},
              {"late", json::object()}}}}}}}};
    write_text(config, cfg.dump());
    const json env = {{"ALERT_CONFIG", config.string()},
                      {"ALERT_REDIS_URL", r.redis().url()},
                      {"ALERT_REDIS_PREFIX", PREFIX}};
    auto p1 = start_monitor(env);
    auto p2 = start_monitor(env);
    int turn = 0;
    auto send = [&](const std::vector<std::pair<std::string, std::string>>& changes, double ts,
                    double now) {
        return run_batch(*(turn++ % 2 ? p1 : p2), status_batch(changes, ts, now));
    };
    const api_reply made = api(g.port, "POST", "/api/v1/silences",
                               R"({"matchers":{"account":"acct1","device":"quiet"},"duration":)"
                               R"(7200,"comment":"lens cleaning"})");
    REQUIRE(made.status == 201);
    const std::string silence_id = made.body["silence"]["id"];

    send({{"gone", "offline"}, {"dock", "offline"}, {"quiet", "offline"}, {"blip", "offline"}},
         w + 10, w + 10);
    send({{"blip", "online"}}, w + 40, w + 40);  // back inside its 300 s hold
    send({{"bridge", "offline"}, {"gate", "offline"}}, w + 50, w + 50);
    for (int i = 0; i < 6; ++i) {
        send({{"flaky", i % 2 ? "online" : "offline"}}, w + 60 + i, w + 60 + i);
    }
    send({{"flaky", "offline"}}, w + 70, w + 70);   // a change while flapping
    send({}, 0, w + 400);                           // the holds end
    send({{"late", "offline"}}, w + 900, w + 900);  // a hold still running at the end
    send({}, 0, w + 1000);                          // gone's reminder, the last of one

    const api_reply state = api(g.port, "GET", "/api/v1/state?account=acct1", "", "");
    REQUIRE(state.status == 200);
    auto devices_in = [&](const char* group) {
        std::set<std::string> out;
        for (const json& d : state.body["devices"][group]) out.insert(d["device"]);
        return out;
    };
    CHECK(devices_in("offline") == std::set<std::string>{"bridge", "gone"});
    CHECK(devices_in("inhibited") == std::set<std::string>{"gate"});
    CHECK(devices_in("silenced") == std::set<std::string>{"dock", "quiet"});
    CHECK(devices_in("flapping") == std::set<std::string>{"flaky"});
    CHECK(devices_in("pending") == std::set<std::string>{"late"});
    for (const json& d : state.body["devices"]["silenced"]) {
        CHECK(d["heldBy"] == (d["device"] == "dock" ? std::string("maintenance") : silence_id));
    }
    for (const json& d : state.body["devices"]["offline"]) {
        if (d["device"] == "gone") {
            CHECK(d["since"] == doctest::Approx(w + 10));
            CHECK(d["name"] == "Gone cam");
        }
    }
    CHECK(state.body["counts"]["offline"] == 2);
    CHECK(api(g.port, "GET", "/api/v1/state?account=nobody").body["counts"]["offline"] == 0);

    auto explain = [&](const std::string& device, double from = 0, double to = 1e11) {
        const api_reply e = api(g.port, "GET",
                                "/api/v1/explain?account=acct1&device=" + device +
                                    "&from=" + ts_text(from) + "&to=" + ts_text(to),
                                "", "");
        REQUIRE(e.status == 200);
        return e.body["heldBack"];
    };
    auto rules = [&](const json& held) {
        std::multiset<std::string> out;
        for (const json& h : held) {
            out.insert(h["rule"].get<std::string>() + ":" + h["notifType"].get<std::string>());
        }
        return out;
    };
    CHECK(rules(explain("blip")) == std::multiset<std::string>{"hold:Offline"});
    CHECK(rules(explain("gate")) == std::multiset<std::string>{"bridge:Offline"});
    CHECK(explain("gate")[0]["by"] == "bridge");
    CHECK(rules(explain("dock")) == std::multiset<std::string>{"maintenance:Offline"});
    const json quiet = explain("quiet");
    CHECK(rules(quiet) == std::multiset<std::string>{"silence:Offline"});
    CHECK(quiet[0]["by"] == silence_id);
    // flaky: three returns inside the hold, then flapping (FlappingStarted went out), then a
    // change while it flaps.
    CHECK(rules(explain("flaky")) == std::multiset<std::string>{"hold:Offline", "hold:Offline",
                                                                "hold:Offline",
                                                                "flapping:Offline"});
    CHECK(rules(explain("gone")) == std::multiset<std::string>{"reminders:StillOffline"});
    CHECK(explain("late").empty());
    CHECK(rules(explain("bridge")) == std::multiset<std::string>{"reminders:StillOffline"});
    // Between T1 and T2: only what was decided then.
    CHECK(explain("blip", w + 41, w + 2000).empty());
    CHECK(explain("blip", w + 39, w + 41).size() == 1);
    CHECK(api(g.port, "GET", "/api/v1/explain?account=acct1").status == 400);
    CHECK(api(g.port, "GET", "/api/v1/explain?account=acct1&device=x&from=yesterday").status ==
          400);
    CHECK(exited_zero(g.process.stop()));
}

TEST_CASE("alertctl drives the console (silences, state, explanations, dead letters), and a write "
          "without the token file or a console that is not there is an error that says so") {
    rig r;
    r.start_smtp();
    r.start_hook("ok", {"poison-0"});
    console_gateway g = start_console(r, "gwA", true);
    const fs::path token = r.dir() / "gwA-token";
    const std::string url = "http://127.0.0.1:" + std::to_string(g.port);
    auto ctl = [&](std::vector<std::string> args, bool with_token = true) {
        std::vector<std::string> argv = {ALERTCTL_BIN, "--url", url};
        if (with_token) argv.insert(argv.end(), {"--token-file", token.string()});
        argv.insert(argv.end(), args.begin(), args.end());
        return support::run_command(argv, "", support::path_only_env(), "/tmp");
    };
    const auto added = ctl({"--json", "silence", "add", "--account", "acct1", "--device", "cam1",
                            "--duration", "1h", "--comment", "lens cleaning", "--by", "ann"});
    REQUIRE_MESSAGE(added.exit_code == 0, added.err);
    const std::string id = json::parse(added.out)["silence"]["id"];
    const auto listed = ctl({"silence", "list"}, false);
    CHECK(listed.exit_code == 0);
    CHECK(listed.out.find(id + "  active  account=acct1,device=cam1") != std::string::npos);
    CHECK(listed.out.find("ann  lens cleaning") != std::string::npos);
    const auto expired = ctl({"silence", "expire", id});
    CHECK(expired.exit_code == 0);
    CHECK(expired.out == "silence " + id + " ended (account=acct1,device=cam1)\n");
    CHECK(ctl({"silence", "list"}).out.find(id) == std::string::npos);
    CHECK(ctl({"silence", "list", "--all"}).out.find(id + "  ended") != std::string::npos);

    const auto state = ctl({"state", "--account", "acct1"}, false);
    CHECK(state.exit_code == 0);
    CHECK(state.out.rfind("offline: 0\n", 0) == 0);
    const auto why = ctl({"explain", "--account", "acct1", "--device", "cam1"}, false);
    CHECK(why.out == "nothing held back for acct1/cam1 then\n");

    r.add("poison", 1);
    child other = r.gateway("gwA2", {"--max-attempts", "1"});
    REQUIRE(support::wait_until([&] { return r.dead_letters().size() == 1; }, 20s));
    const std::string letter = r.dead_letters()[0].at("id");
    const auto dead = ctl({"deadletters", "list"}, false);
    const std::string row = lines_of(dead.out).at(1);
    CHECK(row.rfind(letter + "  " + r.hook_name() + "  poison-0  ", 0) == 0);
    CHECK(row.substr(row.size() - 8) == "HTTP 500");
    CHECK(dead.out.find("1 in all\n") != std::string::npos);
    r.start_hook();
    CHECK(ctl({"deadletters", "replay", letter}).out.rfind("replayed " + letter, 0) == 0);
    REQUIRE(support::wait_until([&] { return r.hook_keys().count("poison-0") == 1; }, 20s));
    const auto again = ctl({"deadletters", "replay", letter});
    CHECK(again.exit_code == 1);
    CHECK(again.err == "alertctl: POST /api/v1/deadletters/" + letter +
                           "/replay: HTTP 404: no dead letter " + letter + "\n");

    const auto no_token = ctl({"silence", "expire", id}, false);
    CHECK(no_token.exit_code == 2);
    CHECK(no_token.err.find("give --token-file") != std::string::npos);
    CHECK(ctl({"silence", "oops"}).exit_code == 2);
    CHECK(exited_zero(other.stop()));
    CHECK(exited_zero(g.process.stop()));
    const auto gone = ctl({"state"}, false);
    CHECK(gone.exit_code == 1);
    CHECK(gone.err.rfind("alertctl: " + url + ": Couldn't connect to server", 0) == 0);
}

TEST_CASE("the console in a real browser: the pages show the state, a silence is made through "
          "the form and ended with its button, a dead letter is replayed with its button") {
    rig r;
    r.start_smtp();
    r.start_hook("ok", {"poison-0"});
    console_gateway g = start_console(r, "gwB");
    const fs::path config = r.dir() / "config.json";
    json devices = json::object();
    for (const char* d : {"gate", "yard", "dock", "lobby", "flaky"}) {
        devices[d] = {{"name", std::string("Camera ") + d}};
    }
    devices["gate"]["bridge"] = "bridge";
    devices["yard"]["bridge"] = "bridge";
    devices["bridge"] = {{"name", "Site bridge"}};
    write_text(
        config,
        json{{"accounts", {{"acct1", {{"recipients", {"ops@example.com"}}, {"devices", devices}}}}}}
            .dump());
    const json env = {{"ALERT_CONFIG", config.string()},
                      {"ALERT_REDIS_URL", r.redis().url()},
                      {"ALERT_REDIS_PREFIX", PREFIX}};
    auto p1 = start_monitor(env);
    auto p2 = start_monitor(env);
    const double w = wall_now() - 300;  // the outages began 5 minutes ago: due now
    run_batch(*p1, status_batch({{"dock", "offline"}, {"lobby", "offline"}}, w, w));
    for (int i = 0; i < 6; ++i) {
        run_batch(*p2, status_batch({{"flaky", i % 2 ? "online" : "offline"}}, w + i, w + i));
    }
    CHECK(types_of(run_batch(*p1, status_batch({}, w + 300, w + 300))) ==
          std::multiset<std::string>{"Offline:dock", "Offline:lobby"});
    json poison = rig::notification("poison-0", 1);  // an Offline decided a second ago
    poison["eventTs"] = w - 1;
    poison["publishTs"] = w + 299;
    r.add_raw("poison-0", poison.dump());
    REQUIRE(support::wait_until([&] { return r.dead_letters().size() == 1; }, 20s));
    REQUIRE(support::wait_until([&] { return r.mails().size() >= 3; }, 20s));
    const std::string letter = r.dead_letters()[0].at("id");
    r.start_hook();  // fixed: the replay will be taken

    const char* wanted = std::getenv("CONSOLE_SCREENSHOTS");
    const fs::path shots = wanted && *wanted ? fs::path(wanted) : r.dir() / "shots";
    const auto browser = support::run_command(
        {(SUPPORT / "console_browser.py").string(), "--url",
         "http://127.0.0.1:" + std::to_string(g.port), "--token", TOKEN, "--shots", shots.string(),
         "--offline", "2", "--flapping", "flaky", "--silence-account", "acct1", "--silence-device",
         "yard", "--dead-letter", letter},
        "", support::path_only_env(), "/tmp");
    REQUIRE_MESSAGE(browser.exit_code == 0, browser.err);
    const json done = json::parse(browser.out);
    CHECK(done["pages"].size() == 6);
    for (const char* shot : {"offline.png", "flapping.png", "silences.png", "deadletters.png",
                             "notifications.png", "delay.png"}) {
        CHECK_MESSAGE(fs::file_size(shots / shot) > 1000, shot);
    }
    // What the clicks did, as the API sees it.
    const json silences = api(g.port, "GET", "/api/v1/silences").body["silences"];
    REQUIRE(silences.size() == 1);
    CHECK(silences[0]["id"] == done["silence"]);
    CHECK(silences[0]["matchers"] == json{{"account", "acct1"}, {"device", "yard"}});
    CHECK(silences[0]["createdBy"] == "browser");
    CHECK(silences[0]["endsAt"].get<double>() - silences[0]["startsAt"].get<double>() == 2700);
    CHECK(silences[0]["status"] == "ended");
    CHECK(silences[0]["endedBy"] == "expired by browser");
    REQUIRE(support::wait_until([&] { return r.hook_keys().count("poison-0") == 1; }, 20s));
    CHECK(r.dead_letters().empty());
    CHECK(exited_zero(g.process.stop()));
}
