// gateway_rig.hpp — what the alertgw suites share: a real redis-server, SMTP server
// (tests/support/smtp_sink.py) and webhook receiver (tests/support/webhook_receiver.py) on
// free ports, the real alertgw binary, the monitor action in real proxies, and helpers.
#pragma once

#include "../alerts/redis_server.hpp"
#include "archive_builder.hpp"
#include "expectations.hpp"
#include "gateway/email_message.hpp"
#include "gateway/options.hpp"
#include "gateway/transport/attempt_outcome.hpp"
#include "gateway/transport/curl_transfer.hpp"
#include "http_client.hpp"
#include "monitor_action.hpp"
#include "process_tools.hpp"
#include "prometheus_text.hpp"
#include "proxy_process.hpp"
#include "test_util.hpp"
#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace gwtest {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;
using alerts::test::redis_server;
using support::env_map;
using support::spawn_process;
using support::spawn_spec;
using support::start_monitor;

inline const fs::path SUPPORT = fs::path(ACTIONLOOP_SOURCE_DIR) / "tests" / "support";
inline const std::string PREFIX = "gwtest:";

inline redis_server::spawner tracked_spawn() {
    return [](const std::vector<std::string>& argv) {
        return spawn_process(
            spawn_spec{argv, support::path_only_env(), "/tmp", {}, "/dev/null", "/dev/null"});
    };
}
inline void tracked_kill(pid_t pid) { support::terminate_and_reap(pid, 0ms); }

// A child process (a server or a gateway), ended (SIGTERM, then SIGKILL) with the scope.
class child {
public:
    child() = default;
    child(std::vector<std::string> argv, env_map env, fs::path out, fs::path err)
        : out_(std::move(out)), err_(std::move(err)) {
        pid_ = spawn_process(spawn_spec{std::move(argv), std::move(env), "/tmp", {}, out_, err_});
    }
    child(child&& o) noexcept { *this = std::move(o); }
    child& operator=(child&& o) noexcept {
        stop();
        pid_ = o.pid_;
        out_ = std::move(o.out_);
        err_ = std::move(o.err_);
        o.pid_ = -1;
        return *this;
    }
    ~child() { stop(); }
    /// SIGTERM, waits; the wait status.
    int stop(std::chrono::milliseconds grace = 15s) {
        if (pid_ <= 0) return -1;
        const int st = support::terminate_and_reap(pid_, grace);
        pid_ = -1;
        return st;
    }
    void kill9() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        support::terminate_and_reap(pid_, 0ms);
        pid_ = -1;
    }
    pid_t pid() const { return pid_; }
    std::string out() const { return support::read_file(out_); }
    std::string err() const { return support::read_file(err_); }

private:
    pid_t pid_ = -1;
    fs::path out_, err_;
};

inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
        if (!l.empty()) out.push_back(l);
    }
    return out;
}

struct mail {
    std::vector<std::string> envelope_to;
    std::map<std::string, std::string> headers;
    std::string body;
};

// Everything the test sets up: Redis, the two receivers, and helpers to run gateways.
class rig {
public:
    explicit rig(bool aof = false)
        : redis_(aof, tracked_spawn(), tracked_kill), dir_("alertgw-test") {
        fs::create_directories(dir_.path() / "mail");
        smtp_port_ = support::pick_free_port();
        hook_port_ = support::pick_free_port();
        metrics_port_ = support::pick_free_port();
    }

