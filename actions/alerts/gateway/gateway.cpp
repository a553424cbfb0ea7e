// gateway.cpp — alertgw's loop (see gateway.hpp). One thread drives everything: Redis (one
// hiredis connection, pipelined) and the deliveries (libcurl multi: every target's transfers
// in flight at once, up to --concurrency each). /metrics is served by the proxy's scrape
// server on a thread of its own, from prometheus-cpp's thread-safe counters.
//
// An entry's life: read (XREADGROUP ">", or claimed with XAUTOCLAIM from a gateway that went
// quiet, or this consumer's own pending entries at start) → one delivery per target, retried
// with backoff → each target's outcome written to the hash <prefix>gw:<id> when the entry
// cannot be acknowledged at once (a webhook still retrying keeps the e-mail's "delivered")
// → XACK (and DEL of the hash) once every target is final. A target that gives up writes the
// entry to <prefix>deadletter first, in the same pipeline.
#include <curl/curl.h>
#include <signal.h>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <unordered_map>

#include "../core/log_text.hpp"
#include "../redis/redis_client.hpp"
#include "email_message.hpp"
#include "gateway.hpp"
#include "ops/metrics_server.hpp"

namespace alerts::gateway {

namespace {

using clock = std::chrono::steady_clock;
using json = nlohmann::json;
using ms = std::chrono::milliseconds;

const char* const GROUP = "alertgw";
const char* const EMAIL = "email";
constexpr auto REDIS_TIMEOUT = std::chrono::seconds(5);
constexpr int BLOCK_MS = 100;  // the longest XREADGROUP wait (SIGTERM is seen within it)

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

double wall_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}
std::int64_t wall_ms() {
    return std::chrono::duration_cast<ms>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string fixed3(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

// key=value as the actions print it: the one writer, core/log_text (control characters
// escaped, so no outbox field can start a log line of its own).
void kv(std::string& line, std::string_view key, std::string_view value) {
    alerts::append_log_field(line, key, value);
}

void log_out(const std::string& line) {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
}

std::string text(const redisReply* r) {
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)
               ? std::string(r->str, r->len)
               : std::string();
}

enum class status { pending, running, waiting, delivered, dead, skipped };

const char* status_name(status s) {
    switch (s) {
        case status::delivered:
            return "delivered";
        case status::dead:
            return "dead";
        case status::skipped:
            return "skipped";
        default:
            return "pending";
    }
}

bool final_status(status s) {
    return s == status::delivered || s == status::dead || s == status::skipped;
}

struct target_state {
    status st = status::pending;
    int attempts = 0;
    std::string error;
    bool persisted = false;      // its final status is in the progress hash
    bool dead_lettered = false;  // its dead-letter entry is written
};

struct entry {
    std::string id;
    std::int64_t commit_ms = 0;
    std::string key;
    std::string text;  // the notification, compact JSON, as the outbox holds it
    json n;
    std::vector<std::string> recipients;
    std::vector<target_state> t;
    bool has_hash = false;  // a progress hash may exist (written, or found at a claim)
    bool dirty = false;     // in the flush list
    std::vector<std::string> delivered_to;
};

struct metric_set {
    prometheus::Counter* delivered;
    prometheus::Counter* failed;
    prometheus::Counter* retried;
    prometheus::Counter* dead;
    prometheus::Counter* skipped;
    prometheus::Histogram* delay;
};

struct target {
    bool email = false;
    std::string name;  // "email" or the webhook's URL: the progress field and metric label
    std::string url;
    int running = 0;
    std::deque<std::string> ready;
    metric_set m{};
};

struct transfer {
    CURL* easy = nullptr;
    std::string entry_id;
    std::size_t target = 0;
    std::string body;
    std::size_t offset = 0;
    curl_slist* headers = nullptr;
    curl_slist* rcpt = nullptr;
    char errbuf[CURL_ERROR_SIZE] = {};
};

std::size_t discard(char*, std::size_t size, std::size_t n, void*) { return size * n; }

std::size_t read_body(char* buf, std::size_t size, std::size_t n, void* p) {
    auto* t = static_cast<transfer*>(p);
    const std::size_t len = std::min(size * n, t->body.size() - t->offset);
    std::copy_n(t->body.data() + t->offset, len, buf);
    t->offset += len;
    return len;
}

double number_or(const json& n, const char* key, double fallback) {
    const auto it = n.find(key);
    return it != n.end() && it->is_number() ? it->get<double>() : fallback;
}

bool plain_address(const std::string& a) {
    if (a.empty() || a.size() > 320 || a.find('@') == std::string::npos) return false;
    for (unsigned char c : a) {
        if (c <= 0x20 || c == 0x7f || c == '<' || c == '>' || c == ',') return false;
    }
    return true;
}

class gateway {
public:
    explicit gateway(const options& o)
        : opt_(o),
          redis_(o.redis, std::chrono::duration_cast<ms>(REDIS_TIMEOUT)),
          outbox_(o.prefix + "outbox"),
          deadletter_(o.prefix + "deadletter"),
          registry_(std::make_shared<prometheus::Registry>()) {
        multi_ = curl_multi_init();
        if (!multi_) throw std::runtime_error("cannot start libcurl");
        curl_multi_setopt(
            multi_, CURLMOPT_MAXCONNECTS,
            static_cast<long>(o.concurrency) * static_cast<long>(1 + o.webhooks.size()));
        build_targets();
    }
    ~gateway() {
        for (auto& [easy, t] : transfers_) {
            curl_multi_remove_handle(multi_, easy);
            free_transfer(*t);
        }
        for (CURL* e : idle_) curl_easy_cleanup(e);
        curl_multi_cleanup(multi_);
    }
    gateway(const gateway&) = delete;
    gateway& operator=(const gateway&) = delete;

    std::string render_metrics() const {
        return prometheus::TextSerializer().Serialize(registry_->Collect());
    }

    int run();

private:
    void build_targets();
    // Redis
    void create_group();
    void read_new(int block_ms);
    void read_own_pending();
    void claim();
    void refresh_idle();
    void update_lag();
    void flush();
    void take(const redisReply* entries, bool claimed);
    void load_progress(const std::vector<std::string>& ids);
    // deliveries
    void schedule(entry& e);
    void start_ready();
    void start(entry& e, std::size_t ti);
    void finished(CURL* easy, CURLcode code);
    void settle(entry& e, std::size_t ti, status st, const std::string& error);
    void mark(entry& e) {
        if (!e.dirty) {
            e.dirty = true;
            dirty_.push_back(e.id);
        }
    }
    void free_transfer(transfer& t) {
        if (t.headers) curl_slist_free_all(t.headers);
        if (t.rcpt) curl_slist_free_all(t.rcpt);
        t.headers = t.rcpt = nullptr;
    }
    void redis_failed(const std::exception& e);
    bool redis_ok() const { return clock::now() >= redis_retry_at_; }
    int running_total() const { return static_cast<int>(transfers_.size()); }
    ms backoff(int attempts) const {
        double d = static_cast<double>(opt_.backoff_first.count());
        for (int i = 1; i < attempts; ++i) d *= 2;
        return ms(
            static_cast<long long>(std::min(d, static_cast<double>(opt_.backoff_max.count()))));
    }

    const options& opt_;
    redis_client redis_;
    std::string outbox_;
    std::string deadletter_;
    std::shared_ptr<prometheus::Registry> registry_;
    CURLM* multi_ = nullptr;
    std::vector<target> targets_;
    std::unordered_map<std::string, entry> entries_;
    std::unordered_map<CURL*, std::unique_ptr<transfer>> transfers_;
    std::vector<CURL*> idle_;
    std::multimap<clock::time_point, std::pair<std::string, std::size_t>> timers_;
    std::vector<std::string> dirty_;
    std::vector<std::string> to_ack_;  // entries with nothing to deliver (deleted, poison)
    struct unreadable {
        std::string id, key, error, text;
    };
    std::vector<unreadable> unreadable_;  // to the dead-letter stream, then acknowledged
    bool stopping_ = false;
    clock::time_point redis_retry_at_{};
    clock::time_point last_redis_log_{};
    clock::time_point next_claim_{}, next_refresh_{}, next_lag_{};
    // metrics not per target
    prometheus::Gauge* lag_ = nullptr;
    prometheus::Gauge* pending_ = nullptr;
    prometheus::Gauge* in_flight_ = nullptr;
    prometheus::Gauge* held_ = nullptr;
    prometheus::Counter* read_ = nullptr;
    prometheus::Counter* claimed_ = nullptr;
    prometheus::Counter* acked_ = nullptr;
    prometheus::Counter* poison_ = nullptr;
    prometheus::Counter* redis_errors_ = nullptr;
};

void gateway::build_targets() {
    auto& delivered = prometheus::BuildCounter()
                          .Name("alertgw_delivered_total")
                          .Help("Notifications a target accepted (webhook 2xx, SMTP 250)")
                          .Register(*registry_);
    auto& failed = prometheus::BuildCounter()
                       .Name("alertgw_failed_total")
                       .Help("Delivery attempts that failed (error, time-out, refusal)")
                       .Register(*registry_);
    auto& retried = prometheus::BuildCounter()
                        .Name("alertgw_retried_total")
                        .Help("Failed attempts scheduled again after a backoff")
                        .Register(*registry_);
    auto& dead = prometheus::BuildCounter()
                     .Name("alertgw_dead_lettered_total")
                     .Help("Notifications a target gave up on, written to <prefix>deadletter")
                     .Register(*registry_);
    auto& skipped =
        prometheus::BuildCounter()
            .Name("alertgw_skipped_total")
            .Help("Notifications with nothing to send to a target (e-mail: no recipients)")
            .Register(*registry_);
    auto& delay =
        prometheus::BuildHistogram()
            .Name("alertgw_delivery_delay_seconds")
            .Help("From the outbox commit (the entry id's time) to the target's acceptance")
            .Register(*registry_);
    const prometheus::Histogram::BucketBoundaries bounds = {
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600};
    auto add = [&](bool email, const std::string& url) {
        target t;
        t.email = email;
        t.url = url;
        t.name = email ? EMAIL : redact_url(url);  // a password in the URL is never printed
        const prometheus::Labels l = {{"target", t.name}};
        t.m = {&delivered.Add(l), &failed.Add(l),  &retried.Add(l),
               &dead.Add(l),      &skipped.Add(l), &delay.Add(l, bounds)};
        targets_.push_back(std::move(t));
    };
    if (!opt_.smtp.empty()) add(true, opt_.smtp);
    for (const std::string& w : opt_.webhooks) add(false, w);

    auto gauge = [&](const char* name, const char* help) {
        return &prometheus::BuildGauge().Name(name).Help(help).Register(*registry_).Add({});
    };
    auto counter = [&](const char* name, const char* help) {
        return &prometheus::BuildCounter().Name(name).Help(help).Register(*registry_).Add({});
    };
    lag_ = gauge("alertgw_outbox_lag",
                 "Outbox entries not yet read by the consumer group alertgw (XINFO GROUPS lag)");
    pending_ = gauge("alertgw_outbox_pending",
                     "Outbox entries read by some gateway and not yet acknowledged");
    in_flight_ = gauge("alertgw_in_flight", "Deliveries in flight in this gateway");
    held_ = gauge("alertgw_entries_held", "Outbox entries this gateway holds (read, not acked)");
    read_ = counter("alertgw_read_total", "Outbox entries read (new)");
    claimed_ = counter("alertgw_claimed_total",
                       "Outbox entries claimed from a gateway that stopped (XAUTOCLAIM)");
    acked_ = counter("alertgw_acked_total", "Outbox entries acknowledged");
    poison_ = counter("alertgw_unreadable_total",
                      "Outbox entries that hold no readable notification (dead-lettered)");
    redis_errors_ = counter("alertgw_redis_errors_total", "Redis commands that failed");
}

void gateway::redis_failed(const std::exception& e) {
    redis_errors_->Increment();
    // With sentinels, the next command asks them again where the primary is (a READONLY or
    // LOADING answer keeps the connection otherwise).
    if (!redis_.url().sentinels.empty()) redis_.disconnect();
    redis_retry_at_ = clock::now() + ms(500);
    if (clock::now() - last_redis_log_ > std::chrono::seconds(5)) {
        last_redis_log_ = clock::now();
        std::string line;
        kv(line, "level", "error");
        kv(line, "event", "redisError");
        kv(line, "error", e.what());
        std::fprintf(stderr, "%s\n", line.c_str());
    }
}

void gateway::create_group() {
    redis_.append({"XGROUP", "CREATE", outbox_, GROUP, "0", "MKSTREAM"});
    redis_reply r = redis_.reply_or_error();
    if (r->type == REDIS_REPLY_ERROR && std::strncmp(r->str, "BUSYGROUP", 9) != 0) {
        throw redis_error("XGROUP CREATE " + outbox_ + ": " + std::string(r->str, r->len));
    }
}

void gateway::take(const redisReply* list, bool claimed) {
    if (!list || list->type != REDIS_REPLY_ARRAY) return;
    std::vector<std::string> need_progress;
    std::vector<std::string> added;
    for (std::size_t i = 0; i < list->elements; ++i) {
        const redisReply* item = list->element[i];
        if (!item || item->type != REDIS_REPLY_ARRAY || item->elements < 1) continue;
        std::string id = text(item->element[0]);
        if (id.empty() || entries_.count(id)) continue;
        const redisReply* fields = item->elements > 1 ? item->element[1] : nullptr;
        if (!fields || fields->type != REDIS_REPLY_ARRAY) {  // trimmed away meanwhile
            to_ack_.push_back(id);
            continue;
        }
        entry e;
        e.id = id;
        e.commit_ms = std::strtoll(id.c_str(), nullptr, 10);
        for (std::size_t f = 0; f + 1 < fields->elements; f += 2) {
            const std::string name = text(fields->element[f]);
            if (name == "key") e.key = text(fields->element[f + 1]);
            if (name == "n") e.text = text(fields->element[f + 1]);
        }
        std::string problem;
        try {
            e.n = json::parse(e.text);
            if (!e.n.is_object()) problem = "the notification is not a JSON object";
        } catch (const std::exception& ex) {
            problem = std::string("the notification is not JSON: ") + ex.what();
        }
        if (problem.empty() && e.key.empty()) problem = "no dedup key";
        if (problem.empty()) {
            for (unsigned char c : e.key) {
                if (c < 0x20 || c == 0x7f) problem = "the dedup key holds control characters";
            }
        }
        if (!problem.empty()) {
            poison_->Increment();
            std::string line;
            kv(line, "level", "error");
            kv(line, "event", "deadLetter");
            kv(line, "target", "all");
            kv(line, "entry", id);
            kv(line, "dedupKey", e.key);
            kv(line, "error", problem);
            log_out(line);
            // Written by the next flush, before its XACK (no I/O here: a failure in the middle
            // of a reply's entries would leave some held and never scheduled).
            unreadable_.push_back({id, e.key, problem, e.text});
            continue;
        }
        if (const auto it = e.n.find("recipients"); it != e.n.end() && it->is_array()) {
            for (const auto& r : *it) {
                if (r.is_string()) e.recipients.push_back(r.get<std::string>());
            }
        }
        e.t.resize(targets_.size());
        if (claimed) {
            claimed_->Increment();
            need_progress.push_back(id);
        } else {
            read_->Increment();
        }
        added.push_back(id);
        entries_.emplace(id, std::move(e));
    }
    // A claimed entry may have progress (a target that already has it is not sent again).
    // Redis failing here: the claimed entries are let go (still pending: claimed again later).
    if (!need_progress.empty()) {
        try {
            load_progress(need_progress);
        } catch (...) {
            for (const std::string& id : need_progress) entries_.erase(id);
            throw;
        }
    }
    for (const std::string& id : added) {
        if (auto it = entries_.find(id); it != entries_.end()) schedule(it->second);
    }
    held_->Set(static_cast<double>(entries_.size()));
}

void gateway::load_progress(const std::vector<std::string>& ids) {
    for (const std::string& id : ids) redis_.append({"HGETALL", opt_.prefix + "gw:" + id});
    auto replies = redis_.replies(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        auto it = entries_.find(ids[i]);
        if (it == entries_.end()) continue;
        entry& e = it->second;
        const redisReply* r = replies[i].get();
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements == 0) continue;
        e.has_hash = true;
        for (std::size_t f = 0; f + 1 < r->elements; f += 2) {
            const std::string name = text(r->element[f]);
            const std::string value = text(r->element[f + 1]);
            for (std::size_t ti = 0; ti < targets_.size(); ++ti) {
                if (targets_[ti].name != name) continue;
                target_state& ts = e.t[ti];
                ts.persisted = true;
                ts.dead_lettered = true;
                ts.st = value == "delivered" ? status::delivered
                        : value == "dead"    ? status::dead
                                             : status::skipped;
            }
        }
    }
}

// Puts each target that is not final in its ready queue (or settles it at once: an e-mail
// without recipients).
void gateway::schedule(entry& e) {
    for (std::size_t ti = 0; ti < targets_.size(); ++ti) {
        target_state& ts = e.t[ti];
        if (ts.st != status::pending) continue;
        if (targets_[ti].email) {
            if (e.recipients.empty()) {
                settle(e, ti, status::skipped, "no recipients");
                continue;
            }
            std::string bad;
            for (const std::string& r : e.recipients) {
                if (!plain_address(r)) bad = r;
            }
            if (!bad.empty()) {
                ts.attempts = 0;
                settle(e, ti, status::dead, "not an e-mail address: '" + bad + "'");
                continue;
            }
        }
        targets_[ti].ready.push_back(e.id);
    }
    mark(e);  // an entry settled at once (all skipped) is acknowledged by the next flush
}

void gateway::start_ready() {
    for (std::size_t ti = 0; ti < targets_.size(); ++ti) {
        target& t = targets_[ti];
        while (t.running < opt_.concurrency && !t.ready.empty()) {
            const std::string id = std::move(t.ready.front());
            t.ready.pop_front();
            auto it = entries_.find(id);
            if (it == entries_.end() || it->second.t[ti].st != status::pending) continue;
            start(it->second, ti);
        }
    }
    in_flight_->Set(running_total());
}

void gateway::start(entry& e, std::size_t ti) {
    target& t = targets_[ti];
    CURL* easy = nullptr;
    if (!idle_.empty()) {
        easy = idle_.back();
        idle_.pop_back();
        curl_easy_reset(easy);
    } else {
        easy = curl_easy_init();
    }
    auto tr = std::make_unique<transfer>();
    tr->easy = easy;
    tr->entry_id = e.id;
    tr->target = ti;
    const long timeout = static_cast<long>(opt_.timeout.count());
    curl_easy_setopt(easy, CURLOPT_URL, t.url.c_str());
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, tr->errbuf);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, tr.get());
    if (t.email) {
        tr->body = email_text(e.n, e.key, opt_.from, wall_seconds());
        const std::string from = "<" + opt_.from + ">";
        curl_easy_setopt(easy, CURLOPT_MAIL_FROM, from.c_str());
        for (const std::string& r : e.recipients) {
            tr->rcpt = curl_slist_append(tr->rcpt, ("<" + r + ">").c_str());
        }
        curl_easy_setopt(easy, CURLOPT_MAIL_RCPT, tr->rcpt);
        curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(easy, CURLOPT_READFUNCTION, read_body);
        curl_easy_setopt(easy, CURLOPT_READDATA, tr.get());
        curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(tr->body.size()));
    } else {
        tr->body = e.text;
        tr->headers = curl_slist_append(tr->headers, "Content-Type: application/json");
        tr->headers = curl_slist_append(tr->headers, ("Idempotency-Key: " + e.key).c_str());
        tr->headers = curl_slist_append(tr->headers, "Expect:");
        tr->headers = curl_slist_append(tr->headers, "User-Agent: alertgw");
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, tr->headers);
        curl_easy_setopt(easy, CURLOPT_POST, 1L);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, tr->body.data());
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(tr->body.size()));
    }
    e.t[ti].st = status::running;
    ++e.t[ti].attempts;
    ++t.running;
    curl_multi_add_handle(multi_, easy);
    transfers_.emplace(easy, std::move(tr));
}

