// alertgen.cpp — the stream generator CLI: prints activation values (one JSON object per line,
// {"etags": [...], "now": …}) for N devices, or the matching config with --config.
//
//   alertgen --devices 1000 --minutes 2 --batch 1000 --seed 7 > batches.jsonl
//   alertgen --devices 1000 --config > config.json
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "stream_generator.hpp"

namespace {

struct cli {
    alerts::generator_options gen;
    std::uint32_t minutes = 1;
    std::size_t batch = 1000;
    double lag = 0.05;  // seconds between the last arrival in a batch and its evaluation
    bool config = false;
    bool ticks = false;
};

void usage(std::FILE* to) {
    std::fputs(
        "usage: alertgen [options]\n"
        "  --devices N        devices (1000)          --accounts N    accounts (devices/100)\n"
        "  --minutes N        minutes of stream (1)   --batch N       ETags per batch (1000)\n"
        "  --seed N           random seed (1)         --start T       first minute (1764460800)\n"
        "  --rate N           ETags/device/minute (13)\n"
        "  --motion F         cameras with motion regions (0.2)\n"
        "  --flap F           flaky devices (0.02)\n"
        "  --outage F         devices with outages (0.002)\n"
        "  --slow-flap F      devices off 6 minutes, on 2, all day (0)\n"
        "  --bridge-size N    cameras behind each bridge (0: no bridges in the topology)\n"
        "  --bridge-outage F  bridges losing their uplink 20 min an hour, cameras with them (0)\n"
        "  --duplicates P     re-delivery probability (0)\n"
        "  --reorder S        arrival jitter in seconds (0)\n"
        "  --datacenters N    spread accounts over c001..cN (1)\n"
        "  --lag S            now = last arrival + S (0.05)\n"
        "  --ticks            an empty tick batch after each minute\n"
        "  --config           print the matching config JSON and exit\n",
        to);
}

// Sets the option `name` from `v`; false when there is no such option.
bool set_option(const std::string& name, const char* v, cli& c) {
    auto u32 = [v] { return static_cast<std::uint32_t>(std::stoul(v)); };
    alerts::generator_options& g = c.gen;
    if (name == "--devices")
        g.devices = u32();
    else if (name == "--accounts")
        g.accounts = u32();
    else if (name == "--datacenters")
        g.datacenters = u32();
    else if (name == "--minutes")
        c.minutes = u32();
    else if (name == "--batch")
        c.batch = std::stoul(v);
    else if (name == "--seed")
        g.seed = std::stoull(v);
    else if (name == "--start")
        g.start = std::stod(v);
    else if (name == "--rate")
        g.rate = u32();
    else if (name == "--motion")
        g.motion_fraction = std::stod(v);
    else if (name == "--flap")
        g.flap_fraction = std::stod(v);
    else if (name == "--outage")
        g.outage_fraction = std::stod(v);
    else if (name == "--slow-flap")
        g.slow_flap_fraction = std::stod(v);
    else if (name == "--bridge-size")
        g.bridge_size = u32();
    else if (name == "--bridge-outage")
        g.bridge_outage_fraction = std::stod(v);
    else if (name == "--duplicates")
        g.duplicate_rate = std::stod(v);
    else if (name == "--reorder")
        g.reorder_window = std::stod(v);
    else if (name == "--lag")
        c.lag = std::stod(v);
    else
        return false;
    return true;
}

bool parse_args(int argc, char** argv, cli& c) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            usage(stdout);
            std::exit(0);
        }
        if (a == "--config" || a == "--ticks") {
            (a == "--config" ? c.config : c.ticks) = true;
        } else if (i + 1 >= argc || !set_option(a, argv[++i], c)) {
            return false;
        }
    }
    return c.batch > 0 && c.gen.devices > 0;
}

void print_batches(const cli& c) {
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
    cli c;
    try {
        if (!parse_args(argc, argv, c)) {
            usage(stderr);
            return 2;
        }
    } catch (const std::exception&) {
        usage(stderr);
        return 2;
    }
    std::ios::sync_with_stdio(false);
    if (c.config) {
        std::cout << alerts::stream_generator(c.gen).config().dump(2) << '\n';
        return 0;
    }
    print_batches(c);
    return 0;
}
