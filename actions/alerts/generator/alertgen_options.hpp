// alertgen_options.hpp — alertgen's command line, checked before any work: every flag has a
// range, and a bad value, a missing value or an unknown flag is refused with a message naming
// the flag, what was given and what is allowed (alertgen prints it and exits 2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "generator/stream_generator.hpp"

namespace alerts {

struct alertgen_options {
    generator_options gen;
    std::uint32_t minutes = 1;
    std::size_t batch = 1000;
    double lag = 0.05;  // seconds between the last arrival in a batch and its evaluation
    bool config = false;
    bool ticks = false;
    bool help = false;
};

/// The usage text (every flag, its default and its range).
const char* alertgen_usage();

/// Parses argv[1..]; throws std::invalid_argument naming the bad argument and its range.
alertgen_options parse_alertgen_args(const std::vector<std::string>& args);

}  // namespace alerts