// A retry or dead-letter line: which target, which entry, how many attempts, why.
std::string delivery_event(std::string_view level, std::string_view event, std::string_view target,
                           const entry& e, std::string_view attempts_key, int attempts,
                           const std::string& error) {
    std::string line;
    kv(line, "level", level);
    kv(line, "event", event);
    kv(line, "target", target);
    kv(line, "entry", e.id);
    kv(line, "dedupKey", e.key);
    kv(line, attempts_key, std::to_string(attempts));
    kv(line, "error", error);
    return line;
}

void gateway::finished(CURL* easy, CURLcode code) {
    auto node = transfers_.extract(easy);
    curl_multi_remove_handle(multi_, easy);
    std::unique_ptr<transfer> tr = std::move(node.mapped());
    target& t = targets_[tr->target];
    --t.running;
    long response = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response);
    bool ok = false;
    bool permanent = false;
    std::string error;
    if (t.email) {
        ok = code == CURLE_OK;
        if (!ok) {
            error = std::string(curl_easy_strerror(code));
            if (tr->errbuf[0]) error += ": " + std::string(tr->errbuf);
            if (response) error += " (SMTP " + std::to_string(response) + ")";
            permanent = response >= 500 && response < 600;
        }
    } else if (code != CURLE_OK) {
        error = std::string(curl_easy_strerror(code));
        if (tr->errbuf[0]) error += ": " + std::string(tr->errbuf);
    } else if (response >= 200 && response < 300) {
        ok = true;
    } else {
        error = "HTTP " + std::to_string(response);
        permanent = response >= 400 && response < 500 && response != 408 && response != 425 &&
                    response != 429;
    }
    free_transfer(*tr);
    idle_.push_back(easy);
    in_flight_->Set(running_total());

    auto it = entries_.find(tr->entry_id);
    if (it == entries_.end()) return;
    entry& e = it->second;
    target_state& ts = e.t[tr->target];
    if (ok) {
        settle(e, tr->target, status::delivered, "");
        return;
    }
    t.m.failed->Increment();
    if (permanent || ts.attempts >= opt_.max_attempts) {
        settle(e, tr->target, status::dead, error);
        return;
    }
    t.m.retried->Increment();
    ts.st = status::waiting;
    ts.error = error;
    log_out(delivery_event("warning", "retry", t.name, e, "attempt", ts.attempts, error));
    timers_.emplace(clock::now() + backoff(ts.attempts), std::make_pair(e.id, tr->target));
}