    void start_smtp(const std::vector<std::string>& extra = {}) {
        std::vector<std::string> argv = {(SUPPORT / "smtp_sink.py").string(), "--port",
                                         std::to_string(smtp_port_), "--dir",
                                         (dir_.path() / "mail").string()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        smtp_ = child(argv, support::path_only_env(), dir_.path() / "smtp.out",
                      dir_.path() / "smtp.err");
        REQUIRE_MESSAGE(support::wait_until([&] { return support::port_accepts(smtp_port_); }, 20s),
                        (std::string("smtp_sink did not start: ") + smtp_.err()));
    }
    void stop_smtp() { smtp_.kill9(); }

    void start_hook(const std::string& mode = "ok",
                    const std::vector<std::string>& fail_keys = {}) {
        std::vector<std::string> argv = {(SUPPORT / "webhook_receiver.py").string(),
                                         "--port",
                                         std::to_string(hook_port_),
                                         "--log",
                                         (dir_.path() / "hook.jsonl").string(),
                                         "--mode",
                                         mode};
        for (const auto& k : fail_keys) {
            argv.push_back("--fail-key");
            argv.push_back(k);
        }
        hook_ = child(argv, support::path_only_env(), dir_.path() / "hook.out",
                      dir_.path() / "hook.err");
        REQUIRE_MESSAGE(support::wait_until([&] { return support::port_accepts(hook_port_); }, 20s),
                        (std::string("webhook_receiver did not start: ") + hook_.err()));
    }
    void stop_hook() { hook_.kill9(); }
    void hook_mode(const std::string& mode) {
        const auto r = support::http_post(hook_port_, "/_mode", mode);
        REQUIRE(r.status == 200);
    }
    std::string hook_url() const {
        return "http://127.0.0.1:" + std::to_string(hook_port_) + "/hook";
    }
    /// What alertgw shows of the webhook: scheme://host:port, never the path.
    std::string hook_name() const { return "http://127.0.0.1:" + std::to_string(hook_port_); }
    std::string smtp_url() const { return "smtp://127.0.0.1:" + std::to_string(smtp_port_); }

    /// A gateway with both targets and the given extra flags; `n` names its log files.
    child gateway(const std::string& name, std::vector<std::string> flags = {},
                  bool metrics = false, const env_map& extra_env = {}) {
        std::vector<std::string> argv = {
            ALERTGW_BIN, "--smtp",   smtp_url(),   "--from", "alertgw@example.com",
            "--webhook", hook_url(), "--consumer", name,     "--timeout",
            "2"};
        if (metrics) {
            argv.push_back("--metrics-port");
            argv.push_back(std::to_string(metrics_port_));
        }
        argv.insert(argv.end(), flags.begin(), flags.end());
        env_map env = support::path_only_env();
        env["ALERT_REDIS_URL"] = redis_.url();
        env["ALERT_REDIS_PREFIX"] = PREFIX;
        for (const auto& [variable, value] : extra_env) env[variable] = value;
        child c(argv, env, dir_.path() / (name + ".out"), dir_.path() / (name + ".err"));
        if (metrics) {
            REQUIRE_MESSAGE(
                support::wait_until([&] { return support::port_accepts(metrics_port_); }, 10s),
                (std::string("alertgw did not serve /metrics: ") + c.err()));
        }
        return c;
    }

    static json notification(const std::string& key, int i, bool recipients = true) {
        json n = {{"notifType", i % 3 == 0 ? "Alert" : (i % 3 == 1 ? "Offline" : "Online")},
                  {"account", "acme"},
                  {"device", "cam" + std::to_string(i)},
                  {"name", "Camera " + std::to_string(i)},
                  {"recipients", recipients ? json::array({"ops@example.com", "guard@example.com"})
                                            : json::array()},
                  {"eventTs", 1764460801.0 + i},
                  {"publishTs", 1764460802.0 + i},
                  {"alertDelay", 1.0},
                  {"dedupKey", key}};
        if (i % 3 == 0) {
            n["region"] = "gate";
            n["level"] = "high";
        }
        return n;
    }

    /// XADDs `count` notifications keyed PFX-<i>; returns their keys and JSON by key.
    std::map<std::string, std::string> add(const std::string& pfx, int count,
                                           bool recipients = true) {
        std::map<std::string, std::string> out;
        for (int i = 0; i < count; ++i) {
            const std::string key = pfx + "-" + std::to_string(i);
            const std::string n = notification(key, i, recipients).dump();
            redis_.command({"XADD", PREFIX + "outbox", "*", "key", key, "n", n});
            out[key] = n;
        }
        return out;
    }
    void add_raw(const std::string& key, const std::string& n) {
        redis_.command({"XADD", PREFIX + "outbox", "*", "key", key, "n", n});
    }

    /// The webhook's answered requests (status 200 only unless `all`).
    std::vector<json> hooks(bool all = false) const {
        std::vector<json> out;
        const fs::path p = dir_.path() / "hook.jsonl";
        if (!fs::exists(p)) return out;
        for (const std::string& l : lines_of(support::read_file(p))) {
            json j = json::parse(l);
            if (all || j["status"] == 200) out.push_back(j);
        }
        return out;
    }
    std::multiset<std::string> hook_keys() const {
        std::multiset<std::string> keys;
        for (const json& j : hooks()) keys.insert(j["key"].get<std::string>());
        return keys;
    }

    std::vector<mail> mails() const {
        std::vector<mail> out;
        for (const auto& f : fs::directory_iterator(dir_.path() / "mail")) {
            if (f.path().extension() != ".eml") continue;
            mail m;
            std::string text = support::read_file(f.path());
            const auto split = text.find("\r\n\r\n");
            m.body = split == std::string::npos ? "" : text.substr(split + 4);
            for (std::string l : lines_of(text.substr(0, split))) {
                if (!l.empty() && l.back() == '\r') l.pop_back();
                const auto colon = l.find(": ");
                if (colon == std::string::npos) continue;
                const std::string name = l.substr(0, colon), value = l.substr(colon + 2);
                if (name == "X-Envelope-To") {
                    m.envelope_to.push_back(value);
                } else {
                    m.headers[name] = value;
                }
            }
            out.push_back(m);
        }
        return out;
    }
    std::multiset<std::string> mail_keys() const {
        std::multiset<std::string> keys;
        for (const mail& m : mails()) keys.insert(m.headers.at("X-Alert-Dedup-Key"));
        return keys;
    }

    /// How many progress hashes (<prefix>gw:<id>) Redis holds.
    long long progress_count() const {
        return std::stoll(
            redis_.command({"EVAL", "return #redis.call('KEYS', ARGV[1])", "0", PREFIX + "gw:*"}));
    }
    std::string pending_count() const {
        const std::string s = redis_.command({"XPENDING", PREFIX + "outbox", "alertgw"});
        return s.substr(0, s.find('\n'));
    }
    std::vector<std::map<std::string, std::string>> dead_letters() const {
        std::vector<std::map<std::string, std::string>> out;
        // XRANGE's text is "id\nfield\nvalue…" per entry, flattened: read field/value pairs.
        const std::string ids = redis_.command({"XRANGE", PREFIX + "deadletter", "-", "+"});
        const auto l = lines_of(ids);
        std::map<std::string, std::string> cur;
        for (std::size_t i = 0; i < l.size();) {
            if (l[i].find('-') != std::string::npos &&
                l[i].find_first_not_of("0123456789-") == std::string::npos &&
                (cur.empty() || cur.count("n"))) {
                if (!cur.empty()) out.push_back(cur);
                cur = {{"id", l[i]}};
                ++i;
                continue;
            }
            if (i + 1 < l.size()) cur[l[i]] = l[i + 1];
            i += 2;
        }
        if (!cur.empty()) out.push_back(cur);
        return out;
    }

    std::string metrics() const {
        const auto r = support::http_get(metrics_port_, "/metrics");
        REQUIRE(r.status == 200);
        return r.body;
    }

    std::string metrics_port_text() const { return std::to_string(metrics_port_); }
    redis_server& redis() { return redis_; }
    const fs::path& dir() const { return dir_.path(); }

private:
    redis_server redis_;
    support::temp_dir dir_;
    int smtp_port_ = 0, hook_port_ = 0, metrics_port_ = 0;
    child smtp_, hook_;
};

/// Whether something listens on ADDRESS:port (127.0.0.2 is loopback too, but not 127.0.0.1).
inline bool accepts_on(const char* address, int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in where{};
    where.sin_family = AF_INET;
    where.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, address, &where.sin_addr);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&where), sizeof where) == 0;
    ::close(fd);
    return ok;
}

