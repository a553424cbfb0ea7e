// alerts_bench.cpp — figures for issue 3's performance targets:
//   1. ETags/s through the decision core on one core (target >= 1,000,000/s), 300,000
//      devices, the generator's mix, batches of 1,000, after a warm-up minute;
//   2. bytes per idle device (target <= 200);
//   3. the same with the on-disk state store under a temp dir (target >= 80% of 1.);
//   4. the JSON batch path inside the action process, the raw entry point the actions use
//      (top-level scan of the line, batch_text straight into ETags, core, answer dump), and
//      next to its parse two nlohmann peers on the same lines: the DOM parse alone (no ETags
//      made) and the SAX parser with a no-op handler (the floor of a SAX route).
//
//   alerts_bench [--devices N] [--minutes M] [--batch B] [--json-batches K] [--seed S]
//                [--parse-only 1] [--bridge-size N] [--sites 1] [--grouping 1]
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "core/batch_text.hpp"
#include "core/result_json.hpp"
#include "generator/stream_generator.hpp"
#include "runtime/file_store.hpp"
#include <actionloop/detail/json_scan.hpp>

using namespace alerts;
using namespace alerts::bench;
using json = nlohmann::json;

namespace {

struct bench_options {
    generator_options gen;
    std::uint32_t minutes = 3;  // the first is warm-up
    std::size_t batch = 1000;
    std::size_t json_batches = 300;
    bool parse_only = false;  // --parse-only 1: only the request-parsing comparison
    bool grouping = false;    // --grouping 1: sites' groups on (docs/alerts.md, "Grouping")
};

struct run_figures {
    std::uint64_t etags = 0;
    std::uint64_t notifications = 0;
    double seconds = 0;
    double cold_seconds = 0;  // the warm-up minute, every device new
    std::uint64_t cold_etags = 0;
    std::size_t bytes_per_device = 0;
    std::size_t core_bytes = 0;
    std::size_t devices = 0;
};

// Feeds `minutes` minutes of stream to `core` in batches, timing only process() (+ commit).
run_figures run_stream(const bench_options& o, alert_core& core, state_store& store) {
    stream_generator gen(o.gen);
    std::vector<etag> etags;
    std::vector<char> ids;
    stopwatch sw, cold;
    run_figures f;
    std::size_t heap_before = 0;
    for (std::uint32_t m = 0; m < o.minutes; ++m) {
        const auto& minute = gen.next_minute();
        if (m == 0) {  // the generator's buffers are allocated now and reused afterwards
            etags.reserve(o.batch);
            ids.reserve(o.batch * 16);
            heap_before = heap_in_use();
        }
        if (m == 1) {  // after warm-up: every device known and idle-ish
            f.bytes_per_device = (heap_in_use() - heap_before) / core.device_count();
            f.core_bytes = core.memory_bytes();
        }
        for (std::size_t i = 0; i < minute.size(); i += o.batch) {
            const std::size_t n = std::min(o.batch, minute.size() - i);
            gen.to_etags(minute.data() + i, n, etags, ids);
            const double now = minute[i + n - 1].arrival + 0.05;
            stopwatch& timer = m > 0 ? sw : cold;
            timer.start();
            const batch_result& r = core.process(etags, now);
            store.commit(core);
            timer.stop();
            if (m == 0) f.cold_etags += n;
            if (m > 0) {
                f.etags += n;
                f.notifications += r.notifications.size();
            }
        }
    }
    f.seconds = sw.seconds();
    f.cold_seconds = cold.seconds();
    f.devices = core.device_count();
    return f;
}

struct json_figures {
    double parse = 0, core = 0, answer = 0;
    std::uint64_t etags = 0;
    std::size_t bytes = 0;
};

// The cheapest possible nlohmann SAX handler: what a SAX route can at best cost.
struct null_sax : nlohmann::json_sax<json> {
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }
};

// The launcher's raw path: top-level scan of the request line, then the value's text parsed
// straight into ETags (what the actions do since the raw entry point).
std::string_view value_of(std::string_view line) {
    std::string_view value;
    actionloop::scan::for_each_member(line, [&value](std::string_view k, std::string_view v) {
        if (k == "\"value\"") value = v;
    });
    return value;
}