void gateway::settle(entry& e, std::size_t ti, status st, const std::string& error) {
    target& t = targets_[ti];
    target_state& ts = e.t[ti];
    ts.st = st;
    ts.error = error;
    if (st == status::delivered) {
        t.m.delivered->Increment();
        t.m.delay->Observe(static_cast<double>(wall_ms() - e.commit_ms) / 1000.0);
        e.delivered_to.push_back(t.name);
    } else if (st == status::skipped) {
        t.m.skipped->Increment();
    } else if (st == status::dead) {
        t.m.dead->Increment();
        log_out(delivery_event("error", "deadLetter", t.name, e, "attempts", ts.attempts, error));
    }
    mark(e);
    if (!std::all_of(e.t.begin(), e.t.end(),
                     [](const target_state& s) { return final_status(s.st); })) {
        return;
    }
    if (e.delivered_to.empty()) return;
    // Every target is final and at least one has it: the seed's line, at the publisher.
    // alertDelay as the actions define it (from when the notification was due: eventTs for
    // motion, eventTs + hold for a state), carried on to this moment: the action's value
    // (publishTs − due) plus the time since publishTs.
    const double now = wall_seconds();
    const double event_ts = number_or(e.n, "eventTs", 0.0);
    const double publish_ts = number_or(e.n, "publishTs", event_ts);
    const double alert_delay =
        number_or(e.n, "alertDelay", publish_ts - event_ts) + now - publish_ts;
    std::string line;
    const std::string type = e.n.contains("notifType") && e.n["notifType"].is_string()
                                 ? e.n["notifType"].get<std::string>()
                                 : std::string();
    const std::string account = e.n.contains("account") && e.n["account"].is_string()
                                    ? e.n["account"].get<std::string>()
                                    : std::string();
    const std::string device = e.n.contains("device") && e.n["device"].is_string()
                                   ? e.n["device"].get<std::string>()
                                   : std::string();
    kv(line, "notifType", type);
    kv(line, "alertDelay", fixed3(alert_delay));
    kv(line, "deliveryDelay", fixed3(static_cast<double>(wall_ms() - e.commit_ms) / 1000.0));
    kv(line, "account", account);
    kv(line, "device", device);
    if (e.n.contains("region") && e.n["region"].is_string()) {
        kv(line, "region", e.n["region"].get<std::string>());
    }
    if (e.n.contains("level") && e.n["level"].is_string()) {
        kv(line, "level", e.n["level"].get<std::string>());
    }
    kv(line, "eventTs", fixed3(event_ts));
    kv(line, "publishTs", fixed3(publish_ts));
    std::string rcpt;
    for (const std::string& r : e.recipients) rcpt += (rcpt.empty() ? "" : ",") + r;
    kv(line, "recipients", rcpt);
    kv(line, "dedupKey", e.key);
    kv(line, "entry", e.id);
    std::string to;
    for (const std::string& d : e.delivered_to) to += (to.empty() ? "" : ",") + d;
    kv(line, "deliveredTo", to);
    log_out(line);
    if (alert_delay > opt_.alert_delay_threshold) {
        std::string warn;
        kv(warn, "level", "warning");
        kv(warn, "systemAlert", "alertDelayOverThreshold");
        kv(warn, "notifType", type);
        kv(warn, "alertDelay", fixed3(alert_delay));
        kv(warn, "threshold", fixed3(opt_.alert_delay_threshold));
        kv(warn, "account", account);
        kv(warn, "device", device);
        kv(warn, "dedupKey", e.key);
        log_out(warn);
    }
}

