// redis_server.hpp — a real redis-server for the tests: started on a unix socket in its own
// temp dir (no port to collide with), optionally with the append-only file fsynced on every
// write (what docs/alerts.md recommends), stopped (SIGKILL: a crash) and started again on the
// same dir, or paused (SIGSTOP) and resumed. Readiness is a PING answered, polled with a deadline.
// For replication and Sentinel (tcp()): a redis-server on a free loopback port, given extra
// arguments (--replicaof ...), or a redis-sentinel given its config file's text; each keeps its
// port across a stop and start.
#pragma once

#include <hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace alerts::test {

class redis_server {
public:
    /// Starts a process (argv) and returns its pid; ends one (SIGKILL and reap). The
    /// integration suites pass their tracked spawn, so that their clean-up of orphans spares it.
    using spawner = std::function<pid_t(const std::vector<std::string>& argv)>;
    using killer = std::function<void(pid_t)>;

    explicit redis_server(bool aof = false, spawner spawn = fork_exec, killer kill = kill_reap)
        : aof_(aof), spawn_(std::move(spawn)), kill_(std::move(kill)) {
        char tmpl[] = "/tmp/alerts-redis-XXXXXX";
        if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
        dir_ = tmpl;
        start();
    }
    ~redis_server() {
        stop();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    redis_server(const redis_server&) = delete;
    redis_server& operator=(const redis_server&) = delete;

    /// What a TCP server runs: a redis-server with `extra` arguments, or (sentinel_config not
    /// empty) a redis-sentinel with that config (its `port`, `dir` and `logfile` lines added).
    struct tcp_options {
        std::vector<std::string> extra;
        std::string sentinel_config;
        int port = 0;  // 0: a free one
        /// AUTH's arguments ({user, password} or {password}), sent before every command of the
        /// test's own (PING included): a server whose default user needs a password.
        std::vector<std::string> auth;
    };
    /// A server on 127.0.0.1 (started).
    static std::unique_ptr<redis_server> tcp(tcp_options o, spawner spawn = fork_exec,
                                             killer kill = kill_reap) {
        return std::unique_ptr<redis_server>(
            new redis_server(std::move(o), std::move(spawn), std::move(kill)));
    }

    std::string socket() const { return (dir_ / "redis.sock").string(); }
    std::string url() const {
        return port_ ? "redis://127.0.0.1:" + std::to_string(port_) : "unix://" + socket();
    }
    int port() const { return port_; }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    const std::filesystem::path& dir() const { return dir_; }
    bool running() const { return pid_ > 0; }
    pid_t pid() const { return pid_; }

    /// A free TCP port on 127.0.0.1 (the kernel's pick, released at once).
    static int free_port() {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
            if (fd >= 0) ::close(fd);
            throw std::runtime_error("cannot pick a free port");
        }
        ::close(fd);
        return ntohs(a.sin_port);
    }

    void start() {
        if (port_) return start_tcp();
        const std::vector<std::string> args = {"redis-server",
                                               "--port",
                                               "0",
                                               "--unixsocket",
                                               socket(),
                                               "--dir",
                                               dir_.string(),
                                               "--save",
                                               "",
                                               "--appendonly",
                                               aof_ ? "yes" : "no",
                                               "--appendfsync",
                                               "always",
                                               "--maxmemory-policy",
                                               "noeviction",
                                               "--logfile",
                                               (dir_ / "redis.log").string()};
        pid_ = spawn_(args);
        wait_ready();
    }