// Warms `core` up with one minute of stream (every device known).
void warm_up(stream_generator& gen, alert_core& core, std::size_t batch) {
    std::vector<etag> etags;
    std::vector<char> ids;
    const auto& minute = gen.next_minute();
    for (std::size_t i = 0; i < minute.size(); i += batch) {
        const std::size_t n = std::min(batch, minute.size() - i);
        gen.to_etags(minute.data() + i, n, etags, ids);
        core.process(etags, minute[i + n - 1].arrival + 0.05);
    }
}

// Request lines of the second minute of the stream (after a warm-up minute through `core`).
std::vector<std::string> request_lines(const bench_options& o, alert_core& core) {
    stream_generator gen(o.gen);
    warm_up(gen, core, o.batch);
    std::vector<std::string> lines;
    const auto& minute = gen.next_minute();
    for (std::size_t i = 0; i + o.batch <= minute.size() && lines.size() < o.json_batches;
         i += o.batch) {
        const double now = minute[i + o.batch - 1].arrival + 0.05;
        lines.push_back("{\"value\":" + gen.batch_json(minute.data() + i, o.batch, now) +
                        ",\"activation_id\":\"x\"}");
    }
    return lines;
}

struct peer_figures {
    double dom = 0;  // nlohmann::json::parse of the request line: a DOM, no ETags made yet
    double sax = 0;  // nlohmann's SAX parser with a handler that does nothing: its floor
};

// nlohmann's parsers over the request lines of the raw path: peers of the batch_text parse.
peer_figures run_nlohmann_peers(const bench_options& o,
                                const std::shared_ptr<const alert_config>& cfg) {
    alert_core core;
    core.set_config(cfg);
    const std::vector<std::string> lines = request_lines(o, core);
    stopwatch dom, sax;
    null_sax handler;
    for (const std::string& line : lines) {
        sax.start();
        json::sax_parse(line, &handler);
        sax.stop();
    }
    for (const std::string& line : lines) {
        dom.start();
        const json request = json::parse(line);
        dom.stop();
    }
    return {dom.seconds(), sax.seconds()};
}

// The activations through the raw entry point: scan + text parse, core, answer.
json_figures run_raw_path(const bench_options& o, const std::shared_ptr<const alert_config>& cfg) {
    alert_core core;
    core.set_config(cfg);
    const std::vector<std::string> lines = request_lines(o, core);
    stopwatch parse, run, answer;
    json_figures f;
    parsed_batch batch;
    value_members members;
    for (const std::string& line : lines) {
        parse.start();
        parse_value_text(value_of(line), batch, members);
        parse.stop();
        run.start();
        const batch_result& r = core.process(batch.etags, members.now);
        run.stop();
        answer.start();
        f.bytes += result_json(core, r, batch.rejected).dump().size();
        answer.stop();
        f.etags += batch.etags.size();
    }
    f.parse = parse.seconds();
    f.core = run.seconds();
    f.answer = answer.seconds();
    return f;
}

void print_parse_paths(const bench_options& o, const std::shared_ptr<const alert_config>& cfg) {
    // The peers first, as the json entry point ran before the raw one when there was one: the
    // raw path's figures stay comparable with earlier runs.
    const peer_figures p = run_nlohmann_peers(o, cfg);
    const json_figures r = run_raw_path(o, cfg);
    const double er = static_cast<double>(r.etags);
    std::printf("JSON batch path in the action process (%zu batches, warm core), raw entry point "
                "(top-level scan + batch_text, no DOM):\n",
                o.json_batches);
    note("scan + parse_value_text -> ETags", er / r.parse, "ETags/s");
    note("core", er / r.core, "ETags/s");
    note("answer json + dump", er / r.answer, "ETags/s");
    const double raw_total = r.parse + r.core + r.answer;
    report("whole path, raw entry point (excl. HTTP, pipes)", er / raw_total, "ETags/s", ">=", 3e5);
    note("per batch: raw entry point", 1e6 * raw_total / static_cast<double>(o.json_batches), "us");
    std::printf("peers of the parse, same request lines (ETags in them per second):\n");
    note("  nlohmann::json::parse, DOM only (no ETags made)", er / p.dom, "ETags/s");
    note("  nlohmann::json::sax_parse, no-op handler (SAX floor)", er / p.sax, "ETags/s");
}

