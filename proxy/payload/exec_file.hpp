// The action's program, DIR/exec, made executable without following anything out of DIR: the
// last step of building an action directory (payload/action_builder.cpp), after the unpacking
// or the compiler.
#pragma once

#include <string>

namespace actionloop {

/// The error text whenever exec cannot be run from inside `dir`.
inline constexpr const char* EXEC_NOT_INSIDE =
    "exec is not a regular file inside the action directory";

/// Resolves `dir`/exec one component at a time, each looked at without following it (symlinks
/// are followed by hand: relative ones only, 40 at most, never above `dir`); what it names must
/// be a regular file, which is then made mode 0755 through its own file descriptor. Returns
/// the error text (EXEC_NOT_INSIDE, or why the mode could not be set); empty when done, and
/// when there is no exec at all (a missing file or a dangling link: the start says so).
std::string make_exec_runnable(const std::string& dir);

}  // namespace actionloop