    /// Waits until the server answers PING (20 s at most).
    void wait_ready() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!ping()) {
            if (::kill(pid_, 0) != 0) {
                pid_ = -1;
                throw std::runtime_error("redis-server exited at start (is it installed?)");
            }
            if (std::chrono::steady_clock::now() > deadline) {
                throw std::runtime_error("redis-server did not answer PING within 20 s");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }

    /// Kills the server as a crash would (SIGKILL) and reaps it.
    void stop() {
        if (pid_ <= 0) return;
        kill_(pid_);
        pid_ = -1;
        std::error_code ec;
        if (!port_) std::filesystem::remove(socket(), ec);
    }

    /// Freezes the server (SIGSTOP), as a Redis stuck on a slow disk or a swapped-out machine
    /// would be: the kernel still accepts connections and takes commands, nothing answers.
    void pause() const { ::kill(pid_, SIGSTOP); }
    /// Lets a paused server go on (SIGCONT).
    void resume() const { ::kill(pid_, SIGCONT); }

    /// Pauses the server for its lifetime: resumed however the test leaves the scope.
    class paused {
    public:
        explicit paused(const redis_server& s) : s_(s) { s_.pause(); }
        ~paused() { s_.resume(); }
        paused(const paused&) = delete;
        paused& operator=(const paused&) = delete;

    private:
        const redis_server& s_;
    };

    /// One command's reply as text (strings, integers; arrays joined by '\n'); "" for nil.
    std::string command(const std::vector<std::string>& args) const {
        const timeval tv{2, 0};
        redisContext* c = port_ ? redisConnectWithTimeout("127.0.0.1", port_, tv)
                                : redisConnectUnix(socket().c_str());
        if (c && !c->err) redisSetTimeout(c, tv);
        if (!c || c->err) {
            if (c) redisFree(c);
            throw std::runtime_error("cannot connect to the test redis-server");
        }
        if (!auth_.empty()) {
            std::vector<std::string> auth = {"AUTH"};
            auth.insert(auth.end(), auth_.begin(), auth_.end());
            std::vector<const char*> argv;
            std::vector<std::size_t> lens;
            for (const std::string& a : auth) {
                argv.push_back(a.c_str());
                lens.push_back(a.size());
            }
            if (auto* r = static_cast<redisReply*>(
                    redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()))) {
                freeReplyObject(r);
            }
        }
        std::vector<const char*> argv;
        std::vector<std::size_t> lens;
        for (const std::string& a : args) {
            argv.push_back(a.c_str());
            lens.push_back(a.size());
        }
        auto* r = static_cast<redisReply*>(
            redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()));
        std::string out = r ? text_of(r) : "";
        if (r) freeReplyObject(r);
        redisFree(c);
        return out;
    }

    static pid_t fork_exec(const std::vector<std::string>& args) {
        const pid_t pid = ::fork();
        if (pid < 0) throw std::runtime_error("fork failed");
        if (pid == 0) {
            std::vector<char*> argv;
            for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            ::execvp(argv[0], argv.data());
            ::_exit(127);
        }
        return pid;
    }
    static void kill_reap(pid_t pid) {
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
    }

private:
    redis_server(tcp_options o, spawner spawn, killer kill)
        : aof_(false),
          spawn_(std::move(spawn)),
          kill_(std::move(kill)),
          port_(o.port ? o.port : free_port()),
          extra_(std::move(o.extra)),
          sentinel_config_(std::move(o.sentinel_config)),
          auth_(std::move(o.auth)) {
        char tmpl[] = "/tmp/alerts-redis-XXXXXX";
        if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
        dir_ = tmpl;
        if (!sentinel_config_.empty()) {
            // Sentinel rewrites its config file: written once, kept across a restart.
            std::ofstream(dir_ / "sentinel.conf")
                << sentinel_config_ << "\nport " << port_ << "\nbind 127.0.0.1\ndir "
                << dir_.string() << "\nlogfile " << (dir_ / "sentinel.log").string() << "\n";
        }
        start();
    }

    void start_tcp() {
        std::vector<std::string> args;
        if (!sentinel_config_.empty()) {
            args = {"redis-sentinel", (dir_ / "sentinel.conf").string()};
        } else {
            args = {"redis-server", "--port",    std::to_string(port_),
                    "--bind",       "127.0.0.1", "--dir",
                    dir_.string(),  "--save",    "",
                    "--appendonly", "no",        "--maxmemory-policy",
                    "noeviction",   "--logfile", (dir_ / "redis.log").string()};
            args.insert(args.end(), extra_.begin(), extra_.end());
        }
        pid_ = spawn_(args);
        wait_ready();
    }

    static std::string text_of(const redisReply* r) {
        switch (r->type) {
            case REDIS_REPLY_STRING:
            case REDIS_REPLY_STATUS:
            case REDIS_REPLY_ERROR:
                return std::string(r->str, r->len);
            case REDIS_REPLY_INTEGER:
                return std::to_string(r->integer);
            case REDIS_REPLY_ARRAY: {
                std::string out;
                for (std::size_t i = 0; i < r->elements; ++i) {
                    if (i) out += '\n';
                    out += text_of(r->element[i]);
                }
                return out;
            }
            default:
                return "";
        }
    }

    bool ping() const {
        if (!port_ && !std::filesystem::exists(socket())) return false;
        try {
            return command({"PING"}) == "PONG";
        } catch (const std::exception&) {
            return false;
        }
    }

    bool aof_;
    spawner spawn_;
    killer kill_;
    std::filesystem::path dir_;
    pid_t pid_ = -1;
    int port_ = 0;  // 0: the unix socket
    std::vector<std::string> extra_;
    std::string sentinel_config_;
    std::vector<std::string> auth_;
};

}  // namespace alerts::test
