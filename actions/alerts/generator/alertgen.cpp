// alertgen.cpp — the stream generator CLI: prints activation values (one JSON object per line,
// {"etags": [...], "now": …}) for N devices, or the matching config with --config.
//
//   alertgen --devices 1000 --minutes 2 --batch 1000 --seed 7 > batches.jsonl
//   alertgen --devices 1000 --config > config.json
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "generator/alertgen_options.hpp"
#include "generator/stream_generator.hpp"

namespace {

void print_batches(const alerts::alertgen_options& c) {
    alerts::stream_generator gen(c.gen);
    std::vector<alerts::gen_etag> pending;
    auto flush = [&](std::size_t n) {
        const double now = pending[n - 1].arrival + c.lag;
        std::cout << gen.batch_json(pending.data(), n, now) << '\n';
        pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(n));
    };
    for (std::uint32_t m = 0; m < c.minutes; ++m) {
        const auto& minute = gen.next_minute();
        for (const auto& e : minute) {
            pending.push_back(e);
            if (pending.size() == c.batch) flush(c.batch);
        }
        if (c.ticks) {
            if (!pending.empty()) flush(pending.size());
            std::cout << "{\"etags\":[],\"now\":" << std::to_string(gen.minute_start()) << "}\n";
        }
    }
    if (!pending.empty()) flush(pending.size());
}

}  // namespace

int main(int argc, char** argv) {
    alerts::alertgen_options c;
    try {
        c = alerts::parse_alertgen_args(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "alertgen: %s (alertgen --help lists the flags)\n", e.what());
        return 2;
    }
    if (c.help) {
        std::fputs(alerts::alertgen_usage(), stdout);
        return 0;
    }
    std::ios::sync_with_stdio(false);
    if (c.config) {
        std::cout << alerts::stream_generator(c.gen).config().dump(2) << '\n';
        return 0;
    }
    print_batches(c);
    return 0;
}
