// bench_report.hpp — small helpers for the alerts benchmark: a stopwatch, heap usage, and
// printing one figure next to its target.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace alerts::bench {

class stopwatch {
public:
    void start() { t0_ = std::chrono::steady_clock::now(); }
    void stop() { total_ += std::chrono::steady_clock::now() - t0_; }
    double seconds() const { return std::chrono::duration<double>(total_).count(); }

private:
    std::chrono::steady_clock::time_point t0_;
    std::chrono::steady_clock::duration total_{};
};

/// Bytes currently allocated from the heap (glibc mallinfo2).
std::size_t heap_in_use();

/// "  <what>: <value> <unit>   (target <op> <target>: PASS|MISS)"
void report(const std::string& what, double value, const std::string& unit, const char* op,
            double target);
void note(const std::string& what, double value, const std::string& unit);

}  // namespace alerts::bench
