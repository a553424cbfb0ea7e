#include "test_util.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <doctest/doctest.h>

#include "archive_builder.hpp"

namespace support {

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return {};
    }
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, const std::string& content, fs::perms mode) {
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        if (!out) {
            throw std::runtime_error("cannot write " + path.string());
        }
        out << content;
    }
    fs::permissions(path, mode);
}

fs::path fixture_path(const std::string& name) { return fs::path(ACTIONLOOP_FIXTURES) / name; }

fs::path compiler_script() {
    const fs::path staged = fs::path(ACTIONLOOP_BINARY_DIR) / "stage" / "bin" / "compile";
    return fs::exists(staged) ? staged : fs::path(ACTIONLOOP_SOURCE_DIR) / "compile";
}

std::string built_zip_code(const std::string& relative) {
    const fs::path zip = fs::path(ACTIONLOOP_BINARY_DIR) / relative;
    const std::string bytes = fs::exists(zip) ? read_file(zip) : std::string();
    REQUIRE_MESSAGE(!bytes.empty(), "missing " << zip << " (the build makes it)");
    return base64_encode(bytes);
}

std::string fixture_text(const std::string& name) {
    const fs::path path = fixture_path(name);
    if (!fs::exists(path)) {
        throw std::runtime_error("missing fixture " + path.string());
    }
    return read_file(path);
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    if (from.empty()) {
        return text;
    }
    for (std::size_t pos = text.find(from); pos != std::string::npos;
         pos = text.find(from, pos + to.size())) {
        text.replace(pos, from.size(), to);
    }
    return text;
}

std::string trim(const std::string& text) {
    const char* blanks = " \t\r\n\f\v";
    const std::size_t first = text.find_first_not_of(blanks);
    if (first == std::string::npos) {
        return {};
    }
    const std::size_t last = text.find_last_not_of(blanks);
    return text.substr(first, last - first + 1);
}

std::size_t count_occurrences(const std::string& text, const std::string& needle) {
    std::size_t count = 0;
    if (needle.empty()) {
        return count;
    }
    for (std::size_t pos = text.find(needle); pos != std::string::npos;
         pos = text.find(needle, pos + needle.size())) {
        ++count;
    }
    return count;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

bool contains(const std::string& text, const std::string& needle) {
    return text.find(needle) != std::string::npos;
}

temp_dir::temp_dir(const std::string& prefix) {
    std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) == nullptr) {
        throw std::runtime_error("mkdtemp failed for " + pattern);
    }
    path_ = fs::path(buffer.data());
}

temp_dir::~temp_dir() {
    std::error_code ignored;
    // Actions may leave read-only directories behind: make them writable before removing.
    for (auto it = fs::recursive_directory_iterator(path_, ignored);
         it != fs::recursive_directory_iterator(); it.increment(ignored)) {
        if (it->is_directory(ignored) && !it->is_symlink(ignored)) {
            fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ignored);
        }
    }
    fs::remove_all(path_, ignored);
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                std::chrono::milliseconds step) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return done();
        }
        std::this_thread::sleep_for(step);
    }
    return true;
}

void skip_test(const std::string& why) { std::cout << SKIP_MARKER << " " << why << std::endl; }

long long epoch_millis() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace support
