// alert_bench.cpp — the alert pipeline per ETag, batches of 1, 100, 1,000 and 10,000 from the
// generator's mix (10,000 devices, 13 ETags/device/minute, one warm-up minute first):
//   alert_core        alert_core::process on ready-made ETags (the pure decision core)
//   alert_activation  what the monitor action does per activation inside its process: the
//                     launcher's raw path (handle_raw_request: a top-level scan of the line)
//                     and the service on the value's text (ETags parsed without a DOM, core,
//                     answer). Second argument 1 = the same minute replayed over and over
//                     (what bench/run's wrk script does once it has cycled through its bodies:
//                     re-deliveries, all stale or duplicate); 0 = a fresh stream.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "core/alert_core.hpp"
#include "generator/stream_generator.hpp"
#include "loop.hpp"
#include "runtime/alert_service.hpp"

namespace {

alerts::generator_options fleet() {
    alerts::generator_options g;
    g.devices = 10000;
    return g;
}

struct core_batch {
    std::vector<alerts::etag> etags;
    std::vector<char> ids;
    double now = 0;
};

// The next minute of stream cut into batches of `size` (the last one may be shorter).
std::vector<core_batch> core_batches(alerts::stream_generator& gen, size_t size) {
    const auto& minute = gen.next_minute();
    std::vector<core_batch> out;
    for (size_t i = 0; i < minute.size(); i += size) {
        const size_t n = std::min(size, minute.size() - i);
        core_batch b;
        gen.to_etags(minute.data() + i, n, b.etags, b.ids);
        b.now = minute[i + n - 1].arrival + 0.05;
        out.push_back(std::move(b));
    }
    return out;
}

std::vector<std::string> request_lines(alerts::stream_generator& gen, size_t size) {
    const auto& minute = gen.next_minute();
    std::vector<std::string> out;
    for (size_t i = 0; i < minute.size(); i += size) {
        const size_t n = std::min(size, minute.size() - i);
        out.push_back(
            "{\"value\":" + gen.batch_json(minute.data() + i, n, minute[i + n - 1].arrival + 0.05) +
            ",\"activation_id\":\"x\"}");
    }
    return out;
}

void BM_alert_core(benchmark::State& state) {
    const size_t size = static_cast<size_t>(state.range(0));
    alerts::stream_generator gen(fleet());
    alerts::alert_core core;
    core.set_config(
        std::make_shared<const alerts::alert_config>(alerts::parse_config(gen.config())));
    for (const core_batch& b : core_batches(gen, size)) core.process(b.etags, b.now);  // warm up
    std::vector<core_batch> batches = core_batches(gen, size);
    size_t next = 0;
    int64_t etags = 0;
    for (auto _ : state) {
        if (next == batches.size()) {
            state.PauseTiming();
            batches = core_batches(gen, size);
            next = 0;
            state.ResumeTiming();
        }
        const core_batch& b = batches[next++];
        benchmark::DoNotOptimize(core.process(b.etags, b.now).notifications.size());
        etags += static_cast<int64_t>(b.etags.size());
    }
    state.SetItemsProcessed(etags);
}

class null_buffer : public std::streambuf {
protected:
    int_type overflow(int_type c) override { return c; }
};

void BM_alert_activation(benchmark::State& state) {
    const size_t size = static_cast<size_t>(state.range(0));
    const bool replay = state.range(1) != 0;
    alerts::stream_generator gen(fleet());
    const std::string config_file =
        "/tmp/actionloop-micro-alert-config-" + std::to_string(::getpid()) + ".json";
    std::ofstream(config_file) << gen.config().dump();
    alerts::service_env env;
    env.config_file = config_file;
    alerts::alert_service service(alerts::action_kind::monitor, env);
    null_buffer null;
    std::ostream log(&null);
    const actionloop::raw_entry_point entry = [&](std::string_view value, std::string& answer,
                                                  const actionloop::context&) {
        service.run_text(value, 0, log, answer);
    };
    std::string answer;
    auto activate = [&](const std::string& line) -> const std::string& {
        actionloop::handle_raw_request(line, entry, answer);
        return answer;
    };
    for (const std::string& line : request_lines(gen, size)) activate(line);  // warm up
    std::vector<std::string> lines = request_lines(gen, size);
    size_t next = 0;
    int64_t etags = 0;
    for (auto _ : state) {
        if (next == lines.size()) {
            next = 0;
            if (!replay) {
                state.PauseTiming();
                lines = request_lines(gen, size);
                state.ResumeTiming();
            }
        }
        benchmark::DoNotOptimize(activate(lines[next++]).size());
        etags += static_cast<int64_t>(size);
    }
    std::remove(config_file.c_str());
    state.SetItemsProcessed(etags);
    state.SetLabel(replay ? "replayed minute" : "fresh stream");
}

BENCHMARK(BM_alert_core)->Arg(1)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_alert_activation)->ArgsProduct({{1, 100, 1000, 10000}, {0, 1}});

}  // namespace
