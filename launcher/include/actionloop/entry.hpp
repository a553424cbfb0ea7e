// actionloop/entry.hpp — how the action's entry point reaches the launcher's int main().
//
// Not for actions to include: `compile` and the CMake function actionloop_add_action build the
// one source file that defines the entry point NAME through a generated file (a wrapper)
//
//     #define main actionloop_user_main      // only when NAME is main: a global main must
//     #include "the user's file"             //   return int, and the launcher owns it
//     #include <actionloop/entry.hpp>
//     ACTIONLOOP_ENTRY(NAME)
//
// Every other use of NAME (std::count, json::parse, ...) is left as written, and the other
// sources are compiled unchanged. ACTIONLOOP_ENTRY looks NAME up with the user's declarations
// in scope, picks the accepted shape at compile time (a wrong one is a static_assert naming
// the accepted ones) and defines actionloop::detail::user_entry(), which the launcher calls.
// The same look-up finds the optional lifecycle hooks on_init and on_shutdown (action.hpp):
// a stand-in `on_init(...)` loses to the user's exact `void on_init()` when there is one.
#ifndef ACTIONLOOP_ENTRY_HPP
#define ACTIONLOOP_ENTRY_HPP

#include <actionloop/action.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace actionloop::detail {

using json_function = nlohmann::json (*)(nlohmann::json&& args, const context& ctx);
using raw_function = void (*)(std::string_view value, std::string& answer, const context& ctx);

using init_hook = void (*)();
using shutdown_hook = void (*)(std::chrono::milliseconds time_left);

/// The user's entry point, adapted to one of two calls (exactly one is set), and the optional
/// lifecycle hooks `void on_init()` and `void on_shutdown(std::chrono::milliseconds)` declared
/// in the same file (null when there is none).
struct entry {
    json_function json_entry = nullptr;
    raw_function raw_entry = nullptr;
    init_hook on_init = nullptr;
    shutdown_hook on_shutdown = nullptr;
};

/// Defined by ACTIONLOOP_ENTRY in the file that defines the entry point.
entry user_entry();

/// The type of the stand-in overload ACTIONLOOP_ENTRY declares, so that looking NAME up never
/// fails: a call that resolves to it means the user has no such overload.
struct no_entry {};

/// T, made dependent on D (a static_cast in a discarded `if constexpr` branch is then not
/// checked).
template <class D, class T>
struct dependent {
    using type = T;
};
template <class D, class T>
using dependent_t = typename dependent<D, T>::type;

}  // namespace actionloop::detail

// The accepted shapes, for the messages.
#define ACTIONLOOP_ENTRY_SHAPES(NAME)                                                   \
    "the entry point '" NAME "' must be one of\n"                                       \
    "  nlohmann::json " NAME "(nlohmann::json args)\n"                                  \
    "  nlohmann::json " NAME "(const nlohmann::json& args)\n"                           \
    "  nlohmann::json " NAME "(nlohmann::json args, const actionloop::context& ctx)\n"  \
    "  nlohmann::json " NAME "(const nlohmann::json& args, const actionloop::context& " \
    "ctx)\n"                                                                            \
    "  void " NAME "(std::string_view value, std::string& answer)\n"                    \
    "  void " NAME "(std::string_view value, std::string& answer, const "               \
    "actionloop::context& ctx)\n"                                                       \
    "(the return type exactly nlohmann::json, or void for the raw entry point)"

