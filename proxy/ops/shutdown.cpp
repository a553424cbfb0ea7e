#include "ops/shutdown.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

#include <spdlog/spdlog.h>

#include "engine/reaper.hpp"

namespace actionloop {

// enter() counts first and looks at the flag second, begin_drain() sets the flag before
// wait_idle() reads the count (all sequentially consistent): either the drain sees the
// activation, or the activation sees the drain and is refused. Never neither.
bool drain_state::enter() {
    in_flight_.fetch_add(1);
    if (!draining_.load()) return true;
    leave();
    return false;
}

void drain_state::leave() {
    if (in_flight_.fetch_sub(1) == 1 && draining_.load()) {
        std::lock_guard<std::mutex> guard(idle_mutex_);
        idle_.notify_all();
    }
}

bool drain_state::wait_idle(std::chrono::milliseconds cap) {
    std::unique_lock<std::mutex> guard(idle_mutex_);
    return idle_.wait_for(guard, cap, [this] { return in_flight_.load() == 0; });
}

namespace {

constexpr std::chrono::seconds LAST_ANSWERS{1};  // for the answers of the activations cut

// Whoever ends the process holds it: a SIGINT that stops at once is not overtaken by a drain
// that ends meanwhile (the stop's own kill ends the activations it was waiting for).
std::mutex exit_lock;

[[noreturn]] void stop_now(const sigset_t& signals, int sig) {
    exit_lock.lock();  // never released: the process ends here
    kill_all_children();
    spdlog::default_logger()->flush();
    ::signal(sig, SIG_DFL);
    ::pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
}

void drain_then_exit(drain_state& state, std::chrono::milliseconds cap, const before_stop& hook) {
    spdlog::info("SIGTERM: draining {} activation(s) in flight", state.in_flight());
    const auto started = std::chrono::steady_clock::now();
    const bool idle = state.wait_idle(cap);
    // The action's on_shutdown, outside the lock: a second SIGTERM still stops at once.
    const auto left = cap - std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - started);
    if (idle && hook && left.count() > 0) hook(left);
    exit_lock.lock();  // never released: the process ends here
    if (!idle) {
        spdlog::warn("SIGTERM: {} activation(s) still in flight after {} ms; stopping them",
                     state.in_flight(), cap.count());
    }
    kill_all_children();
    // The activations cut by the kill get their answers ("command exited") before the exit.
    if (!idle) state.wait_idle(LAST_ANSWERS);
    spdlog::default_logger()->flush();
    ::_exit(0);
}

}  // namespace

void handle_stop_signals(drain_state& state, std::chrono::milliseconds cap, before_stop idle) {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::thread([&state, cap, signals, idle = std::move(idle)] {
        bool draining = false;
        for (;;) {
            int sig = 0;
            if (::sigwait(&signals, &sig) != 0) continue;
            if (sig == SIGTERM && !draining) {
                draining = true;
                state.begin_drain();
                std::thread([&state, cap, idle] { drain_then_exit(state, cap, idle); }).detach();
                continue;
            }
            stop_now(signals, sig);
        }
    }).detach();
}

}  // namespace actionloop