// One round trip: dead letters and progress of what changed, XACK (and DEL of the progress
// hash) of what is complete.
void gateway::flush() {
    if (dirty_.empty() && to_ack_.empty() && unreadable_.empty()) return;
    std::size_t queued = 0;
    std::vector<std::string> complete;
    for (const std::string& id : dirty_) {
        auto it = entries_.find(id);
        if (it == entries_.end()) continue;
        entry& e = it->second;
        const bool all_final = std::all_of(
            e.t.begin(), e.t.end(), [](const target_state& s) { return final_status(s.st); });
        const std::string hash = opt_.prefix + "gw:" + e.id;
        bool wrote_hash = false;
        for (std::size_t ti = 0; ti < targets_.size(); ++ti) {
            target_state& ts = e.t[ti];
            if (!final_status(ts.st)) continue;
            if (ts.st == status::dead && !ts.dead_lettered) {
                redis_.append({"XADD", deadletter_, "*", "entry", e.id, "key", e.key, "target",
                               targets_[ti].name, "error", ts.error, "attempts",
                               std::to_string(ts.attempts), "n", e.text});
                ++queued;
            }
            // Progress only matters while the entry stays pending; a complete one is acked.
            if (!all_final && !ts.persisted) {
                redis_.append({"HSET", hash, targets_[ti].name, status_name(ts.st)});
                ++queued;
                wrote_hash = true;
            }
        }
        if (wrote_hash) {
            redis_.append({"EXPIRE", hash, "604800"});
            ++queued;
        }
        if (all_final) {
            redis_.append({"XACK", outbox_, GROUP, e.id});
            ++queued;
            if (e.has_hash || wrote_hash) {
                redis_.append({"DEL", hash});
                ++queued;
            }
            complete.push_back(e.id);
        }
    }
    for (const unreadable& u : unreadable_) {
        redis_.append({"XADD", deadletter_, "*", "entry", u.id, "key", u.key, "target", "all",
                       "error", u.error, "attempts", "0", "n", u.text});
        redis_.append({"XACK", outbox_, GROUP, u.id});
        queued += 2;
    }
    for (const std::string& id : to_ack_) {
        redis_.append({"XACK", outbox_, GROUP, id});
        ++queued;
    }
    redis_.replies(queued);  // throws on failure: everything stays dirty for the next try
    for (const std::string& id : dirty_) {
        auto it = entries_.find(id);
        if (it == entries_.end()) continue;
        entry& e = it->second;
        e.dirty = false;
        for (target_state& ts : e.t) {
            if (final_status(ts.st)) {
                ts.persisted = true;
                ts.dead_lettered = true;
                e.has_hash = true;
            }
        }
    }
    acked_->Increment(static_cast<double>(complete.size() + to_ack_.size() + unreadable_.size()));
    unreadable_.clear();
    for (const std::string& id : complete) entries_.erase(id);
    dirty_.clear();
    to_ack_.clear();
    held_->Set(static_cast<double>(entries_.size()));
}

