// redis_auth_test.cpp — Redis secrets at the boundary users see: real proxies running
// monitor.zip against real redis-server and redis-sentinel processes with ACL users
// (`AUTH user password`), the password read from a file (ALERT_REDIS_PASSWORD_FILE); Redis over
// TLS through the documented sidecar (stunnel in client mode in front of a TLS-only
// redis-server, with a self-signed certificate made here); a wrong password answers an error
// that says what was refused and never prints the password; a primary left without a replica
// refuses writes (NOREPLICAS), which is answered at once, not retried across the sentinels.
#include <doctest/doctest.h>
#include <hiredis.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "expectations.hpp"
#include "monitor_action.hpp"
#include "process_tools.hpp"
#include "proxy_process.hpp"
#include "redis_server.hpp"
#include "test_util.hpp"

using namespace support;
using alerts::test::redis_server;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

constexpr double T0 = 1764460800;
constexpr const char* PASSWORD = "pw-3f9a1c";  // the monitor's; never in an answer or a log
constexpr const char* WRONG = "wrong-7d2e0b";

redis_server::spawner tracked_spawn() {
    return [](const std::vector<std::string>& argv) {
        const char* path = std::getenv("PATH");
        return spawn_process(spawn_spec{argv,
                                        env_map{{"PATH", path ? path : "/usr/bin:/bin"}},
                                        "/tmp",
                                        {},
                                        "/dev/null",
                                        "/dev/null"});
    };
}

void tracked_kill(pid_t pid) { terminate_and_reap(pid, milliseconds(0)); }

// ACL users of the data server: "alerts" (the monitor: the alerts: keys only), "watcher" (the
// sentinels), "admin" (the test's own checks); the default user may only PING and AUTH.
std::vector<std::string> acl_users() {
    return {"--user",    "default",   "on",     "nopass", "-@all",   "+ping",
            "+auth",     "+hello",    "--user", "alerts", "on",      ">" + std::string(PASSWORD),
            "~alerts:*", "&*",        "+@all",  "--user", "watcher", "on",
            ">watch-pw", "~*",        "&*",     "+@all",  "--user",  "admin",
            "on",        ">admin-pw", "~*",     "&*",     "+@all"};
}

json batch(const json& etags, double now) { return json{{"etags", etags}, {"now", now}}; }

json motion(const std::string& id, double ts) {
    return {{"id", id}, {"account", "acct1"}, {"device", "cam1"}, {"type", "motion"},
            {"ts", ts}, {"region", "door"},   {"magnitude", 0.8}};
}

json answer_of(const proxy_process& proxy, const json& value) {
    const http_reply reply = proxy.run_raw("{\"value\":" + value.dump() + "}");
    REQUIRE_MESSAGE(reply.status == 200, shorten(reply.body));
    return json::parse(reply.body);
}

// One command over plain TCP on 127.0.0.1:port, after AUTH admin; its reply as text.
std::string admin_command(int port, const std::vector<std::string>& args) {
    const timeval tv{2, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        if (c) redisFree(c);
        return "";
    }
    redisSetTimeout(c, tv);
    std::string out;
    for (const auto& command : {std::vector<std::string>{"AUTH", "admin", "admin-pw"}, args}) {
        std::vector<const char*> argv;
        std::vector<std::size_t> lens;
        for (const std::string& a : command) {
            argv.push_back(a.c_str());
            lens.push_back(a.size());
        }
        auto* r = static_cast<redisReply*>(
            redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()));
        out = !r                               ? ""
              : r->type == REDIS_REPLY_INTEGER ? std::to_string(r->integer)
              : r->str                         ? std::string(r->str, r->len)
                                               : "";
        if (r) freeReplyObject(r);
    }
    redisFree(c);
    return out;
}

// A TLS-only redis-server (port 0, tls-port) and stunnel in client mode in front of it, as
// actions/alerts/README.md ("Redis over TLS") sets them up: the actions talk plain TCP to
// 127.0.0.1:front, stunnel verifies the server's certificate (the test's own CA: the
// self-signed certificate) and its name.
struct tls_redis {
    temp_dir dir{"alerts-redis-tls"};
    int tls_port = redis_server::free_port();
    int front = redis_server::free_port();
    pid_t server = -1;
    pid_t tunnel = -1;

