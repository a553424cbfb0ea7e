// INFO memory's text (actions/alerts/redis/redis_memory.cpp), as a server (or anything that
// answers on its port) may send it.
// Invariants:
//  - parse_info_memory either refuses or gives the figures of lines `used_memory:` and
//    `maxmemory:` of the text;
//  - memory_warning is empty without a limit or below the share, and otherwise one line (no
//    CR or LF) naming the label;
//  - memory_share is 0 without a limit, else used / maxmemory.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "redis/redis_memory.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto m = alerts::parse_info_memory(text);
    if (!m) return 0;
    FUZZ_CHECK(text.find("used_memory:") != std::string_view::npos);
    FUZZ_CHECK(text.find("maxmemory:") != std::string_view::npos);
    const double share = alerts::memory_share(*m);
    FUZZ_CHECK(m->maxmemory != 0 || share == 0);
    const std::string warning = alerts::memory_warning(*m, "label");
    FUZZ_CHECK(warning.empty() == (m->maxmemory == 0 || share < alerts::MEMORY_WARNING_SHARE));
    FUZZ_CHECK(warning.find_first_of("\r\n") == std::string::npos);
    FUZZ_CHECK(warning.empty() || warning.rfind("redis label: used_memory ", 0) == 0);
    return 0;
}
