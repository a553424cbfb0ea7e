// actionloop::context: the activation's fields, given by the launcher as a value.
#include <actionloop/action.hpp>

#include "activation.hpp"

namespace actionloop {
namespace {

// The activation the launcher is serving on this thread, for context's default constructor.
thread_local const context* current_activation = nullptr;

const context& empty_context() {
    static const context empty{"", "", "", ""};
    return empty;
}

}  // namespace

context::context()
    : context(current_activation != nullptr ? *current_activation : empty_context()) {}

context::context(std::string activation_id, std::string action_name, std::string ns,
                 std::string api_host, time_point deadline)
    : activation_id_(std::move(activation_id)),
      action_name_(std::move(action_name)),
      namespace_(std::move(ns)),
      api_host_(std::move(api_host)),
      deadline_(deadline) {}

std::chrono::milliseconds context::time_left() const {
    using namespace std::chrono;
    if (deadline_ == time_point::max()) return hours(24 * 365);
    auto left = duration_cast<milliseconds>(deadline_ - system_clock::now());
    return left.count() > 0 ? left : milliseconds(0);
}

serving::serving(const context& ctx) : previous_(current_activation) { current_activation = &ctx; }

serving::~serving() { current_activation = previous_; }

}  // namespace actionloop