    tls_redis() {
        const fs::path key = dir.path() / "key.pem", cert = dir.path() / "cert.pem";
        const command_result made = run_command(
            {"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", key.string(), "-out", cert.string(), "-days", "1", "-subj",
             "/CN=redis.test", "-addext", "subjectAltName=DNS:redis.test"},
            "", {}, dir.path());
        REQUIRE_MESSAGE(made.exit_code == 0, made.err);
        std::vector<std::string> argv = {"redis-server",
                                         "--port",
                                         "0",
                                         "--tls-port",
                                         std::to_string(tls_port),
                                         "--bind",
                                         "127.0.0.1",
                                         "--tls-cert-file",
                                         cert.string(),
                                         "--tls-key-file",
                                         key.string(),
                                         "--tls-ca-cert-file",
                                         cert.string(),
                                         "--tls-auth-clients",
                                         "no",
                                         "--save",
                                         "",
                                         "--appendonly",
                                         "no",
                                         "--dir",
                                         dir.path().string(),
                                         "--logfile",
                                         (dir.path() / "redis.log").string()};
        const std::vector<std::string> users = acl_users();
        argv.insert(argv.end(), users.begin(), users.end());
        server = tracked_spawn()(argv);
        write_file(dir.path() / "stunnel.conf",
                   "foreground = yes\npid =\n[redis]\nclient = yes\naccept = 127.0.0.1:" +
                       std::to_string(front) + "\nconnect = 127.0.0.1:" + std::to_string(tls_port) +
                       "\nCAfile = " + cert.string() +
                       "\nverifyChain = yes\ncheckHost = redis.test\n");
        tunnel = tracked_spawn()({"stunnel", (dir.path() / "stunnel.conf").string()});
        REQUIRE_MESSAGE(wait_until([&] { return admin_command(front, {"PING"}) == "PONG"; },
                                   std::chrono::seconds(10)),
                        "no PONG through stunnel from the TLS-only redis-server");
    }
    ~tls_redis() {
        if (tunnel > 0) tracked_kill(tunnel);
        if (server > 0) tracked_kill(server);
    }
    tls_redis(const tls_redis&) = delete;
    tls_redis& operator=(const tls_redis&) = delete;
};

}  // namespace

TEST_CASE("redis auth: monitor as an ACL user, password from a file, through stunnel to TLS") {
    tls_redis redis;
    // Nothing but TLS on the server's port: a plain client gets no answer there.
    CHECK(admin_command(redis.tls_port, {"PING"}).empty());
    const fs::path secret = redis.dir.path() / "redis-password";
    write_file(secret, std::string(PASSWORD) + "\n", fs::perms(0600));
    const std::string url = "redis://127.0.0.1:" + std::to_string(redis.front);
    json env = {{"ALERT_CONFIG", fixture_path("alerts/config.json").string()},
                {"ALERT_REDIS_URL", url},
                {"ALERT_REDIS_USER", "alerts"},
                {"ALERT_REDIS_PASSWORD_FILE", secret.string()}};
    auto proxy = start_monitor(env);
    const json first = answer_of(*proxy, batch(json::array({motion("m1", T0)}), T0 + 1));
    REQUIRE_MESSAGE(first.contains("notifications"), first.dump());
    CHECK(first["notifications"].size() == 1);
    CHECK(admin_command(redis.front, {"XLEN", "alerts:outbox"}) == "1");
    CHECK(contains(admin_command(redis.front, {"CLIENT", "LIST"}), " user=alerts "));

    // The same user, a wrong password (from the environment this time): an error answer that
    // names the user and what to check, never the password.
    env.erase("ALERT_REDIS_PASSWORD_FILE");
    env["ALERT_REDIS_PASSWORD"] = WRONG;
    auto wrong = start_monitor(env);
    const http_reply refused =
        wrong->run_raw("{\"value\":" + batch(json::array({motion("m2", T0)}), T0 + 2).dump() + "}");
    const std::string expected =
        "redis " + url +
        ": AUTH as user 'alerts' refused: WRONGPASS invalid username-password pair or user is "
        "disabled. (check ALERT_REDIS_USER and ALERT_REDIS_PASSWORD or "
        "ALERT_REDIS_PASSWORD_FILE)";
    CHECK(contains(refused.body, expected));
    CHECK(wait_until([&] { return contains(wrong->stderr_text(), expected); },
                     std::chrono::seconds(5)));
    for (const std::string& text : {refused.body, wrong->stderr_text(), proxy->stderr_text()}) {
        CHECK_FALSE(contains(text, WRONG));
        CHECK_FALSE(contains(text, PASSWORD));
    }
    // No user: the default user may not read the alerts' keys (the ACL is what let it in).
    env.erase("ALERT_REDIS_USER");
    env.erase("ALERT_REDIS_PASSWORD");
    auto anonymous = start_monitor(env);
    const http_reply noperm = anonymous->run_raw(
        "{\"value\":" + batch(json::array({motion("m3", T0)}), T0 + 3).dump() + "}");
    CHECK(contains(noperm.body, "NOPERM"));
}

