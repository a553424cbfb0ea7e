// The launcher's int main(): runs the activation loop on the user's entry point.
//
// `compile` and actionloop_add_action compile the file that defines the entry point through a
// wrapper ending in ACTIONLOOP_ENTRY(NAME) (actionloop/entry.hpp), which checks its signature
// at compile time and defines actionloop::detail::user_entry(): the entry point adapted to one
// of the two calls below. Without it the action does not link.
#include <actionloop/entry.hpp>

#include "loop.hpp"

int main() {
    const actionloop::detail::entry entry = actionloop::detail::user_entry();
    actionloop::lifecycle hooks;
    if (entry.on_init != nullptr) hooks.on_init = entry.on_init;
    if (entry.on_shutdown != nullptr) hooks.on_shutdown = entry.on_shutdown;
    if (entry.raw_entry != nullptr) return actionloop::run_raw_loop(entry.raw_entry, hooks);
    return actionloop::run_loop(entry.json_entry, hooks);
}
