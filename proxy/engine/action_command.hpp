// The command line that starts the action. Usually exec itself; in a Lambda zip
// (packaging/lambda-zip), whose bootstrap starts the proxy through the zip's own dynamic loader
// and libraries and says so in ACTIONLOOP_LOADER and ACTIONLOOP_LIBRARY_PATH, exec is started
// through the same loader: the system it runs on may have another glibc or none at all, and the
// kernel would load exec with the system's loader (its PT_INTERP, /lib64/ld-linux-…).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace actionloop {

/// The dynamic loader a Lambda zip's bootstrap started the proxy with.
struct bundled_loader {
    std::string path;          // ACTIONLOOP_LOADER: <task root>/lib/ld-linux-….so.N
    std::string library_path;  // ACTIONLOOP_LIBRARY_PATH: <task root>/lib ("": none given)
};

/// ACTIONLOOP_LOADER and ACTIONLOOP_LIBRARY_PATH as `lookup` gives them (getenv's contract:
/// null when unset); none when ACTIONLOOP_LOADER is unset or empty.
std::optional<bundled_loader> bundled_loader_from(
    const std::function<const char*(const char*)>& lookup);

/// The proxy's own environment's bundled_loader_from(), read once.
const std::optional<bundled_loader>& bundled_loader_of_process();

/// The argv that starts `exec`: {exec}, or with a loader and an ELF exec (`exec_is_elf`)
/// {loader, "--library-path", dir, exec} ("--library-path" only when a folder is given). A
/// #! script is started directly, by the system's interpreter, as without a loader.
std::vector<std::string> action_argv(const std::string& exec,
                                     const std::optional<bundled_loader>& loader, bool exec_is_elf);

/// Whether the file at `path` starts with the ELF magic (false when it cannot be read).
bool is_elf_file(const std::string& path);

}  // namespace actionloop
