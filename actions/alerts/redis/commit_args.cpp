// commit_args.cpp — see commit_args.hpp.
#include "redis/commit_args.hpp"

#include <limits>

#include "redis/redis_records.hpp"
#include "redis/resp_write.hpp"

namespace alerts {

namespace {

void resp_number(std::string& out, std::size_t n) { resp_arg(out, std::to_string(n)); }

// A due time as the script takes it: the shortest exact text, "" for none (infinity).
void resp_due(std::string& out, double due, std::string& text) {
    text.clear();
    if (due < std::numeric_limits<double>::infinity()) append_redis_number(text, due);
    resp_arg(out, text);
}

void append_keys(std::string& out, const commit_settings& s, const commit_contents& c) {
    resp_arg(out, s.due_key);
    resp_arg(out, s.devices_key);
    resp_arg(out, s.log_key);
    resp_arg(out, s.outbox_key);
    for (const commit_write& w : c.writes) resp_device_key(out, s.prefix, w.account, w.device);
    for (const commit_check& k : c.checks) resp_device_key(out, s.prefix, k.account, k.device);
    for (std::uint64_t id : c.ids) resp_id_key(out, s.prefix, id);
}

void append_values(std::string& out, const commit_contents& c) {
    std::string text;
    for (const commit_write& w : c.writes) {
        resp_arg(out, w.as_read);
        resp_arg(out, w.record);
        resp_due(out, w.due, text);
    }
    for (const commit_check& k : c.checks) {
        resp_arg(out, k.as_read);
        resp_due(out, k.due, text);
    }
    for (const commit_note& n : c.notes) {
        resp_arg(out, n.key);
        resp_arg(out, n.json);
    }
}

}  // namespace

void commit_contents::clear() {
    writes.clear();
    checks.clear();
    ids.clear();
    notes.clear();
    extras.clear();
}

std::size_t append_commit_args(std::string& out, const commit_settings& settings,
                               const commit_contents& contents) {
    const std::size_t n = contents.writes.size();
    const std::size_t c = contents.checks.size();
    const std::size_t m = contents.notes.size();
    const std::size_t numkeys = 4 + n + c + contents.ids.size();
    resp_number(out, numkeys);
    append_keys(out, settings, contents);
    resp_number(out, n);
    resp_arg(out, std::to_string(settings.id_ttl));
    resp_arg(out, std::to_string(settings.log_length));
    resp_number(out, m);
    resp_number(out, settings.outbox_maxlen);
    resp_number(out, settings.outbox_trim_above);
    resp_number(out, c);
    append_values(out, contents);
    const std::size_t x = contents.extras.size();
    if (x == 0) return 1 + numkeys + 7 + 3 * n + 2 * c + 2 * m;
    resp_number(out, x);
    resp_arg(out, settings.now_key);
    resp_arg(out, std::to_string(settings.history_length));
    resp_arg(out, std::to_string(settings.history_ttl));
    for (const commit_extra& e : contents.extras) {
        resp_arg(out, std::string_view(&e.op, 1));
        resp_arg(out, e.key);
        resp_arg(out, e.value);
    }
    return 1 + numkeys + 7 + 3 * n + 2 * c + 2 * m + 4 + 3 * x;
}

}  // namespace alerts
