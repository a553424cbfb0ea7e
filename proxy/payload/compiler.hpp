// Runs OW_COMPILER (docs/protocol.md, /init): `compiler MAIN SRC BIN` with the action's
// environment; any output at all is a failure and becomes the error text, as upstream.
#pragma once

#include <string>
#include <vector>

namespace actionloop {

struct compile_request {
    std::string compiler;  // path of the script
    std::string main;      // entry point name
    std::string src_dir;   // relative to the cwd, e.g. ./action/3/src
    std::string bin_dir;
    std::vector<std::string> env;  // "NAME=value"
    int timeout_ms = 300000;
};

/// Empty on success; otherwise the error text: the compiler's combined stdout and stderr,
/// "exit status N", "cannot compile" (no bin/exec), or a timeout message.
std::string run_compiler(const compile_request& request);

}  // namespace actionloop
