// e2e_client.cpp — the load side of bench/alerts/e2e: replays the generator's stream for N
// devices through a proxy's /run as batches of B ETags, on one keep-alive connection, one
// activation at a time (the proxy serializes them anyway). Bodies are generated on a second
// thread, ahead of the sender. After a warm-up minute of stream (every device becomes known),
// prints one line per timed window:
//     window <k> etags <n> seconds <s> etags_per_s <r>
// and, at the end, `devices <n>` from the last answer's stats and `alertDelay n <n> p50 <s>
// p99 <s> max <s>` over every notification of the timed windows (--delays FILE: one per line).
// With --port P1,P2,… one sender per proxy takes the next batch as soon as its proxy answered
// (proxies sharing one Redis: batches go to whichever container is free, as on OpenWhisk).
//
// With --cpu NAME=PID,… it also prints, over the timed windows, the CPU seconds per batch of
// each of those processes and of itself (utime + stime from /proc/PID/stat), their sum, and how
// many cores that keeps busy (sum of CPU / wall time):
//     cpu <name> ms_per_batch <m>        …        cpu total ms_per_batch <m> cores_busy <c>
//
//   alerts_e2e_client --port P[,P2…] [--devices 300000] [--batch 1000] [--windows 5]
//                     [--window-batches 400] [--seed 1] [--delays FILE] [--cpu NAME=PID,…]
//                     [--pregenerate 0|1]
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "generator/stream_generator.hpp"

namespace {

struct options {
    std::vector<int> ports;
    std::vector<std::pair<std::string, int>> cpu;  // processes whose CPU time is reported
    std::string delays_file;
    alerts::generator_options gen;
    std::size_t batch = 1000;
    std::size_t windows = 5;
    std::size_t window_batches = 400;
    bool pregenerate = false;  // build every timed body before the first is sent
};

struct body {
    std::string text;
    std::size_t etags = 0;
    bool warm_up = false;
};

// A bounded queue between the generator thread and the sender.
class body_queue {
public:
    void push(body b) {
        std::unique_lock<std::mutex> lock(mutex_);
        room_.wait(lock, [this] { return items_.size() < CAPACITY; });
        items_.push_back(std::move(b));
        ready_.notify_one();
    }

    void close() {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
        ready_.notify_one();
    }

    bool pop(body& out) {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return !items_.empty() || closed_; });
        if (items_.empty()) return false;
        out = std::move(items_.front());
        items_.pop_front();
        room_.notify_one();
        return true;
    }

private:
    static constexpr std::size_t CAPACITY = 64;
    std::mutex mutex_;
    std::condition_variable ready_, room_;
    std::deque<body> items_;
    bool closed_ = false;
};

// The first minute is the warm-up; then `timed` more batches. With --pregenerate, the timed
// bodies are all built (while the warm-up is sent) before the first of them is queued: the
// timed windows then measure the proxies, actions and Redis without the generator's CPU on
// the same cores.
void produce(const options& o, std::size_t timed, body_queue& queue) {
    alerts::stream_generator gen(o.gen);
    std::size_t sent = 0;
    std::vector<body> ready;
    for (bool warm_up = true; sent < timed; warm_up = false) {
        const auto& minute = gen.next_minute();
        for (std::size_t i = 0; i < minute.size() && sent < timed; i += o.batch) {
            const std::size_t n = std::min(o.batch, minute.size() - i);
            const double now = minute[i + n - 1].arrival + 0.05;
            body b{"{\"value\":" + gen.batch_json(minute.data() + i, n, now) + "}", n, warm_up};
            if (!warm_up && o.pregenerate)
                ready.push_back(std::move(b));
            else
                queue.push(std::move(b));
            if (!warm_up) ++sent;
        }
    }
    for (body& b : ready) queue.push(std::move(b));
    queue.close();
}

bool parse_args(int argc, char** argv, options& o) {
    o.gen.devices = 300000;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const std::string v = argv[i + 1];
        if (a == "--port") {
            std::istringstream list(v);
            for (std::string p; std::getline(list, p, ',');) o.ports.push_back(std::stoi(p));
        } else if (a == "--cpu") {
            std::istringstream list(v);
            for (std::string p; std::getline(list, p, ',');) {
                const auto eq = p.find('=');
                if (eq == std::string::npos) return false;
                o.cpu.emplace_back(p.substr(0, eq), std::stoi(p.substr(eq + 1)));
            }
        } else if (a == "--delays")
            o.delays_file = v;
        else if (a == "--devices")
            o.gen.devices = static_cast<std::uint32_t>(std::stoul(v));
        else if (a == "--batch")
            o.batch = std::stoul(v);
        else if (a == "--windows")
            o.windows = std::stoul(v);
        else if (a == "--window-batches")
            o.window_batches = std::stoul(v);
        else if (a == "--seed")
            o.gen.seed = std::stoull(v);
        else if (a == "--pregenerate")
            o.pregenerate = v == "1";
        else
            return false;
    }
    return argc % 2 == 1 && !o.ports.empty() && o.batch > 0 && o.window_batches > 0;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds (user + system, every thread) a process has used so far; 0 when it is gone.
