// bench_report.cpp — heap usage and figure printing for the alerts benchmark.
#include "bench_report.hpp"

#include <malloc.h>

#include <cstdio>
#include <cstring>

namespace alerts::bench {

std::size_t heap_in_use() {
    const struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

void report(const std::string& what, double value, const std::string& unit, const char* op,
            double target) {
    const bool pass = std::strcmp(op, ">=") == 0 ? value >= target : value <= target;
    std::printf("  %-44s %14.1f %-10s (target %s %.0f: %s)\n", what.c_str(), value, unit.c_str(),
                op, target, pass ? "PASS" : "MISS");
}

void note(const std::string& what, double value, const std::string& unit) {
    std::printf("  %-44s %14.1f %s\n", what.c_str(), value, unit.c_str());
}

}  // namespace alerts::bench
