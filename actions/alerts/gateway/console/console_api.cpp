// console_api.cpp — see console_api.hpp.
#include "gateway/console/console_api.hpp"

#include <cstdlib>

namespace alerts::gateway {

namespace {

using json = nlohmann::json;
using actionloop::http_request;
using actionloop::http_response;

constexpr const char* JSON_TYPE = "application/json";
constexpr std::size_t MAX_COUNT = 1000;

/// A request the API refuses before touching anything (status, message).
struct bad_request {
    int status;
    std::string message;
};

http_response answer(int status, const json& body) {
    http_response r;
    r.status = status;
    r.content_type = JSON_TYPE;
    // Text from Redis (a dead letter's error, an id) may hold any bytes: replaced, not thrown.
    r.body = body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    return r;
}

std::vector<std::string> segments(const std::string& path) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < path.size()) {
        std::size_t end = path.find('/', at);
        if (end == std::string::npos) end = path.size();
        if (end > at) out.push_back(actionloop::percent_decode(path.substr(at, end - at)));
        at = end + 1;
    }
    return out;
}

std::size_t count_of(const http_request& request, std::size_t fallback) {
    const std::string text = actionloop::query_value(request.query, "count");
    if (text.empty()) return fallback;
    if (text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(text) == 0 || std::stoul(text) > MAX_COUNT) {
        throw bad_request{400,
                          "count must be a whole number from 1 to " + std::to_string(MAX_COUNT)};
    }
    return std::stoul(text);
}

// A stream id as Redis writes them (ms-seq): anything else is no dead letter.
void check_stream_id(const std::string& id) {
    const auto dash = id.find('-');
    if (id.empty() || id.size() > 41 || dash == std::string::npos || dash == 0 ||
        dash + 1 == id.size() || id.find_first_not_of("0123456789-") != std::string::npos ||
        id.find('-', dash + 1) != std::string::npos) {
        throw bad_request{404, "no dead letter " + id};
    }
}

std::string new_silence_id() { return random_hex(16); }

double time_of(const http_request& request, const char* key, double fallback) {
    const std::string text = actionloop::query_value(request.query, key);
    if (text.empty()) return fallback;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !(v >= 0 && v <= 1e11)) {
        throw bad_request{400, std::string(key) + " must be seconds since the epoch"};
    }
    return v;
}

// The notable devices sorted into what an operator asks: offline (announced down), pending,
// flapping, silenced (a silence or a maintenance window), waiting on a bridge; with counts.
json state_view(const std::vector<json>& devices) {
    json groups = {{"offline", json::array()},
                   {"pending", json::array()},
                   {"flapping", json::array()},
                   {"silenced", json::array()},
                   {"inhibited", json::array()}};
    for (const json& d : devices) {
        if (d.value("flapping", false)) {
            groups["flapping"].push_back(d);
        } else if (d.value("silenced", false)) {
            groups["silenced"].push_back(d);
        } else if (d.value("inhibited", false)) {
            groups["inhibited"].push_back(d);
        } else if (d.value("announced", "online") != "online") {
            groups["offline"].push_back(d);
        }
        if (d.value("pending", false) && !d.value("silenced", false) &&
            !d.value("inhibited", false)) {
            groups["pending"].push_back(d);
        }
    }
    json counts = json::object();
    for (const auto& [name, list] : groups.items()) counts[name] = list.size();
    return {{"counts", std::move(counts)}, {"devices", std::move(groups)}};
}

json silence_view(const silence& s, double now) {
    json j = silence_json(s);
    j["status"] = silence_status(s, now);
    return j;
}

}  // namespace

std::string silence_status(const silence& s, double now) {
    if (s.expired_at > 0 || now >= s.end()) return "ended";
    return now < s.starts_at ? "pending" : "active";
}

console_api::console_api(console_store& store, std::string token, std::function<double()> clock)
    : store_(store), token_(std::move(token)), clock_(std::move(clock)) {}

