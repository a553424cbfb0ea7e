// redis_bench.cpp — where the Redis store's time goes per batch, inside one process (no proxy,
// no HTTP, no JSON): the generator's stream for N devices in batches of B, one warm-up minute,
// then M timed minutes through (a) the memory store and (b) the Redis store at --redis (a
// running redis-server, e.g. `redis-server --port 0 --unixsocket /tmp/r.sock --save ''
// --appendonly no`). For each: wall time and
// thread CPU time per batch (wall - CPU = waiting for Redis), round trips and commits per
// batch, notifications. The two cores give the same notifications (checked).
//
// Under callgrind, only the stores' process() of the timed minutes is collected:
//   valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no
//       alerts_redis_bench --memory 0 --redis URL --max-batches 200
// (instrumentation starts after the warm-up minute, and the bench toggles collection around
// each process(): per-batch instruction counts are the total Ir / the printed batch count).
//
//   alerts_redis_bench --redis unix:///path/redis.sock [--devices 300000] [--batch 1000]
//                      [--minutes 1] [--max-batches K] [--seed 1] [--memory 0|1]
//                      [--min-replicas R]   WAIT for R replicas after each commit that wrote
//                      [--bridge-size N] [--bridge-outage F]   the fleet's topology: groups of
//                                     a bridge and N cameras, a fraction F of bridges going down
#include <time.h>
#include <valgrind/callgrind.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "generator/stream_generator.hpp"
#include "redis/redis_store.hpp"

using namespace alerts;
using namespace alerts::bench;

namespace {

struct options {
    generator_options gen;
    std::string redis;
    std::size_t batch = 1000;
    std::uint32_t minutes = 1;    // timed, after the warm-up minute
    std::size_t max_batches = 0;  // 0: every batch of the timed minutes
    bool memory = true;
    int min_replicas = 0;  // WAIT after each commit that wrote (0: none)
};

double thread_cpu() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct figures {
    std::size_t batches = 0, etags = 0, notifications = 0;
    stopwatch wall;
    double cpu = 0;
};

figures run(const options& o, const std::shared_ptr<const alert_config>& cfg, state_store& store) {
    alert_core core;
    core.set_config(cfg);
    store.load(core);
    stream_generator gen(o.gen);
    std::vector<etag> etags;
    std::vector<char> ids;
    figures f;
    for (std::uint32_t m = 0; m <= o.minutes; ++m) {
        const auto& minute = gen.next_minute();
        if (m == 1) CALLGRIND_START_INSTRUMENTATION;
        for (std::size_t i = 0; i < minute.size(); i += o.batch) {
            if (m > 0 && o.max_batches && f.batches == o.max_batches) break;
            const std::size_t n = std::min(o.batch, minute.size() - i);
            gen.to_etags(minute.data() + i, n, etags, ids);
            const double now = minute[i + n - 1].arrival + 0.05;
            if (m == 0) {
                store.process(core, etags, now);
                continue;
            }
            const double c0 = thread_cpu();
            f.wall.start();
            CALLGRIND_TOGGLE_COLLECT;
            const batch_result r = store.process(core, etags, now);
            CALLGRIND_TOGGLE_COLLECT;
            f.wall.stop();
            f.cpu += thread_cpu() - c0;
            ++f.batches;
            f.etags += n;
            f.notifications += r.notifications.size();
        }
    }
    return f;
}

void print(const char* what, const figures& f) {
    const double b = static_cast<double>(f.batches);
    std::printf("%-8s batches %zu etags %zu notifications %zu wall_us_per_batch %.1f "
                "cpu_us_per_batch %.1f etags_per_s %.0f\n",
                what, f.batches, f.etags, f.notifications, 1e6 * f.wall.seconds() / b,
                1e6 * f.cpu / b, static_cast<double>(f.etags) / f.wall.seconds());
}

bool parse_args(int argc, char** argv, options& o) {
    o.gen.devices = 300000;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--redis")
            o.redis = v;
        else if (a == "--devices")
            o.gen.devices = static_cast<std::uint32_t>(std::stoul(v));
        else if (a == "--batch")
            o.batch = std::stoul(v);
        else if (a == "--minutes")
            o.minutes = static_cast<std::uint32_t>(std::stoul(v));
        else if (a == "--max-batches")
            o.max_batches = std::stoul(v);
        else if (a == "--seed")
            o.gen.seed = std::stoull(v);
        else if (a == "--memory")
            o.memory = v == "1";
        else if (a == "--min-replicas")
            o.min_replicas = std::stoi(v);
        else if (a == "--bridge-size")
            o.gen.bridge_size = static_cast<std::uint32_t>(std::stoul(v));
        else if (a == "--bridge-outage")
            o.gen.bridge_outage_fraction = std::stod(v);
        else
            return false;
    }
    return argc % 2 == 1 && !o.redis.empty() && o.batch > 0;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    if (!parse_args(argc, argv, o)) {
        std::fprintf(stderr, "usage: alerts_redis_bench --redis URL [--devices N] [--batch B] "
                             "[--minutes M] [--max-batches K] [--seed S] [--memory 0|1] "
                             "[--min-replicas R] [--bridge-size N] [--bridge-outage F]\n");
        return 2;
    }
    const auto cfg =
        std::make_shared<const alert_config>(parse_config(stream_generator(o.gen).config()));
    figures mem;
    if (o.memory) {
        memory_store store;
        mem = run(o, cfg, store);
        print("memory", mem);
    }
    redis_store_options ro;
    ro.url = parse_redis_url(o.redis);
    ro.min_replicas = o.min_replicas;
    redis_store store(ro);
    const figures red = run(o, cfg, store);
    print("redis", red);
    const auto& c = store.counters();
    std::printf("redis round_trips_per_batch %.3f commits_per_batch %.3f conflicts %llu "
                "skipped_reads_per_batch %.1f log_resets %llu waits_per_batch %.3f\n",
                static_cast<double>(store.round_trips()) / static_cast<double>(c.batches),
                static_cast<double>(c.commits) / static_cast<double>(c.batches),
                static_cast<unsigned long long>(c.conflicts),
                static_cast<double>(c.skipped) / static_cast<double>(c.batches),
                static_cast<unsigned long long>(c.log_resets),
                static_cast<double>(c.waits) / static_cast<double>(c.batches));
    if (o.memory && mem.notifications != red.notifications) {
        std::printf("MISMATCH: memory sent %zu notifications, redis %zu\n", mem.notifications,
                    red.notifications);
        return 1;
    }
    return 0;
}