// NAME is the (renamed) function; #NAME is the name the user wrote (a macro argument is
// stringized before it is expanded, so ACTIONLOOP_ENTRY(main) says "main").
#define ACTIONLOOP_ENTRY(NAME)                                                                    \
    namespace actionloop_entry_stand_in {                                                         \
    ::actionloop::detail::no_entry NAME(...);                                                     \
    ::actionloop::detail::no_entry on_init(...);                                                  \
    ::actionloop::detail::no_entry on_shutdown(...);                                              \
    }                                                                                             \
    namespace {                                                                                   \
    namespace actionloop_entry_glue {                                                             \
    using namespace ::actionloop_entry_stand_in;                                                  \
    using ::actionloop::context;                                                                  \
    using ::actionloop::detail::dependent_t;                                                      \
    using ::nlohmann::json;                                                                       \
    /* Whether NAME has an overload of exactly the function type F. */                            \
    template <class F, class = void>                                                              \
    struct has : std::false_type {};                                                              \
    template <class F>                                                                            \
    struct has<F, std::void_t<decltype(static_cast<F*>(&(NAME)))>> : std::true_type {};           \
    /* The lifecycle hooks: a global on_init / on_shutdown of exactly this type (the stand-ins */ \
    /* above only make the names always found). */                                                \
    template <class F, class = void>                                                              \
    struct has_on_init : std::false_type {};                                                      \
    template <class F>                                                                            \
    struct has_on_init<F, std::void_t<decltype(static_cast<F*>(&on_init))>> : std::true_type {};  \
    template <class F, class = void>                                                              \
    struct has_on_shutdown : std::false_type {};                                                  \
    template <class F>                                                                            \
    struct has_on_shutdown<F, std::void_t<decltype(static_cast<F*>(&on_shutdown))>>               \
        : std::true_type {};                                                                      \
    /* Whether NAME can be called with A... (other than by the stand-in). */                      \
    template <class Void, class... A>                                                             \
    struct callable : std::false_type {};                                                         \
    template <class... A>                                                                         \
    struct callable<std::enable_if_t<!std::is_same_v<decltype((NAME)(std::declval<A>()...)),      \
                                                     ::actionloop::detail::no_entry>>,            \
                    A...> : std::true_type {};                                                    \
    constexpr bool raw_ctx = has<void(std::string_view, std::string&, const context&)>::value;    \
    constexpr bool raw = has<void(std::string_view, std::string&)>::value;                        \
    constexpr bool by_value = has<json(json)>::value;                                             \
    constexpr bool by_ref = has<json(const json&)>::value;                                        \
    constexpr bool by_value_ctx = has<json(json, const context&)>::value;                         \
    constexpr bool by_ref_ctx = has<json(const json&, const context&)>::value;                    \
    constexpr bool accepted = raw_ctx || raw || by_value || by_ref || by_value_ctx || by_ref_ctx; \
    constexpr bool declared_here =                                                                \
        accepted || callable<void, json>::value || callable<void, json, const context&>::value || \
        callable<void, std::string_view, std::string&>::value ||                                  \
        callable<void, std::string_view, std::string&, const context&>::value ||                  \
        callable<void, int, char**>::value || callable<void>::value;                              \
    static_assert(                                                                                \
        declared_here,                                                                            \
        "no function '" #NAME                                                                     \
        "' of an accepted signature is declared in this file; " ACTIONLOOP_ENTRY_SHAPES(#NAME));  \
    static_assert(accepted || !declared_here, ACTIONLOOP_ENTRY_SHAPES(#NAME));                    \
    template <class D>                                                                            \
    ::actionloop::detail::entry make() {                                                          \
        ::actionloop::detail::entry e;                                                            \
        if constexpr (raw_ctx) {                                                                  \
            e.raw_entry = static_cast<                                                            \
                dependent_t<D, void (*)(std::string_view, std::string&, const context&)>>(        \
                &(NAME));                                                                         \
        } else if constexpr (raw) {                                                               \
            e.raw_entry = [](std::string_view value, std::string& answer, const context&) {       \
                static_cast<dependent_t<D, void (*)(std::string_view, std::string&)>> (&(NAME))(  \
                    value, answer);                                                               \
            };                                                                                    \
        } else if constexpr (by_value) {                                                          \
            e.json_entry = [](json&& args, const context&) {                                      \
                return static_cast<dependent_t<D, json (*)(json)>>(&(NAME))(std::move(args));     \
            };                                                                                    \
        } else if constexpr (by_ref) {                                                            \
            e.json_entry = [](json&& args, const context&) {                                      \
                return static_cast<dependent_t<D, json (*)(const json&)>>(&(NAME))(args);         \
            };                                                                                    \
        } else if constexpr (by_value_ctx) {                                                      \
            e.json_entry = [](json&& args, const context& ctx) {                                  \
                return static_cast<dependent_t<D, json (*)(json, const context&)>>(&(NAME))(      \
                    std::move(args), ctx);                                                        \
            };                                                                                    \
        } else if constexpr (by_ref_ctx) {                                                        \
            e.json_entry = [](json&& args, const context& ctx) {                                  \
                return static_cast<dependent_t<D, json (*)(const json&, const context&)>>(        \
                    &(NAME))(args, ctx);                                                          \
            };                                                                                    \
        }                                                                                         \
        if constexpr (has_on_init<dependent_t<D, void()>>::value) {                               \
            e.on_init = static_cast<dependent_t<D, void (*)()>>(&on_init);                        \
        }                                                                                         \
        if constexpr (has_on_shutdown<dependent_t<D, void(std::chrono::milliseconds)>>::value) {  \
            e.on_shutdown =                                                                       \
                static_cast<dependent_t<D, void (*)(std::chrono::milliseconds)>>(&on_shutdown);   \
        }                                                                                         \
        return e;                                                                                 \
    }                                                                                             \
    } /* namespace actionloop_entry_glue */                                                       \
    } /* namespace */                                                                             \
    ::actionloop::detail::entry actionloop::detail::user_entry() {                                \
        return actionloop_entry_glue::make<void>();                                               \
    }

#endif  // ACTIONLOOP_ENTRY_HPP
