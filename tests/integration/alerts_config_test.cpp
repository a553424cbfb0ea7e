// The deployed config (ALERT_CONFIG) at the boundary: monitor.zip in the real proxy. A process
// the proxy starts again after a crash decides with the config its /init read, not with an
// edited file; every process names its config on stderr with the file's SHA-256 (what
// `sha256sum` prints), in plain and JSON log modes; a relative ALERT_CONFIG is the action's
// directory's; a bad config fails /init through the SDK's on_init, with its reason.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "archive_builder.hpp"
#include "expectations.hpp"
#include "monitor_action.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"

using namespace support;
using nlohmann::json;

namespace {

constexpr double T0 = 1764460800;

json motion(const std::string& id, double ts) {
    return {{"id", id}, {"account", "acct1"}, {"device", "cam1"}, {"type", "motion"},
            {"ts", ts}, {"region", "door"},   {"magnitude", 0.8}};
}

// The recipients of the one Alert a motion ETag at `ts` gives.
json alert_recipients(const proxy_process& proxy, const std::string& id, double ts) {
    const http_reply reply = proxy.run(json{{"etags", json::array({motion(id, ts)})}, {"now", ts}});
    REQUIRE_MESSAGE(reply.status == 200, shorten(reply.body));
    const json answer = json_of(reply);
    REQUIRE_MESSAGE(answer.contains("notifications"), shorten(reply.body));
    REQUIRE(answer["notifications"].size() == 1);
    return answer["notifications"][0]["recipients"];
}

// Kills the action process as a crash or the OOM killer would; the next /run restarts it.
void kill_action(const proxy_process& proxy) {
    const std::vector<pid_t> actions = proxy.children();
    REQUIRE(actions.size() == 1);
    REQUIRE(::kill(actions[0], SIGKILL) == 0);
    REQUIRE(wait_until([&] { return !process_alive(actions[0]); }, std::chrono::seconds(10)));
}

std::string sha256sum(const fs::path& file) {
    const command_result run =
        run_command({"sha256sum", file.string()}, "", path_only_env(), fs::temp_directory_path());
    REQUIRE(run.exit_code == 0);
    return run.out.substr(0, 64);
}

// The lines of `text` that contain `needle`.
std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
    std::vector<std::string> found;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (contains(line, needle)) found.push_back(line);
    }
    return found;
}

// The fixture config with the door region's recipients replaced.
std::string config_for(const std::string& recipient) {
    json config = json::parse(fixture_text("alerts/config.json"));
    config["accounts"]["acct1"]["devices"]["cam1"]["regions"]["door"]["recipients"] = {recipient};
    return config.dump(2) + "\n";
}

// monitor.zip's files (exec, exec.env) plus `extra`, as /init's base64 code.
std::string monitor_zip_with(std::vector<archive_entry> extra) {
    std::vector<archive_entry> entries =
        entries_from_dir((fs::path(ACTIONLOOP_BINARY_DIR) / "actions" / "monitor.d").string());
    for (archive_entry& e : extra) entries.push_back(std::move(e));
    return base64_encode(make_zip(entries));
}

// The lines of the proxy's stderr holding `needle`, once there are `count` of them (or 5 s
// passed): the proxy writes the action's lines through its log buffer, so they may trail the
// answer of the activation that came after them.
std::vector<std::string> logged_lines(const proxy_process& proxy, const std::string& needle,
                                      std::size_t count) {
    wait_until([&] { return lines_with(proxy.stderr_text(), needle).size() >= count; },
               std::chrono::seconds(5));
    return lines_with(proxy.stderr_text(), needle);
}

}  // namespace

TEST_CASE("alerts: a restarted monitor decides with the config its /init read, and names it") {
    temp_dir dir("alerts-config");
    const fs::path file = dir.path() / "config.json";
    write_file(file, config_for("guard@a1.example"));
    const std::string deployed = sha256sum(file);
    const std::string line = "alerts: config sha256=" + deployed +
                             " bytes=" + std::to_string(fs::file_size(file)) +
                             " file=" + file.string();
    const auto proxy = start_monitor({{"ALERT_CONFIG", file.string()}});
    CHECK(alert_recipients(*proxy, "m1", T0) == json{"guard@a1.example"});
    const fs::path bin = fs::canonical(proxy->cwd() / "action" / "1" / "bin");
    const std::string kept = " copy=" + (bin / ".alert-config-").string();
    const std::vector<std::string> started = logged_lines(*proxy, "alerts: config", 1);
    REQUIRE(started.size() == 1);
    CHECK(started[0].rfind(line + " read=file" + kept, 0) == 0);

    // The operator edits the file; a crash restarts the action process: nothing changes.
    write_file(file, config_for("new@a1.example"));
    kill_action(*proxy);
    CHECK(alert_recipients(*proxy, "m2", T0 + 100) == json{"guard@a1.example"});
    kill_action(*proxy);
    CHECK(alert_recipients(*proxy, "m3", T0 + 200) == json{"guard@a1.example"});
    const std::vector<std::string> named = logged_lines(*proxy, "alerts: config", 3);
    REQUIRE(named.size() == 3);
    CHECK(named[0] == started[0]);
    CHECK(named[1] == replace_all(started[0], " read=file ", " read=copy "));
    CHECK(named[2] == named[1]);
    // The copy holds the bytes /init read (sha256sum of it is the logged one).
    const std::string copy = named[0].substr(named[0].find(" copy=") + 6);
    CHECK(sha256sum(copy) == deployed);

    // A new /init (here: another container) reads the file as it is now.
    const auto redeployed = start_monitor({{"ALERT_CONFIG", file.string()}});
    CHECK(alert_recipients(*redeployed, "m1", T0) == json{"new@a1.example"});
    CHECK(logged_lines(*redeployed, "alerts: config sha256=" + sha256sum(file) + " bytes=", 1)
              .size() == 1);
}

