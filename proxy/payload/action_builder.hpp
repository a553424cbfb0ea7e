// payload/: what /init receives, turned into a runnable action directory. This header is the
// folder's public face; behind it are
//   extractor.hpp  type detection and safe unpacking of zip and tar.gz, the -compile zip writer
//   compiler.hpp   running OW_COMPILER on the unpacked sources
//   exec_file.hpp  making bin/exec executable without following links out of bin
//   archive_tree.hpp  the tree an archive's entries make, and the check that links stay inside
//   env_map.hpp    the environment the action and the compiler get
//
// The action builder: ACTION_DIR/N/src (the unpacked payload) becomes ACTION_DIR/N/bin (the
// payload itself when it already runs, the compiler's output otherwise), N counting on from the
// highest existing directory, as upstream numbers them. Errors are returned as text.
#pragma once

#include <optional>
#include <string>

#include "payload/env_map.hpp"
#include "settings.hpp"

namespace actionloop {

class action_builder {
public:
    /// Creates `config.action_dir` when missing and finds the highest N in it.
    action_builder(const settings& config, const env_map& env);

    /// The next action directory, ACTION_DIR/N+1 (not created).
    std::string next_dir();

    /// Unpacks `payload` into dir/src and turns it into dir/bin: renamed as is when it is
    /// already runnable (or there is no compiler), compiled with `main` as the entry point
    /// otherwise; then dir/bin/exec, when there is one, must be a regular file inside dir/bin
    /// (payload/exec_file.hpp) and is made executable. Returns the error text, empty on success.
    std::string build(const std::string& dir, const std::string& payload, const std::string& main);

    /// With OW_EXECUTION_ENV set: dir/bin/exec.env must hold it (surrounding blanks aside).
    /// Returns the start error, nullopt when it matches or nothing is required.
    std::optional<std::string> check_execution_env(const std::string& dir) const;

private:
    const settings& settings_;
    const env_map& env_;
    long last_dir_ = 0;
};

}  // namespace actionloop
