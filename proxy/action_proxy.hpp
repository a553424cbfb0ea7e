// The proxy's state: the settings, the action environment, the current executor and the
// activation engine that serves /run on it (engine/engine.hpp). The protocol steps live in
// payload/init_handler.cpp and engine/run_handler.cpp; both throw http_error for every failure, and
// server.cpp is the one place that turns those into HTTP answers.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>

#include "engine.hpp"
#include "env_map.hpp"
#include "executor.hpp"
#include "settings.hpp"

namespace actionloop {

struct http_answer {
    int status = 200;
    std::string body;  // application/json
};

class action_proxy {
public:
    action_proxy(settings config, char** environ_entries);

    /// POST /init (docs/protocol.md, /init).
    http_answer init(const std::string& body);
    /// POST /run (the /run table of docs/protocol.md).
    http_answer run(const std::string& body);

    /// `proxy -compile MAIN`: builds `payload` like /init would and returns a zip of the
    /// resulting bin directory. Throws std::runtime_error with the error text.
    std::string compile_to_zip(const std::string& payload, const std::string& main,
                               const std::string& env_json);

    const settings& config() const { return settings_; }

    /// For /metrics: action processes started again after they died (restart_action()).
    std::uint64_t action_restarts() const { return restarts_.load(std::memory_order_relaxed); }
    /// For /metrics: /run activations waiting for their turn at the action. Read on the event
    /// loop, so it never waits: 0 while /init holds the action (replacing it).
    size_t queued() {
        std::shared_lock<std::shared_mutex> action(action_lock_, std::try_to_lock);
        return action.owns_lock() && engine_ ? engine_->waiting() : 0;
    }

private:
    // init_handler.cpp
    std::string next_action_dir();
    std::string build_action(const std::string& dir, const std::string& payload,
                             const std::string& main);
    void check_execution_env(const std::string& dir);
    std::unique_ptr<executor> start_action(const std::string& dir);
    [[noreturn]] void fail_init(const std::string& error, const char* generic,
                                const std::string& prefix);

    // run_handler.cpp
    void restart_action();
    void end_activation(executor::outcome outcome);
    executor::clock::time_point deadline_of(const std::string& body) const;
    http_answer answer_of(executor::outcome outcome, http_answer answer);

    settings settings_;
    env_map env_;
    std::shared_mutex action_lock_;  // /run shares it; /init (which replaces the action) owns it
    std::unique_ptr<executor> executor_;
    std::unique_ptr<activation_engine> engine_;  // every /run on executor_
    bool initialized_ = false;
    long last_dir_ = 0;
    std::atomic<std::uint64_t> restarts_{0};
};

}  // namespace actionloop
