#include "payload/exec_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

namespace actionloop {
namespace {

constexpr int MAX_SYMLINK_HOPS = 40;  // Linux MAXSYMLINKS
constexpr mode_t RUNNABLE = 0755;

class file_descriptor {
public:
    explicit file_descriptor(int fd) : fd_(fd) {}
    ~file_descriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    file_descriptor(file_descriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    file_descriptor& operator=(file_descriptor&&) = delete;
    file_descriptor(const file_descriptor&) = delete;
    file_descriptor& operator=(const file_descriptor&) = delete;
    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }

private:
    int fd_;
};

// Adds the components of `path` to `pending`, a stack whose top is the next one.
void push_path(std::vector<std::string>& pending, std::string_view path) {
    std::vector<std::string_view> parts;
    while (!path.empty()) {
        const std::size_t slash = std::min(path.find('/'), path.size());
        if (slash > 0) parts.push_back(path.substr(0, slash));
        path.remove_prefix(std::min(slash + 1, path.size()));
    }
    for (auto part = parts.rbegin(); part != parts.rend(); ++part) pending.emplace_back(*part);
}

// The target of the symlink `name` in the folder `at`; empty when it cannot be read.
std::string read_link(int at, const std::string& name) {
    std::string target(4096, '\0');
    const ssize_t size = ::readlinkat(at, name.c_str(), target.data(), target.size());
    if (size <= 0 || static_cast<std::size_t>(size) >= target.size()) return {};
    target.resize(static_cast<std::size_t>(size));
    return target;
}

// Sets the mode of the regular file `name` in the folder `at`, never through a symlink.
std::string make_runnable(int at, const std::string& name) {
    const file_descriptor file(
        ::openat(at, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!file.valid()) {
        // Unreadable (mode 0111): the mode is set by name, still without following a link.
        if (errno == EACCES && ::fchmodat(at, name.c_str(), RUNNABLE, AT_SYMLINK_NOFOLLOW) == 0) {
            return {};
        }
        return std::string("cannot make exec executable: ") + std::strerror(errno);
    }
    struct stat st {};
    if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return EXEC_NOT_INSIDE;
    if (::fchmod(file.get(), RUNNABLE) != 0) {
        return std::string("cannot make exec executable: ") + std::strerror(errno);
    }
    return {};
}

// Where the walk stands: the folders entered from the top one, and the components left.
struct walk {
    std::vector<file_descriptor> folders;
    std::vector<std::string> pending;
    int hops = 0;
};

enum class step_result { next, done, missing, refused };

// Takes one component: "..", a symlink (its target joins the pending ones), a folder to enter,
// or the final regular file.
step_result take(walk& w, std::string& error) {
    const std::string part = std::move(w.pending.back());
    w.pending.pop_back();
    if (part == ".") return step_result::next;
    if (part == "..") {
        if (w.folders.size() == 1) return step_result::refused;
        w.folders.pop_back();
        return step_result::next;
    }
    const int at = w.folders.back().get();
    struct stat st {};
    if (::fstatat(at, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return errno == ENOENT ? step_result::missing : step_result::refused;
    }
    if (S_ISLNK(st.st_mode)) {
        const std::string target = read_link(at, part);
        if (++w.hops > MAX_SYMLINK_HOPS || target.empty() || target.front() == '/') {
            return step_result::refused;
        }
        push_path(w.pending, target);
        return step_result::next;
    }
    if (S_ISDIR(st.st_mode) && !w.pending.empty()) {
        file_descriptor folder(
            ::openat(at, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!folder.valid()) return step_result::refused;
        w.folders.push_back(std::move(folder));
        return step_result::next;
    }
    if (!S_ISREG(st.st_mode) || !w.pending.empty()) return step_result::refused;
    error = make_runnable(at, part);
    return step_result::done;
}

}  // namespace

std::string make_exec_runnable(const std::string& dir) {
    walk w;
    w.folders.emplace_back(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!w.folders.back().valid()) {
        return "cannot open " + dir + ": " + std::strerror(errno);
    }
    w.pending.emplace_back("exec");
    std::string error;
    while (!w.pending.empty()) {
        switch (take(w, error)) {
            case step_result::next:
                continue;
            case step_result::done:
                return error;
            case step_result::missing:
                return {};
            case step_result::refused:
                return EXEC_NOT_INSIDE;
        }
    }
    return EXEC_NOT_INSIDE;  // it named a folder: exec -> . or exec -> sub/..
}

}  // namespace actionloop