// The sentinels with their own password (requirepass) and an ACL user of their own that may
// only ask for the primary, and an ACL user on the data servers for them (sentinel auth-user /
// auth-pass); the monitor as the ACL user "alerts" on the primary and as "alerts-watch" on the
// sentinels, both passwords from files. Then the primary loses its last replica
// (min-replicas-to-write 1 with none): the write is refused with NOREPLICAS, answered at once
// as an error and not retried across the sentinels (no failover can help).
TEST_CASE("redis auth: ACL users on the sentinels and the primary, then NOREPLICAS") {
    temp_dir dir{"alerts-redis-auth"};
    auto primary = redis_server::tcp({acl_users(), {}, 0, {"admin", "admin-pw"}}, tracked_spawn(),
                                     tracked_kill);
    const std::string config = "sentinel monitor mymaster 127.0.0.1 " +
                               std::to_string(primary->port()) +
                               " 1\n"
                               "sentinel auth-user mymaster watcher\n"
                               "sentinel auth-pass mymaster watch-pw\n"
                               "requirepass sentinel-pw-81c4\n"
                               "user alerts-watch on >watch-81c4 -@all +auth +hello +ping "
                               "+sentinel|get-master-addr-by-name\n";
    auto sentinel =
        redis_server::tcp({{}, config, 0, {"sentinel-pw-81c4"}}, tracked_spawn(), tracked_kill);
    write_file(dir.path() / "redis", PASSWORD, fs::perms(0600));
    write_file(dir.path() / "sentinel", "watch-81c4\n", fs::perms(0600));
    json env = {{"ALERT_CONFIG", fixture_path("alerts/config.json").string()},
                {"ALERT_REDIS_SENTINELS", sentinel->address()},
                {"ALERT_REDIS_MASTER", "mymaster"},
                {"ALERT_REDIS_MIN_REPLICAS", "0"},
                {"ALERT_REDIS_FAILOVER_MS", "3000"},
                {"ALERT_REDIS_USER", "alerts"},
                {"ALERT_REDIS_PASSWORD_FILE", (dir.path() / "redis").string()},
                {"ALERT_REDIS_SENTINEL_USER", "alerts-watch"},
                {"ALERT_REDIS_SENTINEL_PASSWORD_FILE", (dir.path() / "sentinel").string()}};
    auto proxy = start_monitor(env);
    const json first = answer_of(*proxy, batch(json::array({motion("m1", T0)}), T0 + 1));
    REQUIRE_MESSAGE(first.contains("notifications"), first.dump());
    CHECK(first["notifications"].size() == 1);
    CHECK(primary->command({"XLEN", "alerts:outbox"}) == "1");
    // The sentinel watches the primary as "watcher" (its auth-user), or it could not see it.
    CHECK(contains(primary->command({"CLIENT", "LIST"}), " user=watcher "));

    // A wrong sentinel password: every sentinel tried is named with what it said, no password.
    json wrong_env = env;
    wrong_env.erase("ALERT_REDIS_SENTINEL_PASSWORD_FILE");
    wrong_env["ALERT_REDIS_SENTINEL_PASSWORD"] = WRONG;
    wrong_env["ALERT_REDIS_FAILOVER_MS"] = "300";
    auto wrong = start_monitor(wrong_env);
    const json refused = answer_of(*wrong, batch(json::array({motion("m2", T0)}), T0 + 2));
    const std::string error = refused.value("error", "");
    CHECK_MESSAGE(contains(error, sentinel->address() +
                                      ": AUTH as user 'alerts-watch' refused: WRONGPASS invalid "
                                      "username-password pair or user is disabled. (check "
                                      "ALERT_REDIS_SENTINEL_USER and ALERT_REDIS_SENTINEL_PASSWORD "
                                      "or ALERT_REDIS_SENTINEL_PASSWORD_FILE)"),
                  error);
    for (const std::string& text : {refused.dump(), wrong->stderr_text(), proxy->stderr_text()}) {
        CHECK_FALSE(contains(text, WRONG));
        CHECK_FALSE(contains(text, PASSWORD));
        CHECK_FALSE(contains(text, "watch-81c4"));
    }

    // No replica left: Redis refuses the write; the answer comes at once, with no retry.
    primary->command({"CONFIG", "SET", "min-replicas-to-write", "1"});
    const auto start = steady_clock::now();
    const json noreplicas =
        answer_of(*proxy, batch(json::array({motion("m4", T0 + 900)}), T0 + 901));
    const auto took = steady_clock::now() - start;
    CHECK_FALSE(noreplicas.contains("notifications"));
    CHECK_MESSAGE(
        contains(noreplicas.value("error", ""), "NOREPLICAS Not enough good replicas to write."),
        noreplicas.dump());
    CHECK(took < milliseconds(1500));  // ALERT_REDIS_FAILOVER_MS is 3000: no retries
    CHECK(wait_until(
        [&] {
            return contains(proxy->stderr_text(),
                            "alerts: state store failed, the activation answers an error and "
                            "stored nothing: redis sentinel master mymaster (127.0.0.1:" +
                                std::to_string(primary->port()) +
                                "): ERR alerts commit refused, nothing written: alerts:outbox: "
                                "NOREPLICAS Not enough good replicas to write.");
        },
        std::chrono::seconds(5)));
    CHECK_FALSE(contains(proxy->stderr_text(), "retrying the batch"));
    CHECK(primary->command({"XLEN", "alerts:outbox"}) == "1");
}