/// A self-signed certificate for 127.0.0.1 (and its key) in `dir`, made by openssl now.
inline std::pair<fs::path, fs::path> self_signed(const fs::path& dir) {
    const fs::path cert = dir / "smtp-cert.pem", key = dir / "smtp-key.pem";
    const auto made =
        support::run_command({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                              key.string(), "-out", cert.string(), "-days", "1", "-subj",
                              "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"},
                             "", support::path_only_env(), "/tmp");
    REQUIRE_MESSAGE(made.exit_code == 0, made.err);
    return {cert, key};
}

inline void write_text(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

inline bool exited_zero(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

inline std::set<std::string> keys_of(const std::map<std::string, std::string>& m) {
    std::set<std::string> s;
    for (const auto& [k, v] : m) s.insert(k);
    return s;
}
inline std::set<std::string> distinct(const std::multiset<std::string>& m) {
    return {m.begin(), m.end()};
}

inline double metric(const std::string& text, const std::string& name_and_labels) {
    for (const std::string& l : lines_of(text)) {
        if (l.rfind(name_and_labels + " ", 0) == 0)
            return std::stod(l.substr(name_and_labels.size() + 1));
    }
    return -1;
}

inline json run_batch(const support::proxy_process& proxy, const std::string& value) {
    const support::http_reply reply = proxy.run_raw("{\"value\":" + value + "}");
    REQUIRE_MESSAGE(reply.status == 200, support::shorten(reply.body));
    json answer = json::parse(reply.body);
    REQUIRE_MESSAGE(answer.contains("notifications"), support::shorten(reply.body));
    return answer;
}

}  // namespace gwtest
