// fleet_sender.cpp — the publisher of bench/alerts/fleet: the generator's stream of a camera
// fleet, sent at real pace to the proxies running `monitor`, as the seed's publisher sends it.
//
// Paced (the default): the stream starts at --start (Unix seconds; default: a few seconds from
// now, time for the first minute to be generated), so every event's time is a real time; a
// batch ends at --batch ETags (1,000) or --linger seconds (0.1) after its first ETag, whichever
// comes first (as a publisher flushes), and is sent when the last of its ETags happens (its
// arrival), without
// "now" (the action reads its clock, as in production). One sender thread per proxy takes the
// next due batch as soon as its proxy answered (batches go to whichever container is free, as
// on OpenWhisk). A batch that fails (no answer: the container died; an HTTP error; an error
// answer: Redis failing over) goes back to the head of the queue and is sent again, to the
// first sender free, until it succeeds or --give-up seconds have passed (then it is counted
// `dropped`): at-least-once, as an invoker retries; the action drops the ETags it already has
// by their ids. After the last batch, a tick ({"etags": [], "now": T}) fires every timer due up
// to T, the `end` line's time.
//
// Every 10 s (and at the end) a line on stdout:
//     tick <unix time> etags <n> batches <b> retries <r> lag_p50 <s> lag_p99 <s> lag_max <s>
// n and b are what was answered in those 10 s; lag is how late a batch was answered after it
// was due (the ingestion delay: it grows when the proxies cannot keep up). At the end:
//     end <T> etags <n> batches <b> retries <r> dropped <d>
//
// --reference FILE: instead, the whole stream (same options, same --start) goes to one proxy
// with a memory-only monitor, batch after batch as fast as it answers, each with the
// generator's "now" (its last arrival + 0.05 s), then the tick at --end T: the reference run
// the checker compares the pipeline's deliveries with. FILE gets one line per notification:
//     <dedupKey> <1 if it has e-mail recipients, else 0> <notifType> <due time>
//
//   fleet_sender --port P1[,P2…] --devices N [--minutes 5] [--batch 1000] [--seed 1]
//                [--start T] [--flap F] [--outage F] [--bridge-size N] [--bridge-outage F]
//                [--linger 0.1] [--give-up 120] [--reference FILE --end T]
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "generator/stream_generator.hpp"

namespace {

using clock_type = std::chrono::system_clock;

double wall_now() {
    return std::chrono::duration<double>(clock_type::now().time_since_epoch()).count();
}

void sleep_until_wall(double t) {
    const double wait = t - wall_now();
    if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
}

struct options {
    std::vector<int> ports;
    alerts::generator_options gen;
    std::size_t batch = 1000;
    std::uint32_t minutes = 5;
    double give_up = 120;
    double linger = 0.1;    // seconds a batch waits for more ETags (a publisher's flush interval)
    std::string reference;  // the reference run's output file
    double end = 0;         // the reference run's last tick
    bool has_start = false;
};

struct batch_body {
    std::string text;  // the /run request body
    std::size_t etags = 0;
    double due = 0;  // when its last ETag arrives: when it is sent
    double first_try = 0;
};

// What the sender threads share: the due batches, in order, and the 10-second tallies.
class dispatch {
public:
    explicit dispatch(std::size_t capacity) : capacity_(capacity) {}

    void push(batch_body b) {
        std::unique_lock<std::mutex> lock(mutex_);
        room_.wait(lock, [this] { return items_.size() < capacity_; });
        items_.push_back(std::move(b));
        ready_.notify_all();
    }

    void push_front(batch_body b) {  // a failed batch, first in line again
        std::lock_guard<std::mutex> lock(mutex_);
        items_.push_front(std::move(b));
        ready_.notify_all();
    }

    void close() {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
        ready_.notify_all();
    }

    // The next batch, once it is due (paced) or at once; false when all were taken and the
    // producer is done.
    bool pop(batch_body& out, bool paced) {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return !items_.empty() || (closed_ && in_flight_ == 0); });
        if (items_.empty()) return false;
        out = std::move(items_.front());
        items_.pop_front();
        ++in_flight_;
        room_.notify_one();
        lock.unlock();
        if (paced) sleep_until_wall(out.due);
        return true;
    }

    void done(std::size_t etags, double lag, bool retried, bool dropped) {
        std::lock_guard<std::mutex> lock(mutex_);
        --in_flight_;
        if (retried) ++retries_, ++total_retries_;
        if (dropped) ++dropped_;
        if (etags > 0) {
            etags_ += etags, total_etags_ += etags;
            ++batches_, ++total_batches_;
            lags_.push_back(lag);
        }
        ready_.notify_all();
    }

    void requeue(batch_body b) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            --in_flight_;
            ++retries_, ++total_retries_;
        }
        push_front(std::move(b));
    }

    // The tally line of the period that ends now; starts the next period.
    std::string report() {
        std::lock_guard<std::mutex> lock(mutex_);
        std::sort(lags_.begin(), lags_.end());
        auto at = [this](double q) {
            if (lags_.empty()) return 0.0;
            return lags_[static_cast<std::size_t>(q * static_cast<double>(lags_.size() - 1))];
        };
        char line[256];
        std::snprintf(line, sizeof line,
                      "tick %.3f etags %zu batches %zu retries %zu lag_p50 %.3f lag_p99 %.3f "
                      "lag_max %.3f",
                      wall_now(), etags_, batches_, retries_, at(0.5), at(0.99),
                      lags_.empty() ? 0.0 : lags_.back());
        etags_ = batches_ = retries_ = 0;
        lags_.clear();
        return line;
    }

    std::string totals(double end) {
        std::lock_guard<std::mutex> lock(mutex_);
        char line[200];
        std::snprintf(line, sizeof line, "end %.3f etags %zu batches %zu retries %zu dropped %zu",
                      end, total_etags_, total_batches_, total_retries_, dropped_);
        return line;
    }