double cpu_seconds(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');  // the name may hold spaces
    if (close == std::string::npos) return 0;
    std::istringstream fields(text.substr(close + 2));
    std::string f;
    double ticks = 0;
    for (int i = 3; fields >> f; ++i) {
        if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
        if (i == 15) break;
    }
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::vector<double> cpu_snapshot(const options& o) {
    std::vector<double> out;
    for (const auto& [name, pid] : o.cpu) out.push_back(cpu_seconds(pid));
    out.push_back(cpu_seconds(static_cast<int>(getpid())));
    return out;
}

// What the senders share: the window clock and the notifications' delays.
struct tally {
    std::mutex mutex;
    std::size_t window = 0, in_window = 0, etags = 0;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    std::vector<double> delays;
    std::string last;
    bool timed = false;  // the first timed answer has come
    std::vector<double> cpu0;
    std::chrono::steady_clock::time_point cpu_t0;
    std::size_t timed_batches = 0;
};

void collect_delays(const std::string& answer, std::vector<double>& out) {
    const auto j = nlohmann::json::parse(answer, nullptr, false);
    if (!j.is_object()) return;
    for (const auto& n : j["notifications"]) out.push_back(n["alertDelay"].get<double>());
}

void send_all(const options& o, int port, body_queue& queue, tally& t) {
    httplib::Client client("127.0.0.1", port);
    client.set_keep_alive(true);
    client.set_read_timeout(120, 0);
    body b;
    std::vector<double> delays;
    while (queue.pop(b)) {
        const auto res = client.Post("/run", b.text, "application/json");
        if (!res || res->status != 200 || res->body.rfind("{\"error\"", 0) == 0) {
            std::fprintf(stderr, "run failed: %s\n",
                         res ? res->body.substr(0, 300).c_str() : "no reply");
            std::exit(1);
        }
        if (b.warm_up) continue;
        delays.clear();
        collect_delays(res->body, delays);
        std::lock_guard<std::mutex> lock(t.mutex);
        if (!t.timed) {
            t.timed = true;
            t.cpu0 = cpu_snapshot(o);
            t.cpu_t0 = std::chrono::steady_clock::now();
        } else {
            ++t.timed_batches;  // batches answered after the snapshot
        }
        t.delays.insert(t.delays.end(), delays.begin(), delays.end());
        if (t.in_window == 0) t.t0 = std::chrono::steady_clock::now(), t.etags = 0;
        t.etags += b.etags;
        if (++t.in_window == o.window_batches) {
            const double s = seconds_since(t.t0);
            std::printf("window %zu etags %zu seconds %.3f etags_per_s %.0f\n", ++t.window, t.etags,
                        s, static_cast<double>(t.etags) / s);
            std::fflush(stdout);
            t.in_window = 0;
            t.last = res->body;
        }
    }
}

double quantile(std::vector<double>& v, double q) {
    if (v.empty()) return 0;
    const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    if (!parse_args(argc, argv, o)) {
        std::fprintf(stderr, "usage: alerts_e2e_client --port P[,P2...] [--devices N] [--batch B] "
                             "[--windows W] [--window-batches K] [--seed S] [--delays FILE]\n");
        return 2;
    }
    body_queue queue;
    std::thread producer(produce, std::cref(o), o.windows * o.window_batches, std::ref(queue));
    tally t;
    std::vector<std::thread> senders;
    for (int port : o.ports) {
        senders.emplace_back(send_all, std::cref(o), port, std::ref(queue), std::ref(t));
    }
    for (auto& s : senders) s.join();
    producer.join();
    if (!o.cpu.empty() && t.timed && t.timed_batches > 0) {
        const std::vector<double> cpu1 = cpu_snapshot(o);
        const double wall = seconds_since(t.cpu_t0);
        const double b = static_cast<double>(t.timed_batches);
        double total = 0;
        for (std::size_t i = 0; i < cpu1.size(); ++i) {
            const double used = cpu1[i] - t.cpu0[i];
            total += used;
            std::printf("cpu %s ms_per_batch %.3f\n",
                        i < o.cpu.size() ? o.cpu[i].first.c_str() : "client", 1e3 * used / b);
        }
        std::printf("cpu total ms_per_batch %.3f cores_busy %.2f batches_per_s %.1f\n",
                    1e3 * total / b, total / wall, b / wall);
    }
    const auto answer = nlohmann::json::parse(t.last, nullptr, false);
    std::printf("devices %s\n",
                answer.is_object() ? answer["stats"]["devices"].dump().c_str() : "?");
    if (!o.delays_file.empty()) {
        if (std::FILE* f = std::fopen(o.delays_file.c_str(), "w")) {
            for (double d : t.delays) std::fprintf(f, "%.3f\n", d);
            std::fclose(f);
        }
    }
    const std::size_t n = t.delays.size();
    const double p50 = quantile(t.delays, 0.5), p99 = quantile(t.delays, 0.99);
    const double max = n ? *std::max_element(t.delays.begin(), t.delays.end()) : 0;
    std::printf("alertDelay n %zu p50 %.3f p99 %.3f max %.3f\n", n, p50, p99, max);
    return 0;
}
