// framing_bench.cpp — the proxy's per-request text work, for 100 B, 10 KB and 1 MB bodies:
//   frame_request       the /run body made one line (newlines stripped, one appended); compact
//                       bodies (no newline: one memchr pass) and pretty-printed ones
//   is_object_or_array  the action's answer line checked before it is sent back
//   find_deadline_ms    the deadline looked up without parsing the body
#include <benchmark/benchmark.h>

#include <string>

#include "engine/framing.hpp"

namespace {

// A /run body of about `size` bytes, laid out as the invoker sends it: the value first, then
// the context fields, so a deadline lookup has to skip the whole value. Pretty bodies have a
// newline per item (what framing strips).
std::string make_body(size_t size, bool pretty) {
    const char* sep = pretty ? "\n  " : "";
    const std::string tail = std::string(",") + sep + "\"deadline\":\"1764460800000\"}";
    std::string out = std::string("{\"value\":{\"items\":[") + sep;
    for (int i = 0; out.size() + tail.size() + 2 < size; ++i) {
        if (i > 0) out += std::string(",") + sep;
        out += "{\"id\":" + std::to_string(i) + ",\"name\":\"item-" + std::to_string(i) +
               "\",\"ok\":" + (i % 2 == 0 ? "true" : "false") + "}";
    }
    return out + "]}" + tail;
}

void set_size_label(benchmark::State& state, size_t bytes, const char* extra) {
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
    state.SetLabel(std::to_string(bytes) + " B" + extra);
}

void BM_frame_request(benchmark::State& state) {
    const bool pretty = state.range(1) != 0;
    const std::string body = make_body(static_cast<size_t>(state.range(0)), pretty);
    std::string line;
    for (auto _ : state) {
        actionloop::frame_request(body, line);
        benchmark::DoNotOptimize(line.data());
    }
    set_size_label(state, body.size(), pretty ? ", pretty" : ", compact");
}

void BM_is_object_or_array(benchmark::State& state) {
    const std::string answer = make_body(static_cast<size_t>(state.range(0)), false) + "\n";
    for (auto _ : state) {
        bool ok = actionloop::is_object_or_array(answer);
        benchmark::DoNotOptimize(ok);
    }
    set_size_label(state, answer.size(), "");
}

void BM_find_deadline(benchmark::State& state) {
    const std::string body = make_body(static_cast<size_t>(state.range(0)), false);
    for (auto _ : state) {
        auto ms = actionloop::find_deadline_ms(body);
        benchmark::DoNotOptimize(ms);
    }
    set_size_label(state, body.size(), "");
}

BENCHMARK(BM_frame_request)->ArgsProduct({{100, 10 << 10, 1 << 20}, {0, 1}});
BENCHMARK(BM_is_object_or_array)->Arg(100)->Arg(10 << 10)->Arg(1 << 20);
BENCHMARK(BM_find_deadline)->Arg(100)->Arg(10 << 10)->Arg(1 << 20);

}  // namespace