bool parse_args(int argc, char** argv, bench_options& o) {
    o.gen.devices = 300000;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const std::string v = argv[i + 1];
        if (a == "--devices")
            o.gen.devices = static_cast<std::uint32_t>(std::stoul(v));
        else if (a == "--minutes")
            o.minutes = static_cast<std::uint32_t>(std::stoul(v));
        else if (a == "--batch")
            o.batch = std::stoul(v);
        else if (a == "--json-batches")
            o.json_batches = std::stoul(v);
        else if (a == "--parse-only")
            o.parse_only = v == "1";
        else if (a == "--seed")
            o.gen.seed = std::stoull(v);
        else if (a == "--bridge-size")  // the topology: groups of a bridge and N cameras
            o.gen.bridge_size = static_cast<std::uint32_t>(std::stoul(v));
        else if (a == "--sites")  // 1: each group a site (memory per idle device with sites)
            o.gen.sites = v == "1";
        else if (a == "--grouping")  // 1: the config groups sites (30 s wait, 300 s interval)
            o.grouping = v == "1";
        else
            return false;
    }
    return argc % 2 == 1 && o.minutes >= 2;
}

void print_core(const char* title, const run_figures& f) {
    std::printf("%s\n", title);
    note("devices", static_cast<double>(f.devices), "");
    note("ETags timed (after 1 warm-up minute)", static_cast<double>(f.etags), "");
    note("notifications", static_cast<double>(f.notifications), "");
    note("first minute (cold: devices interned)",
         static_cast<double>(f.cold_etags) / f.cold_seconds, "ETags/s");
    report("ETags/s through the core, one thread", static_cast<double>(f.etags) / f.seconds,
           "ETags/s", ">=", 1e6);
}

}  // namespace

int main(int argc, char** argv) {
    bench_options o;
    if (!parse_args(argc, argv, o)) {
        std::fprintf(stderr, "usage: alerts_bench [--devices N] [--minutes M>=2] [--batch B] "
                             "[--json-batches K] [--seed S] [--bridge-size N] [--sites 1] "
                             "[--grouping 1]\n");
        return 2;
    }
    const std::size_t heap0 = heap_in_use();
    json config = stream_generator(o.gen).config();
    if (o.grouping) config["grouping"] = {{"group_wait", 30}, {"group_interval", 300}};
    const auto cfg = std::make_shared<const alert_config>(parse_config(config));
    std::printf("alerts_bench: %u devices, %u minutes of %u ETags/device/minute, batches of %zu\n",
                o.gen.devices, o.minutes, o.gen.rate, o.batch);
    note("config in memory (motion cameras listed)",
         static_cast<double>(heap_in_use() - heap0) / static_cast<double>(o.gen.devices),
         "bytes/device");

    if (o.parse_only) {
        print_parse_paths(o, cfg);
        return 0;
    }
    run_figures mem;
    {
        alert_core core;
        core.set_config(cfg);
        memory_store store;
        mem = run_stream(o, core, store);
    }
    print_core("in-process state (memory_store):", mem);
    report("heap per idle device", static_cast<double>(mem.bytes_per_device), "bytes", "<=", 200);
    note("core structures per device",
         static_cast<double>(mem.core_bytes) / static_cast<double>(mem.devices), "bytes");

    const auto dir =
        std::filesystem::temp_directory_path() / ("alerts-bench-" + std::to_string(::getpid()));
    run_figures disk;
    {
        alert_core core;
        core.set_config(cfg);
        file_store store({dir.string()});
        store.load(core);
        disk = run_stream(o, core, store);
        print_core("with the on-disk store (ALERT_STATE_DIR, no fsync):", disk);
        note("journal bytes at the end", static_cast<double>(store.journal_bytes()), "bytes");
    }
    std::filesystem::remove_all(dir);
    const double mem_rate = static_cast<double>(mem.etags) / mem.seconds;
    const double disk_rate = static_cast<double>(disk.etags) / disk.seconds;
    report("on-disk / in-process throughput", 100.0 * disk_rate / mem_rate, "%", ">=", 80);

    print_parse_paths(o, cfg);
    return 0;
}