void gateway::read_new(int block_ms) {
    const int room = std::min(opt_.batch, opt_.max_entries - static_cast<int>(entries_.size()));
    if (room <= 0) return;
    const std::string count = std::to_string(room);
    if (block_ms > 0) {
        const std::string block = std::to_string(block_ms);
        redis_.append({"XREADGROUP", "GROUP", GROUP, opt_.consumer, "COUNT", count, "BLOCK", block,
                       "STREAMS", outbox_, ">"});
    } else {
        redis_.append(
            {"XREADGROUP", "GROUP", GROUP, opt_.consumer, "COUNT", count, "STREAMS", outbox_, ">"});
    }
    redis_reply r = redis_.reply_or_error();
    if (r->type == REDIS_REPLY_ERROR) {
        const std::string err(r->str, r->len);
        if (err.rfind("NOGROUP", 0) == 0) {  // the stream or group was deleted: create again
            create_group();
            return;
        }
        throw redis_error("XREADGROUP: " + err);
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) return;
    const redisReply* stream = r->element[0];
    if (stream && stream->type == REDIS_REPLY_ARRAY && stream->elements == 2) {
        take(stream->element[1], false);
    }
}

void gateway::read_own_pending() {
    // Entries this consumer name read before a restart and never acked.
    std::string from = "0";
    for (;;) {
        redis_.append({"XREADGROUP", "GROUP", GROUP, opt_.consumer, "COUNT", "256", "STREAMS",
                       outbox_, from});
        redis_reply r = redis_.reply();
        if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) return;
        const redisReply* stream = r->element[0];
        if (!stream || stream->type != REDIS_REPLY_ARRAY || stream->elements != 2) return;
        const redisReply* list = stream->element[1];
        if (!list || list->type != REDIS_REPLY_ARRAY || list->elements == 0) return;
        const redisReply* last = list->element[list->elements - 1];
        from = text(last->element[0]);
        take(list, true);
        if (static_cast<int>(entries_.size()) >= opt_.max_entries) return;
    }
}

