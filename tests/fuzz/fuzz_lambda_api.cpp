// The local Runtime API (lambda_api/): its rules (broker.hpp) under any sequence of calls, and
// what it reads (requests.hpp) from any path and header. The input is read twice:
//   - as a program for a broker (Managed-Instances mode with N = 1..3 or classic, by the first
//     byte; each further byte an operation and its argument: a /next, an invoke, an answer
//     for a delivered, unknown or answered id, an error, an init error, an oversized body, a
//     client gone, the clock moving on). Checks: no reply is called twice; every /next and
//     every invoke is answered, still waiting, or gone; Managed-Instances mode parks at most N
//     and queues nothing; once the clock passes every deadline nothing is in flight.
//   - as a request target and an X-Amz-Client-Context header. Checks: an answer's id is a
//     non-empty path segment; a client context is refused or decodes to no control character.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "lambda_api/broker.hpp"
#include "lambda_api/requests.hpp"

namespace {

using namespace actionloop;
using namespace actionloop::lambda_api;

constexpr std::int64_t T0 = 1'800'000'000'000;
constexpr std::int64_t TIMEOUT_MS = 1000;

struct client {
    int calls = 0;
};

// The broker and what its clients got.
struct world {
    broker rules;
    std::deque<client> nexts;    // stable addresses: the replies point at them
    std::deque<client> invokes;  // likewise
    std::vector<broker::ticket> next_tickets;
    std::vector<broker::ticket> invoke_tickets;
    std::vector<std::string> ids;  // request ids handed out, in order
    std::int64_t now = T0;
    size_t answered_nexts = 0;
    size_t answered_invokes = 0;

    explicit world(broker_config c) : rules(std::move(c), 1) {}

    void next() {
        client& c = nexts.emplace_back();
        next_tickets.push_back(rules.next(
            [this, &c](answer a) {
                FUZZ_CHECK(++c.calls == 1);
                ++answered_nexts;
                for (const auto& [name, value] : a.headers) {
                    if (name == "Lambda-Runtime-Aws-Request-Id") ids.push_back(value);
                }
            },
            now));
    }

    void invoke() {
        client& c = invokes.emplace_back();
        invoke_request i;
        i.event = "{}";
        invoke_tickets.push_back(rules.invoke(
            i,
            [this, &c](const answer&) {
                FUZZ_CHECK(++c.calls == 1);
                ++answered_invokes;
            },
            now));
    }

    std::string id(unsigned arg) const {
        if (ids.empty() || arg == 0) return "no-such-id";
        return ids[arg % ids.size()];
    }

    void post(unsigned arg, bool error) {
        runtime_post p;
        p.request_id = id(arg);
        p.body = "{}";
        const int status = (error ? rules.fail(p, now) : rules.respond(p, now)).status;
        FUZZ_CHECK(status == 202 || status == 400 || status == 410);
    }

    void step(std::uint8_t byte) {
        const unsigned arg = byte / 9u;
        switch (byte % 9u) {
            case 0:
                next();
                break;
            case 1:
                invoke();
                break;
            case 2:
                post(arg, false);
                break;
            case 3:
                post(arg, true);
                break;
            case 4:
                FUZZ_CHECK(rules.init_error(arg % 2 ? "" : "{}", "Runtime.X").status == 202);
                break;
            case 5:
                FUZZ_CHECK(rules.too_large(arg % 2 ? id(arg) : "", now).status == 413);
                break;
            case 6:
                if (!next_tickets.empty()) rules.next_gone(next_tickets[arg % next_tickets.size()]);
                break;
            case 7:
                if (!invoke_tickets.empty()) {
                    rules.invoke_gone(invoke_tickets[arg % invoke_tickets.size()]);
                }
                break;
            default:
                now += static_cast<std::int64_t>(arg) * 40 - 200;  // the clock may step back
                rules.expire(now);
                break;
        }
    }

    void check(size_t max_concurrency) const {
        const api_stats s = rules.stats();
        FUZZ_CHECK(answered_nexts + s.parked + s.gone_next == nexts.size());
        FUZZ_CHECK(answered_invokes + s.queued + s.gone_invokes + s.in_flight == invokes.size());
        if (max_concurrency > 0) {
            FUZZ_CHECK(s.parked <= max_concurrency);
            FUZZ_CHECK(s.queued_peak == 0);
        }
    }
};

void run_program(const std::uint8_t* data, size_t size) {
    broker_config c;
    c.max_concurrency = data[0] % 4u;  // 0: classic
    c.max_queued = 4;
    c.max_parked = 4;
    c.kept_ids = 8;
    c.timeout_ms = TIMEOUT_MS;
    c.invocation_ids = (data[0] & 4u) != 0;
    world w(c);
    for (size_t i = 1; i < size; ++i) {
        w.step(data[i]);
        w.check(c.max_concurrency);
    }
    w.now += 1000 * TIMEOUT_MS;
    FUZZ_CHECK(!w.rules.expire(w.now).has_value());
    FUZZ_CHECK(w.rules.stats().in_flight == 0);
    w.check(c.max_concurrency);
}

void read_text(const std::string& text) {
    for (const char* method : {"GET", "POST"}) {
        const route r = route_of(method, text);
        if (r.to == endpoint::response || r.to == endpoint::error) {
            FUZZ_CHECK(!r.id.empty());
            FUZZ_CHECK(r.id.find('/') == std::string_view::npos);
        }
    }
    try {
        const invoke_request i = read_invoke({{"X-Amz-Client-Context", text}}, text);
        for (const char ch : i.client_context) {
            const auto c = static_cast<unsigned char>(ch);
            FUZZ_CHECK(c >= 0x20 || c == '\t');
            FUZZ_CHECK(c != 0x7f);
        }
    } catch (const std::invalid_argument&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    run_program(data, size);
    read_text(std::string(reinterpret_cast<const char*>(data), size));
    return 0;
}
