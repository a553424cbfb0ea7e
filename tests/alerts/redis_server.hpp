// redis_server.hpp — a real redis-server for the tests: started on a unix socket in its own
// temp dir (no port to collide with), optionally with the append-only file fsynced on every
// write (what docs/alerts.md recommends), stopped (SIGKILL: a crash) and started again on the
// same dir, or paused (SIGSTOP) and resumed. Readiness is a PING answered, polled with a deadline.
#pragma once

#include <hiredis.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
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

    std::string socket() const { return (dir_ / "redis.sock").string(); }
    std::string url() const { return "unix://" + socket(); }
    bool running() const { return pid_ > 0; }

    void start() {
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
        std::filesystem::remove(socket(), ec);
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
        redisContext* c = redisConnectUnix(socket().c_str());
        if (!c || c->err) {
            if (c) redisFree(c);
            throw std::runtime_error("cannot connect to the test redis-server");
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
        if (!std::filesystem::exists(socket())) return false;
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
};

}  // namespace alerts::test