TEST_CASE("alerts: in JSON log mode the config line is a record whose message is an object") {
    temp_dir dir("alerts-config-json");
    const fs::path file = dir.path() / "config.json";
    write_file(file, config_for("guard@a1.example"));
    const std::string deployed = sha256sum(file);
    const std::uintmax_t bytes = fs::file_size(file);
    proxy_process proxy(cpp_runtime({{"OW_LOG_FORMAT", "json"}}));
    const json env = {{"ALERT_CONFIG", file.string()}};
    CHECK_REPLY(proxy.init(monitor_zip_code(), "main", &env), 200, OK_BODY);
    CHECK(alert_recipients(proxy, "m1", T0) == json{"guard@a1.example"});
    write_file(file, config_for("new@a1.example"));
    kill_action(proxy);
    CHECK(alert_recipients(proxy, "m2", T0 + 100) == json{"guard@a1.example"});
    std::vector<json> records;
    for (const std::string& text : logged_lines(proxy, R"("alerts":"config")", 2)) {
        records.push_back(json::parse(text));
    }
    REQUIRE(records.size() == 2);
    for (json& record : records) {
        CHECK(record["stream"] == "stderr");
        CHECK_FALSE(record.contains("activationId"));  // written at start, before any /run
        json& message = record["message"];
        CHECK(contains(message.value("copy", ""), "/action/1/bin/.alert-config-"));
        message.erase("copy");
    }
    const json first = {{"alerts", "config"},
                        {"sha256", deployed},
                        {"bytes", bytes},
                        {"file", file.string()},
                        {"read", "file"}};
    CHECK(records[0]["message"] == first);
    json restarted = first;
    restarted["read"] = "copy";
    CHECK(records[1]["message"] == restarted);
}

TEST_CASE("alerts: a relative ALERT_CONFIG is the action directory's, whatever /init it is") {
    // The zip ships config.json, and a copy as if kept by another proxy (a stale one): the
    // first /init names a file that is not there and fails; the second reads config.json from
    // its own directory (action/2/bin) and ignores the stale copy.
    const std::string code = monitor_zip_with(
        {file_entry("config.json", config_for("guard@a1.example")),
         file_entry(".alert-config-0123456789abcdef.json", config_for("stale@a1.example"))});
    proxy_process proxy(cpp_runtime());
    const json missing = {{"ALERT_CONFIG", "missing.json"}};
    const fs::path first = fs::weakly_canonical(proxy.cwd() / "action" / "1" / "bin");
    CHECK_ERROR_REPLY(proxy.init(code, "main", &missing), 502,
                      "cannot start action: The action did not initialize properly. on_init: "
                      "alerts: cannot start: config: cannot read ALERT_CONFIG file '" +
                          (first / "missing.json").string() +
                          "' (ALERT_CONFIG='missing.json', relative to the action's directory)");
    const json env = {{"ALERT_CONFIG", "config.json"}};
    CHECK_REPLY(proxy.init(code, "main", &env), 200, OK_BODY);
    CHECK(alert_recipients(proxy, "m1", T0) == json{"guard@a1.example"});
    const fs::path bin = fs::canonical(proxy.cwd() / "action" / "2" / "bin");
    CHECK(logged_lines(proxy, " file=" + (bin / "config.json").string() + " read=file", 1).size() ==
          1);
    CHECK_FALSE(fs::exists(bin / ".alert-config-0123456789abcdef.json"));
    kill_action(proxy);
    CHECK(alert_recipients(proxy, "m2", T0 + 100) == json{"guard@a1.example"});
    CHECK(logged_lines(proxy, " file=" + (bin / "config.json").string() + " read=copy", 1).size() ==
          1);
}