void gateway::claim() {
    const std::string idle = std::to_string(opt_.claim_after.count());
    std::string cursor = "0-0";
    for (int round = 0; round < 8; ++round) {
        const int room = std::min(100, opt_.max_entries - static_cast<int>(entries_.size()));
        if (room <= 0) return;
        redis_.append({"XAUTOCLAIM", outbox_, GROUP, opt_.consumer, idle, cursor, "COUNT",
                       std::to_string(room)});
        redis_reply r = redis_.reply();
        if (r->type != REDIS_REPLY_ARRAY || r->elements < 2) return;
        cursor = text(r->element[0]);
        take(r->element[1], true);
        if (r->elements > 2 && r->element[2]->type == REDIS_REPLY_ARRAY) {
            // Pending ids whose entries were trimmed away: nothing to deliver, nothing to ack
            // (XAUTOCLAIM removed them from the pending list).
        }
        if (cursor == "0-0" || cursor.empty()) return;
    }
}

// Keeps the entries this gateway holds (in backoff, or queued) from looking abandoned: their
// idle time restarts, so no other gateway claims them while this one is alive.
void gateway::refresh_idle() {
    if (entries_.empty()) return;
    std::vector<std::string> args = {"XCLAIM", outbox_, GROUP, opt_.consumer, "0"};
    for (const auto& [id, e] : entries_) args.push_back(id);
    args.push_back("JUSTID");
    std::vector<std::string_view> views(args.begin(), args.end());
    redis_.append(views);
    redis_.reply();
}