private:
    std::size_t capacity_;
    std::mutex mutex_;
    std::condition_variable ready_, room_;
    std::deque<batch_body> items_;
    std::size_t in_flight_ = 0;
    bool closed_ = false;
    std::size_t etags_ = 0, batches_ = 0, retries_ = 0;
    std::size_t total_etags_ = 0, total_batches_ = 0, total_retries_ = 0, dropped_ = 0;
    std::vector<double> lags_;
};

// The generator's batch without its "now" member: the action then reads its clock.
std::string without_now(std::string text) {
    const auto at = text.rfind(",\"now\":");
    if (at != std::string::npos) text.replace(at, std::string::npos, "}");
    return text;
}

// Minutes are generated one ahead (a minute of a million cameras takes seconds to make) and cut
// into batches just in time (the dispatch holds a few hundred).
void produce(const options& o, dispatch& out) {
    alerts::stream_generator gen(o.gen);
    const bool paced = o.reference.empty();
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::vector<alerts::gen_etag>> minutes;
    std::thread maker([&] {
        for (std::uint32_t m = 0; m < o.minutes; ++m) {
            std::vector<alerts::gen_etag> minute = gen.next_minute();
            std::unique_lock<std::mutex> lock(mutex);
            cv.wait(lock, [&] { return minutes.size() < 2; });
            minutes.push_back(std::move(minute));
            cv.notify_all();
        }
    });
    for (std::uint32_t m = 0; m < o.minutes; ++m) {
        std::vector<alerts::gen_etag> minute;
        {
            std::unique_lock<std::mutex> lock(mutex);
            cv.wait(lock, [&] { return !minutes.empty(); });
            minute = std::move(minutes.front());
            minutes.pop_front();
            cv.notify_all();
        }
        for (std::size_t i = 0, n = 0; i < minute.size(); i += n) {
            // A batch is full at --batch ETags or --linger seconds after its first one's arrival.
            n = 1;
            while (n < o.batch && i + n < minute.size() &&
                   minute[i + n].arrival - minute[i].arrival <= o.linger) {
                ++n;
            }
            const double due = minute[i + n - 1].arrival;
            std::string text = gen.batch_json(minute.data() + i, n, due + 0.05);
            if (paced) text = without_now(std::move(text));
            out.push({"{\"value\":" + text + "}", n, due, 0});
        }
    }
    maker.join();
    out.close();
}

// True when the proxy took the batch: 200 and not an error answer.
bool answered(const httplib::Result& res) {
    return res && res->status == 200 && res->body.rfind("{\"error\"", 0) != 0;
}

void append_notifications(const std::string& answer, std::string& out) {
    const auto j = nlohmann::json::parse(answer, nullptr, false);
    if (!j.is_object() || !j.contains("notifications")) return;
    for (const auto& n : j["notifications"]) {
        const auto recipients = n.find("recipients");
        const bool mail = recipients != n.end() && recipients->is_array() && !recipients->empty();
        char due[64];
        std::snprintf(due, sizeof due, "%.3f",
                      n.value("publishTs", 0.0) - n.value("alertDelay", 0.0));
        out += n.value("dedupKey", "-") + (mail ? " 1 " : " 0 ") + n.value("notifType", "-") + " " +
               due + "\n";
    }
}

void send_all(const options& o, int port, dispatch& queue, std::string& notes) {
    httplib::Client client("127.0.0.1", port);
    client.set_keep_alive(true);
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(60, 0);
    const bool paced = o.reference.empty();
    batch_body b;
    while (queue.pop(b, paced)) {
        if (b.first_try == 0) b.first_try = wall_now();
        const auto res = client.Post("/run", b.text, "application/json");
        if (answered(res)) {
            if (!paced) append_notifications(res->body, notes);
            queue.done(b.etags, wall_now() - b.due, false, false);
            continue;
        }
        if (wall_now() - b.first_try > o.give_up) {
            std::fprintf(
                stderr, "fleet_sender: a batch due at %.3f dropped after %.0f s: %s\n", b.due,
                o.give_up,
                res ? res->body.substr(0, 200).c_str() : httplib::to_string(res.error()).c_str());
            queue.done(0, 0, true, true);
            continue;
        }
        queue.requeue(std::move(b));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // this proxy: a moment
        client.stop();  // a fresh connection next time (the old one may be a dead container's)
    }
}

