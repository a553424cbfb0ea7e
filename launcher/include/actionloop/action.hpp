// actionloop/action.hpp — the whole public contract for C++ OpenWhisk actions.
//
// Write one function and nothing else:
//
//     #include <actionloop/action.hpp>   // optional: brings <nlohmann/json.hpp> and the context
//
//     nlohmann::json main(nlohmann::json args) {          // or (const nlohmann::json& args)
//         return {{"greeting", "Hello, " + args.value("name", std::string("stranger"))}};
//     }
//
// `compile` (and the CMake helper add_action) renames your entry point to
// `actionloop_main` with a macro, because a global `main` must return int; the launcher
// library owns the real `int main()` and runs the activation loop:
//   * one JSON request per line on stdin, one compact JSON answer per line on fd 3;
//   * `args` is the request's `value` (an object, an array, or {} when absent);
//   * every other string field of the request is exported as __OW_<FIELD> before the call;
//   * an exception becomes the answer {"error": what()} (also printed on stderr), and the
//     process keeps serving; globals live as long as the warm process.
//
// Opt-in raw entry point, for an action whose cost is parsing a big `value` (a batch of
// events): define this overload instead, and parse with whatever you like (no DOM is built):
//
//     void main(std::string_view value, std::string& answer);
//
//   * `value` is the request's `value` as raw JSON text, unvalidated ("{}" when absent or not
//     an object or array); it points into the request line and is valid during the call;
//   * append one JSON object or array to `answer` (empty on entry; its capacity is reused);
//     newlines in it become spaces;
//   * the context is exported and exceptions are answered exactly as above.
// When both are defined, the raw one is used.
#ifndef ACTIONLOOP_ACTION_HPP
#define ACTIONLOOP_ACTION_HPP

#include <chrono>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

// nlohmann::json's members are compiled once, into the launcher library, so an action
// compiles in about a second instead of instantiating the whole library again. So are its
// literal operators "..."_json and "..."_json_pointer: the <nlohmann/json.hpp> that `compile`
// (and the launcher's CMake target) puts first on the include path only declares them (see
// cmake/json_literals.cmake), as an inline definition instantiated the whole parser per /init.
#ifndef ACTIONLOOP_INSTANTIATE_JSON
extern template class nlohmann::basic_json<>;
#endif

namespace actionloop {

/// The activation being served, read from the __OW_* variables the launcher exports.
/// Cheap to construct; construct it inside your function (values change per activation).
class context {
public:
    context();

    /// __OW_ACTIVATION_ID, e.g. "2a1c…"; empty outside OpenWhisk.
    const std::string& activation_id() const { return activation_id_; }
    /// __OW_ACTION_NAME, e.g. "/guest/alerts/monitor".
    const std::string& action_name() const { return action_name_; }
    /// __OW_NAMESPACE of the activation.
    const std::string& ns() const { return namespace_; }
    /// __OW_API_HOST, for calling back into OpenWhisk.
    const std::string& api_host() const { return api_host_; }
    /// The activation's deadline (epoch milliseconds from __OW_DEADLINE), or
    /// time_point::max() when the platform did not give one.
    std::chrono::system_clock::time_point deadline() const { return deadline_; }
    /// Time left before the deadline (zero once it has passed; hours when there is none).
    std::chrono::milliseconds time_left() const;

private:
    std::string activation_id_;
    std::string action_name_;
    std::string namespace_;
    std::string api_host_;
    std::chrono::system_clock::time_point deadline_;
};

}  // namespace actionloop
#endif  // ACTIONLOOP_ACTION_HPP