void gateway::update_lag() {
    redis_.append({"XINFO", "GROUPS", outbox_});
    redis_reply r = redis_.reply_or_error();
    if (r->type != REDIS_REPLY_ARRAY) return;
    for (std::size_t i = 0; i < r->elements; ++i) {
        const redisReply* g = r->element[i];
        if (!g || g->type != REDIS_REPLY_ARRAY) continue;
        bool ours = false;
        double lag = -1, pending = -1;
        for (std::size_t f = 0; f + 1 < g->elements; f += 2) {
            const std::string name = text(g->element[f]);
            const redisReply* v = g->element[f + 1];
            if (name == "name") ours = text(v) == GROUP;
            if (name == "lag" && v && v->type == REDIS_REPLY_INTEGER) {
                lag = static_cast<double>(v->integer);
            }
            if (name == "pending" && v && v->type == REDIS_REPLY_INTEGER) {
                pending = static_cast<double>(v->integer);
            }
        }
        if (!ours) continue;
        if (lag >= 0) lag_->Set(lag);
        if (pending >= 0) pending_->Set(pending);
    }
}

int gateway::run() {
    {
        std::string line;
        kv(line, "event", "start");
        kv(line, "consumer", opt_.consumer);
        kv(line, "outbox", outbox_);
        std::string names;
        for (const target& t : targets_) names += (names.empty() ? "" : ",") + t.name;
        kv(line, "targets", names);
        std::fprintf(stderr, "%s\n", line.c_str());
    }
    // Start-up: the group (from the stream's start) and this consumer's own pending entries;
    // Redis not there yet is waited for (until SIGTERM).
    for (;;) {
        if (g_stop.load()) return 0;
        try {
            create_group();
            read_own_pending();
            break;
        } catch (const redis_error& e) {
            redis_failed(e);
            std::this_thread::sleep_for(ms(200));
        }
    }
    const ms claim_every = std::clamp(opt_.claim_after / 4, ms(100), ms(5000));
    const ms refresh_every = std::clamp(opt_.claim_after / 3, ms(100), ms(10000));
    for (;;) {
        const auto now = clock::now();
        if (g_stop.load() && !stopping_) {
            stopping_ = true;
            std::string line;
            kv(line, "event", "stopping");
            kv(line, "inFlight", std::to_string(running_total()));
            std::fprintf(stderr, "%s\n", line.c_str());
        }
        if (!stopping_) {
            while (!timers_.empty() && timers_.begin()->first <= now) {
                auto [id, ti] = timers_.begin()->second;
                timers_.erase(timers_.begin());
                auto it = entries_.find(id);
                if (it == entries_.end() || it->second.t[ti].st != status::waiting) continue;
                it->second.t[ti].st = status::pending;
                targets_[ti].ready.push_back(id);
            }
            start_ready();
        }
        int still = 0;
        curl_multi_perform(multi_, &still);
        int left = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
            if (msg->msg == CURLMSG_DONE) finished(msg->easy_handle, msg->data.result);
        }
        if (stopping_ && running_total() == 0) break;

        bool got_work = false;
        if (redis_ok()) {
            try {
                flush();
                if (!stopping_) {
                    if (now >= next_claim_) {
                        next_claim_ = now + claim_every;
                        claim();
                    }
                    if (now >= next_refresh_) {
                        next_refresh_ = now + refresh_every;
                        refresh_idle();
                    }
                    if (now >= next_lag_) {
                        next_lag_ = now + ms(1000);
                        update_lag();
                    }
                    const std::size_t before = entries_.size();
                    bool idle = running_total() == 0;
                    for (const target& t : targets_) idle = idle && t.ready.empty();
                    int block = 0;
                    if (idle) {
                        block = BLOCK_MS;
                        if (!timers_.empty()) {
                            const auto until = std::chrono::duration_cast<ms>(
                                timers_.begin()->first - clock::now());
                            block =
                                static_cast<int>(std::clamp<long long>(until.count(), 0, BLOCK_MS));
                        }
                    }
                    if (idle && block == 0) {
                        // a retry is due now: read without waiting
                    }
                    read_new(block);
                    got_work = entries_.size() != before;
                }
            } catch (const redis_error& e) {
                redis_failed(e);
            }
        }
        if (got_work) continue;
        if (running_total() > 0) {
            curl_multi_poll(multi_, nullptr, 0, 5, nullptr);
        } else if (!redis_ok() || stopping_) {
            std::this_thread::sleep_for(ms(20));
        }
    }
    // Everything in flight has ended: write what it came to. Redis gone now leaves the
    // entries pending (another gateway, or this one restarted, delivers them).
    // At most a few seconds: a Redis that does not answer must not hold the exit for long.
    const auto give_up = clock::now() + std::chrono::seconds(3);
    while ((!dirty_.empty() || !to_ack_.empty() || !unreadable_.empty()) &&
           clock::now() < give_up) {
        try {
            flush();
        } catch (const redis_error& e) {
            redis_failed(e);
            std::this_thread::sleep_for(ms(100));
        }
    }
    std::string line;
    kv(line, "event", "stopped");
    kv(line, "unacknowledged", std::to_string(entries_.size()));
    std::fprintf(stderr, "%s\n", line.c_str());
    return 0;
}

}  // namespace

int run(const options& opt) {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    std::setvbuf(stdout, nullptr, _IOLBF, 1 << 16);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        throw std::runtime_error("cannot initialise libcurl");
    }
    int code = 0;
    {
        gateway gw(opt);
        boost::asio::io_context io;
        std::thread metrics;
        if (opt.metrics_port > 0) {
            actionloop::start_metrics_server(io, "0.0.0.0", opt.metrics_port,
                                             [&gw] { return gw.render_metrics(); });
            metrics = std::thread([&io] { io.run(); });
        }
        code = gw.run();
        io.stop();
        if (metrics.joinable()) metrics.join();
    }
    curl_global_cleanup();
    return code;
}

}  // namespace alerts::gateway
