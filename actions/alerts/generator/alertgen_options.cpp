// alertgen_options.cpp — alertgen's flags, each with its range.
#include "generator/alertgen_options.hpp"

#include <charconv>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string_view>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>

#include "cli/gnu_options.hpp"

namespace alerts {

const char* alertgen_usage() {
    return "usage: alertgen [options]\n"
           "  --devices N        devices (1000; 1..10000000)\n"
           "  --accounts N       accounts (0: devices/100; 0..1000000)\n"
           "  --minutes N        minutes of stream (1; 0..1000000)\n"
           "  --batch N          ETags per batch (1000; 1..10000000)\n"
           "  --seed N           random seed (1; 0..18446744073709551615)\n"
           "  --start T          first minute, Unix seconds (1764460800; 0..100000000000)\n"
           "  --rate N           ETags/device/minute (13; 1..10000)\n"
           "  --motion F         cameras with motion regions (0.2; 0..1)\n"
           "  --flap F           flaky devices (0.02; 0..1)\n"
           "  --outage F         devices with outages (0.002; 0..1)\n"
           "  --slow-flap F      devices off 6 minutes, on 2, all day (0; 0..1)\n"
           "  --bridge-size N    cameras behind each bridge (0: no bridges; 0..100000)\n"
           "  --bridge-outage F  bridges losing their uplink 20 min an hour, cameras with them "
           "(0; 0..1)\n"
           "  --sites            each bridge's group is a site in the config (with --bridge-size)\n"
           "  --duplicates P     re-delivery probability (0; 0..1)\n"
           "  --reorder S        arrival jitter in seconds (0; 0..3600)\n"
           "  --datacenters N    spread accounts over c001..cN (1; 1..999)\n"
           "  --lag S            now = last arrival + S (0.05; 0..3600)\n"
           "  --ticks            an empty tick batch after each minute\n"
           "  --config           print the matching config JSON and exit\n"
           "  -h, --help         this text\n";
}

namespace {

[[noreturn]] void refuse(std::string_view flag, std::string_view value, std::string_view range) {
    throw std::invalid_argument(std::string(flag) + ": '" + std::string(value) + "' is not " +
                                std::string(range));
}

std::uint64_t whole(std::string_view flag, std::string_view v, std::uint64_t lo, std::uint64_t hi) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < lo || n > hi) {
        refuse(flag, v, "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    }
    return n;
}

double real(std::string_view flag, std::string_view v, double lo, double hi, const char* range) {
    const std::string s(v);
    std::size_t used = 0;
    double x = 0;
    try {
        x = std::stod(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (s.empty() || used != s.size() || !std::isfinite(x) || x < lo || x > hi) {
        refuse(flag, v, range);
    }
    return x;
}

using setter = std::function<void(alertgen_options&, std::string_view flag, std::string_view v)>;

setter u32(std::uint32_t generator_options::*field, std::uint32_t lo, std::uint32_t hi) {
    return [=](alertgen_options& o, std::string_view f, std::string_view v) {
        o.gen.*field = static_cast<std::uint32_t>(whole(f, v, lo, hi));
    };
}

setter fraction(double generator_options::*field) {
    return [=](alertgen_options& o, std::string_view f, std::string_view v) {
        o.gen.*field = real(f, v, 0, 1, "a number from 0 to 1");
    };
}

struct flag_spec {
    std::string_view name;
    setter set;
};

const std::vector<flag_spec>& flags() {
    using g = generator_options;
    static const std::vector<flag_spec> FLAGS = {
        {"--devices", u32(&g::devices, 1, 10000000)},
        {"--accounts", u32(&g::accounts, 0, 1000000)},
        {"--datacenters", u32(&g::datacenters, 1, 999)},
        {"--rate", u32(&g::rate, 1, 10000)},
        {"--bridge-size", u32(&g::bridge_size, 0, 100000)},
        {"--minutes",
         [](alertgen_options& o, std::string_view f, std::string_view v) {
             o.minutes = static_cast<std::uint32_t>(whole(f, v, 0, 1000000));
         }},
        {"--batch",
         [](alertgen_options& o, std::string_view f, std::string_view v) {
             o.batch = static_cast<std::size_t>(whole(f, v, 1, 10000000));
         }},
        {"--seed", [](alertgen_options& o, std::string_view f,
                      std::string_view v) { o.gen.seed = whole(f, v, 0, UINT64_MAX); }},
        {"--start",
         [](alertgen_options& o, std::string_view f, std::string_view v) {
             o.gen.start = real(f, v, 0, 1e11, "a number from 0 to 100000000000");
         }},
        {"--reorder",
         [](alertgen_options& o, std::string_view f, std::string_view v) {
             o.gen.reorder_window = real(f, v, 0, 3600, "a number from 0 to 3600");
         }},
        {"--lag",
         [](alertgen_options& o, std::string_view f, std::string_view v) {
             o.lag = real(f, v, 0, 3600, "a number from 0 to 3600");
         }},
        {"--motion", fraction(&g::motion_fraction)},
        {"--flap", fraction(&g::flap_fraction)},
        {"--outage", fraction(&g::outage_fraction)},
        {"--slow-flap", fraction(&g::slow_flap_fraction)},
        {"--bridge-outage", fraction(&g::bridge_outage_fraction)},
        {"--duplicates", fraction(&g::duplicate_rate)},
    };
    return FLAGS;
}

// Boost.Program_options splits the words (--flag VALUE, --flag=VALUE, -h); the table above
// checks each value, in the order given (a repeated flag: the last wins).
namespace po = boost::program_options;

po::options_description described() {
    po::options_description described;
    for (const flag_spec& f : flags()) {
        described.add_options()(std::string(f.name.substr(2)).c_str(), po::value<std::string>());
    }
    described.add_options()("config", po::bool_switch())("ticks", po::bool_switch())(
        "sites", po::bool_switch())("help,h", po::bool_switch());
    return described;
}

const flag_spec* find_flag(std::string_view name) {
    for (const flag_spec& f : flags()) {
        if (f.name.substr(2) == name) return &f;
    }
    return nullptr;
}

}  // namespace

alertgen_options parse_alertgen_args(const std::vector<std::string>& args) {
    alertgen_options o;
    for (const po::option& given : actionloop::cli::split_gnu(args, described())) {
        const std::string& name = given.string_key;
        if (given.unregistered || name.empty()) {
            const std::string word = given.original_tokens.at(0);
            throw std::invalid_argument("unknown flag '" + word.substr(0, word.find('=')) + "'");
        }
        if (name == "help") {
            o.help = true;
            return o;
        }
        if (name == "config" || name == "ticks") {
            (name == "config" ? o.config : o.ticks) = true;
            continue;
        }
        if (name == "sites") {
            o.gen.sites = true;
            continue;
        }
        find_flag(name)->set(o, "--" + name, given.value.at(0));
    }
    return o;
}

}  // namespace alerts
