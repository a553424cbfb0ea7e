// The action's command line: exec directly, or through a Lambda zip's bundled loader.
#include "engine/action_command.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace actionloop {

std::optional<bundled_loader> bundled_loader_from(
    const std::function<const char*(const char*)>& lookup) {
    const char* loader = lookup("ACTIONLOOP_LOADER");
    if (loader == nullptr || *loader == '\0') return std::nullopt;
    const char* library_path = lookup("ACTIONLOOP_LIBRARY_PATH");
    return bundled_loader{loader, library_path == nullptr ? "" : library_path};
}

const std::optional<bundled_loader>& bundled_loader_of_process() {
    static const std::optional<bundled_loader> FROM_ENVIRONMENT =
        bundled_loader_from([](const char* name) { return std::getenv(name); });
    return FROM_ENVIRONMENT;
}

std::vector<std::string> action_argv(const std::string& exec,
                                     const std::optional<bundled_loader>& loader,
                                     bool exec_is_elf) {
    if (!loader || !exec_is_elf) return {exec};
    std::vector<std::string> argv{loader->path};
    if (!loader->library_path.empty()) {
        argv.emplace_back("--library-path");
        argv.push_back(loader->library_path);
    }
    argv.push_back(exec);
    return argv;
}

bool is_elf_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char magic[4] = {};
    const ssize_t got = ::read(fd, magic, sizeof magic);
    ::close(fd);
    return got == static_cast<ssize_t>(sizeof magic) && std::memcmp(magic,
                                                                    "\x7f"
                                                                    "ELF",
                                                                    4) == 0;
}

}  // namespace actionloop