// The last tick: every timer due up to `end` fires (to whichever proxy answers).
void send_end_tick(const options& o, double end, std::string& notes) {
    const std::string body = "{\"value\":{\"etags\":[],\"now\":" + std::to_string(end) + "}}";
    for (int attempt = 0; attempt < 600; ++attempt) {
        httplib::Client client("127.0.0.1",
                               o.ports[static_cast<std::size_t>(attempt) % o.ports.size()]);
        client.set_read_timeout(60, 0);
        const auto res = client.Post("/run", body, "application/json");
        if (answered(res)) {
            if (!o.reference.empty()) append_notifications(res->body, notes);
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::fprintf(stderr, "fleet_sender: the last tick was never answered\n");
}

bool parse_args(int argc, char** argv, options& o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const std::string v = argv[i + 1];
        if (a == "--port") {
            std::istringstream list(v);
            for (std::string p; std::getline(list, p, ',');) o.ports.push_back(std::stoi(p));
        } else if (a == "--devices") {
            o.gen.devices = static_cast<std::uint32_t>(std::stoul(v));
        } else if (a == "--minutes") {
            o.minutes = static_cast<std::uint32_t>(std::stoul(v));
        } else if (a == "--batch") {
            o.batch = std::stoul(v);
        } else if (a == "--seed") {
            o.gen.seed = std::stoull(v);
        } else if (a == "--start") {
            o.gen.start = std::stod(v), o.has_start = true;
        } else if (a == "--flap") {
            o.gen.flap_fraction = std::stod(v);
        } else if (a == "--outage") {
            o.gen.outage_fraction = std::stod(v);
        } else if (a == "--bridge-size") {
            o.gen.bridge_size = static_cast<std::uint32_t>(std::stoul(v));
        } else if (a == "--bridge-outage") {
            o.gen.bridge_outage_fraction = std::stod(v);
        } else if (a == "--linger") {
            o.linger = std::stod(v);
        } else if (a == "--give-up") {
            o.give_up = std::stod(v);
        } else if (a == "--reference") {
            o.reference = v;
        } else if (a == "--end") {
            o.end = std::stod(v);
        } else {
            return false;
        }
    }
    if (!o.reference.empty() && (o.end <= 0 || !o.has_start)) return false;
    return argc % 2 == 1 && !o.ports.empty() && o.batch > 0 && o.minutes > 0;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    if (!parse_args(argc, argv, o)) {
        std::fprintf(stderr,
                     "usage: fleet_sender --port P1[,P2...] --devices N [--minutes M] [--batch B] "
                     "[--seed S] [--start T] [--flap F] [--outage F] [--bridge-size N] "
                     "[--bridge-outage F] [--linger S] [--give-up S] [--reference FILE --end T]\n");
        return 2;
    }
    const bool paced = o.reference.empty();
    if (paced && !o.has_start) {
        // Time to generate the first minute (about 1 s per 500,000 cameras here) and a margin.
        o.gen.start = std::ceil(wall_now()) + 3 + o.gen.devices / 250000.0;
    }
    std::printf("start %.3f devices %u minutes %u batch %zu\n", o.gen.start, o.gen.devices,
                o.minutes, o.batch);
    std::fflush(stdout);
    dispatch queue(256);
    std::thread producer(produce, std::cref(o), std::ref(queue));
    std::vector<std::string> notes(o.ports.size());
    std::vector<std::thread> senders;
    for (std::size_t i = 0; i < o.ports.size(); ++i) {
        senders.emplace_back(send_all, std::cref(o), o.ports[i], std::ref(queue),
                             std::ref(notes[i]));
    }
    std::mutex report_mutex;
    std::condition_variable report_cv;
    bool finished = false;
    std::thread reporter([&] {
        std::unique_lock<std::mutex> lock(report_mutex);
        while (!report_cv.wait_for(lock, std::chrono::seconds(10), [&] { return finished; })) {
            std::printf("%s\n", queue.report().c_str());
            std::fflush(stdout);
        }
    });
    producer.join();
    for (auto& s : senders) s.join();
    {
        std::lock_guard<std::mutex> lock(report_mutex);
        finished = true;
    }
    report_cv.notify_all();
    reporter.join();
    std::printf("%s\n", queue.report().c_str());
    const double end = paced ? std::floor(wall_now()) + 1 : o.end;
    if (paced) sleep_until_wall(end);
    std::string tail;
    send_end_tick(o, end, tail);
    std::printf("%s\n", queue.totals(end).c_str());
    if (!paced) {
        std::ofstream file(o.reference);
        for (const std::string& n : notes) file << n;
        file << tail;
    }
    return 0;
}
