// extract_archive into a fresh, empty action dir inside a sandbox folder that also holds a
// bait file. Invariants: only extract_error escapes; after the call (success or not) the
// sandbox holds exactly the action dir and the untouched bait (same content, one link), and
// every symlink written resolves inside the action dir; the process's working dir (itself a
// scratch folder) stays empty.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

#include "fuzz_check.hpp"
#include "payload/extractor.hpp"

namespace {

namespace fs = std::filesystem;
using namespace actionloop;

const char* const BAIT = "bait.txt";
const char* const BAIT_TEXT = "bait: must never change\n";

fs::path scratch_root() {
    static const fs::path root = [] {
        const fs::path base =
            fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
        fs::path made = base / ("actionloop-fuzz-extract-" + std::to_string(::getpid()));
        fs::remove_all(made);
        fs::create_directories(made / "cwd");
        return made;
    }();
    return root;
}

std::string read_all(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

bool inside(const fs::path& root, const fs::path& path) {
    const std::string r = root.string() + "/";
    const std::string p = path.string();
    return p == root.string() || p.rfind(r, 0) == 0;
}

void check_sandbox(const fs::path& sandbox, const fs::path& dest) {
    size_t entries = 0;
    for (const auto& entry : fs::directory_iterator(sandbox)) {
        ++entries;
        const std::string name = entry.path().filename().string();
        FUZZ_CHECK(name == "dest" || name == BAIT);
    }
    FUZZ_CHECK(entries == 2);
    FUZZ_CHECK(read_all(sandbox / BAIT) == BAIT_TEXT);
    FUZZ_CHECK(fs::hard_link_count(sandbox / BAIT) == 1);
    FUZZ_CHECK(fs::is_empty(scratch_root() / "cwd"));
    const fs::path root = fs::canonical(dest);
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dest, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
        FUZZ_CHECK(!ec);
        if (!it->is_symlink()) continue;
        // Where the kernel would land: resolve as far as it exists, lexically beyond.
        const fs::path target = fs::weakly_canonical(it->path(), ec);
        if (ec) continue;  // a loop or a too-long chain: opening it fails, nothing escapes
        FUZZ_CHECK(inside(root, target));
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    ::setenv("OW_MAX_EXTRACT_BYTES", "4194304", 1);  // keep zip bombs cheap
    fs::current_path(scratch_root() / "cwd");        // relative writes would land here
    std::atexit([] {
        std::error_code ec;
        fs::remove_all(scratch_root(), ec);
    });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view archive(reinterpret_cast<const char*>(data), size);
    static unsigned long long run = 0;
    const fs::path sandbox = scratch_root() / ("s" + std::to_string(++run));
    const fs::path dest = sandbox / "dest";
    fs::create_directories(dest);
    std::ofstream(sandbox / BAIT, std::ios::binary) << BAIT_TEXT;
    try {
        extract_archive(archive, dest);
    } catch (const extract_error& e) {
        FUZZ_CHECK(std::string_view(e.what()).size() > 0);
    }
    check_sandbox(sandbox, dest);
    std::error_code ec;
    fs::remove_all(sandbox, ec);
    return 0;
}