http_response console_api::handle(const http_request& request) {
    try {
        return route(request);
    } catch (const bad_request& refusal) {
        http_response r = answer(refusal.status, {{"error", refusal.message}});
        if (refusal.status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer");
        return r;
    } catch (const console_refusal& refusal) {
        return answer(refusal.status, {{"error", refusal.what()}});
    } catch (const silence_error& error) {
        return answer(400, {{"error", error.what()}});
    } catch (const redis_error& error) {
        return answer(503, {{"error", error.what()}});
    } catch (const json::exception& error) {
        return answer(400, {{"error", std::string("the body is not JSON: ") + error.what()}});
    }
}

void console_api::require_writer(const http_request& request) const {
    if (token_.empty()) {
        throw bad_request{403, "writes are off: alertgw runs without --console-token-file"};
    }
    // Compared in constant time: how long the answer takes says nothing of the token.
    const std::string want = "Bearer " + token_;
    unsigned char differ = request.authorization.size() == want.size() ? 0 : 1;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const char got = i < request.authorization.size() ? request.authorization[i] : 0;
        differ |= static_cast<unsigned char>(got ^ want[i]);
    }
    if (differ != 0) {
        throw bad_request{401, "this needs the console's token: Authorization: Bearer TOKEN"};
    }
}

http_response console_api::route(const http_request& request) {
    const std::vector<std::string> s = segments(request.path);  // "api", "v1", ...
    const std::string& m = request.method;
    const bool read = m == "GET" || m == "HEAD";
    if (!read) require_writer(request);
    const double now = clock_();
    if (s.size() >= 3 && s[2] == "silences") {
        if (s.size() == 3 && read) {
            json list = json::array();
            for (const silence& x : store_.silences()) list.push_back(silence_view(x, now));
            return answer(200, {{"silences", std::move(list)}});
        }
        if (s.size() == 3 && m == "POST") {
            const json body = json::parse(request.body);
            silence x = parse_silence_request(body, now, new_silence_id());
            if (x.created_by.empty()) x.created_by = "api";
            store_.add_silence(x);
            return answer(201, {{"silence", silence_view(x, now)}});
        }
        if (s.size() == 4 && m == "DELETE") {
            const json body = request.body.empty() ? json::object() : json::parse(request.body);
            const std::string who =
                body.is_object() && body.contains("by") && body["by"].is_string()
                    ? body["by"].get<std::string>().substr(0, SILENCE_MAX_TEXT)
                    : "";
            return answer(200,
                          {{"silence", silence_view(store_.expire_silence(s[3], who, now), now)}});
        }
    } else if (s.size() >= 3 && s[2] == "deadletters") {
        if (s.size() == 3 && read) {
            return answer(200, {{"deadLetters", store_.dead_letters(count_of(request, 100))},
                                {"total", store_.dead_letter_count()}});
        }
        if (s.size() == 3 && m == "DELETE") {
            if (actionloop::query_value(request.query, "all") != "1") {
                throw bad_request{400, "purging every dead letter needs ?all=1"};
            }
            return answer(200, {{"purged", store_.purge_all()}});
        }
        if (s.size() >= 4) check_stream_id(s[3]);
        if (s.size() == 4 && read) {
            auto letter = store_.dead_letter(s[3]);
            if (!letter) throw bad_request{404, "no dead letter " + s[3]};
            return answer(200, {{"deadLetter", *letter}});
        }
        if (s.size() == 5 && s[4] == "replay" && m == "POST") {
            return answer(200, {{"replayed", s[3]}, {"entry", store_.replay(s[3])}});
        }
        if (s.size() == 4 && m == "DELETE") {
            if (!store_.purge(s[3])) throw bad_request{404, "no dead letter " + s[3]};
            return answer(200, {{"purged", 1}});
        }
    } else if (s.size() == 3 && s[2] == "state" && read) {
        return answer(
            200, state_view(store_.devices_now(actionloop::query_value(request.query, "account"))));
    } else if (s.size() == 3 && s[2] == "explain" && read) {
        const std::string account = actionloop::query_value(request.query, "account");
        const std::string device = actionloop::query_value(request.query, "device");
        if (account.empty() || device.empty()) {
            throw bad_request{400, "explain needs account and device"};
        }
        const double from = time_of(request, "from", 0);
        const double to = time_of(request, "to", 1e11);
        return answer(200, {{"account", account},
                            {"device", device},
                            {"from", from},
                            {"to", to},
                            {"heldBack", store_.explanations(account, device, from, to)}});
    } else if (s.size() == 3 && s[2] == "notifications" && read) {
        return answer(200, {{"notifications", store_.recent(count_of(request, 50))}});
    }
    throw bad_request{404, "no such endpoint: " + m + " " + request.path};
}

}  // namespace alerts::gateway
