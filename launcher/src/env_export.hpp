// env_export: the request's string members as __OW_<KEY> variables of the process, as
// OpenWhisk's other runtimes export them for code that reads the environment, without
// setenv(3)'s growth.
//
// glibc's setenv never frees a string it made: a caller of getenv may still hold the old
// one, so it keeps every distinct "NAME=value" it was ever given (in a search tree it
// consults on each call). A new activation id, transaction id and deadline per activation
// grew an action by about 250 bytes per activation (measured: 29 MB of RSS after 100,000
// activations, 104 MB after 400,000), enough to reach a 256 MB memory limit in a warm
// container. Here each variable owns two buffers: a changed value is written into the one
// not in the environment, which then goes in with putenv(3), a single pointer swap for a
// thread reading the environment meanwhile. A value that did not change (the namespace,
// the action's name, the API host) costs a look through the environment's pointers and no
// write.
//
// Bounded (the request's keys come from the platform in classic mode, but in single-entrypoint
// mode from any client, and each variable lives as long as the process): upstream's names
// (api_key, namespace, action_name, action_version, activation_id, transaction_id, deadline,
// api_host) are always exported; any other only when it is 1 to 64 letters, digits and '_' and
// fewer than 16 others were exported before; a value is at most 4096 bytes (a longer one is
// not exported, or empties a variable exported before).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace actionloop {

class env_export {
public:
    env_export() = default;
    env_export(const env_export&) = delete;
    env_export& operator=(const env_export&) = delete;

    /// Bounds of the exports (see the top of this file).
    static constexpr size_t MAX_OTHER_NAMES = 16;
    static constexpr size_t MAX_NAME_BYTES = 64;
    static constexpr size_t MAX_VALUE_BYTES = 4096;

    /// __OW_<KEY, upper-cased> = `value` from now on (also after the action unset or changed
    /// it), within the bounds above: false when `value` was not exported (the variable then
    /// keeps no value of an earlier activation: it is "" or was never set). The buffers stay
    /// in the environment: an env_export must outlive every getenv of its variables, which is
    /// why the launcher's one is never destroyed (env_export::process).
    bool set(std::string_view key, std::string_view value);

    /// `name` = `value` from now on, the name as given (no prefix): a variable of the platform's
    /// own that changes per activation, Lambda's _X_AMZN_TRACE_ID. Not bounded by the names
    /// above (the launcher names these, not the request), only by MAX_VALUE_BYTES: false when
    /// `value` is longer, and the variable is then unset. Same buffers, same swap.
    bool set_named(std::string_view name, std::string_view value);
    /// Takes `name` out of the environment (unsetenv(3): the buffers stay ours), also when
    /// the action set it itself.
    void unset_named(std::string_view name);

    /// The launcher's own, for the whole life of the process.
    static env_export& process();

private:
    struct buffer {
        std::unique_ptr<char[]> text;  // "NAME=value\0"
        size_t capacity = 0;
    };
    struct variable {
        std::string key;   // as in the request
        std::string name;  // __OW_ + the key upper-cased
        buffer buffers[2];
        int current = -1;  // the buffer in the environment; -1 before the first set
    };

    static variable* find(std::vector<variable>& variables, std::string_view key);
    variable& add(std::string_view key);
    bool admits(std::string_view key);
    void write(variable& v, std::string_view value);

    std::vector<variable> variables_;  // a handful: a linear search is the fastest
    std::vector<variable> named_;      // set_named's: key and name are the name
    size_t others_ = 0;                // names exported that are not upstream's
};

}  // namespace actionloop
