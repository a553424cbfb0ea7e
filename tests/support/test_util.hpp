// Small helpers shared by the integration suites: files, fixtures, temp dirs, polling.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace support {

namespace fs = std::filesystem;

/// Whole content of a file ("" when it cannot be read).
std::string read_file(const fs::path& path);

/// Writes `content` to `path` (truncating) and applies `mode`.
void write_file(const fs::path& path, const std::string& content, fs::perms mode = fs::perms(0644));

/// Absolute path of a file under tests/fixtures.
fs::path fixture_path(const std::string& name);

/// The C++ OW_COMPILER: the staged `<build>/stage/bin/compile` (install layout in the build
/// tree) when it exists, else `<source>/compile`.
fs::path compiler_script();

/// Content of a file under tests/fixtures.
std::string fixture_text(const std::string& name);

/// A zip the build made (`relative` to the build directory, e.g. "actions/monitor.zip"), as
/// /init's base64 `code`. REQUIREs that the file exists and is not empty.
std::string built_zip_code(const std::string& relative);

/// `text` with every occurrence of `from` replaced by `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to);

/// `text` without leading and trailing whitespace (like Scala's String.trim).
std::string trim(const std::string& text);

/// Number of non-overlapping occurrences of `needle` in `text`.
std::size_t count_occurrences(const std::string& text, const std::string& needle);

/// The lines of `text` without their '\n' (a last line without one counts too).
std::vector<std::string> lines_of(const std::string& text);

/// Whether `text` contains `needle`.
bool contains(const std::string& text, const std::string& needle);

/// A fresh directory under the system temp dir, removed (recursively) on destruction.
class temp_dir {
public:
    explicit temp_dir(const std::string& prefix = "actionloop-test");
    ~temp_dir();
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

/// Calls `done` every `step` until it returns true or `timeout` passes; returns its last value.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                std::chrono::milliseconds step = std::chrono::milliseconds(10));

/// Milliseconds since the Unix epoch, as OpenWhisk writes `deadline`.
long long epoch_millis();

/// Reports the running test case as skipped: prints SKIP_MARKER and `why` on stdout, which
/// CTest's SKIP_REGULAR_EXPRESSION (tests/CMakeLists.txt) turns into a "Skipped" result. The
/// caller returns right after, before checking anything.
inline constexpr const char* SKIP_MARKER = "actionloop-test-skipped:";
void skip_test(const std::string& why);

/// The bound a linear-time check must stay under in a test that guards against a quadratic
/// one coming back (which took 50 s and more): well under a second, more in a sanitized build,
/// which runs several times slower.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr double LINEAR_SECONDS = 4.0;
#else
inline constexpr double LINEAR_SECONDS = 1.0;
#endif

}  // namespace support
