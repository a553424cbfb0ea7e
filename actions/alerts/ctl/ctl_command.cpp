// ctl_command.cpp — see ctl_command.hpp.
#include "ctl/ctl_command.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/json_read.hpp"
#include "core/utc_time.hpp"

namespace alerts::ctl {

namespace {

using json = nlohmann::json;

// Percent-encodes a query value.
std::string encoded(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        }
    }
    return out;
}

// The flags after a subcommand: --name value, --name=value, and the switches named in
// `switches`; the words that are no flag in order.
struct flags {
    std::map<std::string, std::string> values;
    std::set<std::string> on;
    std::vector<std::string> words;
};

flags read_flags(const std::vector<std::string>& args, std::size_t from,
                 const std::set<std::string>& with_value, const std::set<std::string>& switches) {
    flags f;
    for (std::size_t i = from; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.rfind("--", 0) != 0) {
            f.words.push_back(a);
            continue;
        }
        const auto eq = a.find('=');
        const std::string name = a.substr(0, eq);
        if (switches.count(name)) {
            if (eq != std::string::npos) throw usage_error(name + " takes no value");
            f.on.insert(name);
        } else if (with_value.count(name)) {
            if (eq != std::string::npos) {
                f.values[name] = a.substr(eq + 1);
            } else if (i + 1 < args.size()) {
                f.values[name] = args[++i];
            } else {
                throw usage_error(name + " needs a value");
            }
        } else {
            throw usage_error("unknown flag " + name + " (alertctl --help lists them)");
        }
    }
    return f;
}

// The request's body: an argument that is not UTF-8 text is refused (JSON cannot carry it).
std::string text_of(const json& body) {
    try {
        return body.dump();
    } catch (const json::type_error&) {
        throw usage_error("an argument is not UTF-8 text");
    }
}

std::string value_or(const flags& f, const std::string& name, const std::string& fallback = "") {
    const auto it = f.values.find(name);
    return it == f.values.end() ? fallback : it->second;
}

std::string when(double t) {
    if (!(t > 0) || !std::isfinite(t)) return "-";
    return utc_time(t, "%Y-%m-%d %H:%M:%SZ");
}

// Rows as columns padded to their widest cell.
std::string table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> width;
    for (const auto& row : rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], row[i].size());
        }
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
        }
        out += line + "\n";
    }
    return out;
}

std::string matchers_text(const json& m) {
    std::string out;
    for (const auto& [k, v] : m.items()) {
        if (!out.empty()) out += ",";
        out += k + "=" + (v.is_string() ? v.get<std::string>() : text_of(v));
    }
    return out;
}

ctl_request silence_command(const std::vector<std::string>& args, double now) {
    if (args.size() < 2) throw usage_error("silence needs add, list or expire");
    const std::string& what = args[1];
    if (what == "list") {
        const flags f = read_flags(args, 2, {}, {"--all"});
        return {"GET", "/api/v1/silences", "", false,
                f.on.count("--all") ? "silences-all" : "silences"};
    }
    if (what == "expire") {
        const flags f = read_flags(args, 2, {"--by"}, {});
        if (f.words.size() != 1) throw usage_error("silence expire needs one silence id");
        json body = json::object();
        if (f.values.count("--by")) body["by"] = f.values.at("--by");
        return {"DELETE", "/api/v1/silences/" + encoded(f.words[0]), text_of(body), true,
                "silence"};
    }
    if (what != "add") throw usage_error("silence needs add, list or expire, not '" + what + "'");
    const flags f = read_flags(args, 2,
                               {"--account", "--device", "--bridge", "--site", "--region", "--type",
                                "--duration", "--start", "--end", "--comment", "--by"},
                               {"--until-resolved"});
    if (!f.words.empty())
        throw usage_error("silence add takes flags only, not '" + f.words[0] + "'");
    json matchers = json::object();
    for (const auto& [flag, key] :
         std::vector<std::pair<std::string, std::string>>{{"--account", "account"},
                                                          {"--device", "device"},
                                                          {"--bridge", "bridge"},
                                                          {"--site", "site"},
                                                          {"--region", "region"},
                                                          {"--type", "notifType"}}) {
        if (f.values.count(flag)) matchers[key] = f.values.at(flag);
    }
    if (matchers.empty()) {
        throw usage_error("silence add needs a matcher: --account, --device, --bridge, --site, "
                          "--region or --type");
    }
    json body = {{"matchers", matchers}};
    if (f.values.count("--start")) body["startsAt"] = parse_time("--start", f.values.at("--start"));
    const int ends = int(f.values.count("--duration")) + int(f.values.count("--end")) +
                     int(f.on.count("--until-resolved"));
    if (ends != 1)
        throw usage_error("silence add needs one of --duration, --end, --until-resolved");
    if (f.values.count("--duration")) {
        body["duration"] = parse_duration("--duration", f.values.at("--duration"));
    }
    if (f.values.count("--end")) body["endsAt"] = parse_time("--end", f.values.at("--end"));
    if (f.on.count("--until-resolved")) body["untilResolved"] = true;
    if (f.values.count("--comment")) body["comment"] = f.values.at("--comment");
    body["createdBy"] = value_or(f, "--by", "alertctl");
    (void)now;
    return {"POST", "/api/v1/silences", text_of(body), true, "silence"};
}

std::vector<ctl_request> dead_letter_commands(const std::vector<std::string>& args) {
    if (args.size() < 2) throw usage_error("deadletters needs list, show, replay or purge");
    const std::string& what = args[1];
    if (what == "list") {
        const flags f = read_flags(args, 2, {"--count"}, {});
        std::string path = "/api/v1/deadletters";
        if (f.values.count("--count")) path += "?count=" + encoded(f.values.at("--count"));
        return {{"GET", path, "", false, "deadletters"}};
    }
    if (what == "purge") {
        const flags f = read_flags(args, 2, {}, {"--all"});
        if (f.on.count("--all")) {
            if (!f.words.empty()) throw usage_error("deadletters purge takes ids or --all");
            return {{"DELETE", "/api/v1/deadletters?all=1", "", true, "purged"}};
        }
        if (f.words.empty()) throw usage_error("deadletters purge needs ids or --all");
        std::vector<ctl_request> out;
        for (const std::string& id : f.words) {
            out.push_back({"DELETE", "/api/v1/deadletters/" + encoded(id), "", true, "purged"});
        }
        return out;
    }
    if (what == "show" || what == "replay") {
        const flags f = read_flags(args, 2, {}, {});
        if (f.words.empty()) throw usage_error("deadletters " + what + " needs ids");
        std::vector<ctl_request> out;
        for (const std::string& id : f.words) {
            if (what == "show") {
                out.push_back(
                    {"GET", "/api/v1/deadletters/" + encoded(id), "", false, "deadletter"});
            } else {
                out.push_back({"POST", "/api/v1/deadletters/" + encoded(id) + "/replay", "", true,
                               "replayed"});
            }
        }
        return out;
    }
    throw usage_error("deadletters needs list, show, replay or purge, not '" + what + "'");
}

}  // namespace

std::string usage() {
    return R"(usage: alertctl [--url URL] [--token-file PATH] [--json] COMMAND ...
The command-line client of alertgw's console (alertgw --console-port): silences, state,
explanations and dead letters of the alert pipeline.

  silence add MATCHERS (--duration D | --end TIME | --until-resolved)
              [--start TIME] [--comment TEXT] [--by NAME]
        MATCHERS: --account A --device D --bridge B --site S --region R --type NOTIFTYPE (one or more)
  silence list [--all]           active and pending silences (--all: ended ones too)
  silence expire ID [--by NAME]  end a silence now
  state [--account A]            devices offline, pending, flapping, silenced, behind a bridge
  explain --account A --device D [--from TIME] [--to TIME]
                                 what the rules held back for a device, and why
  deadletters list [--count N]   the newest dead letters
  deadletters show ID...
  deadletters replay ID...       back to the outbox, for the target that gave up
  deadletters purge ID... | --all

  --url URL          the console (default http://127.0.0.1:9095, or ALERTCTL_URL)
  --token-file PATH  the console's token, for writes (or ALERTCTL_TOKEN_FILE)
  --json             print the API's JSON answers as they are
D: seconds, or 90s, 30m, 2h, 1d. TIME: seconds since the epoch, or 2026-12-05T10:00Z.
Exit status: 0 done, 1 the console refused or could not be reached, 2 a bad command line.
)";
}

double parse_duration(const std::string& flag, const std::string& text) {
    if (text.empty()) throw usage_error(flag + " needs a duration");
    double unit = 1;
    std::string digits = text;
    switch (text.back()) {
        case 's':
            unit = 1;
            digits.pop_back();
            break;
        case 'm':
            unit = 60;
            digits.pop_back();
            break;
        case 'h':
            unit = 3600;
            digits.pop_back();
            break;
        case 'd':
            unit = 86400;
            digits.pop_back();
            break;
        default:
            break;
    }
    char* end = nullptr;
    const double v = std::strtod(digits.c_str(), &end);
    if (digits.empty() || end != digits.c_str() + digits.size() || !(v > 0) || !std::isfinite(v)) {
        throw usage_error(flag + ": '" + text + "' is no duration (90, 90s, 30m, 2h, 1d)");
    }
    return v * unit;
}

double parse_time(const std::string& flag, const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size() && v >= 0 && std::isfinite(v)) return v;
    std::tm tm{};
    const char* rest = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M", &tm);
    if (rest && *rest == ':') rest = ::strptime(rest, ":%S", &tm);
    if (!rest || std::string(rest) != "Z") {
        throw usage_error(flag + ": '" + text +
                          "' is no time (seconds since the epoch, or 2026-12-05T10:00Z)");
    }
    return static_cast<double>(::timegm(&tm));
}

ctl_invocation parse_command(const std::vector<std::string>& args, ctl_invocation base,
                             double now) {
    std::size_t i = 0;
    for (; i < args.size() && args[i].rfind("--", 0) == 0; ++i) {
        const std::string& a = args[i];
        const auto eq = a.find('=');
        const std::string name = a.substr(0, eq);
        auto value = [&]() -> std::string {
            if (eq != std::string::npos) return a.substr(eq + 1);
            if (i + 1 >= args.size()) throw usage_error(name + " needs a value");
            return args[++i];
        };
        if (name == "--url") {
            base.url = value();
        } else if (name == "--token-file") {
            base.token_file = value();
        } else if (name == "--json") {
            base.json = true;
        } else if (name == "--help") {
            throw usage_error("");
        } else {
            throw usage_error("unknown flag " + name + " (alertctl --help lists them)");
        }
    }
    if (base.url.rfind("http://", 0) != 0 && base.url.rfind("https://", 0) != 0) {
        throw usage_error("--url must be http://HOST:PORT or https://HOST:PORT");
    }
    while (!base.url.empty() && base.url.back() == '/') base.url.pop_back();
    const std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    if (rest.empty()) throw usage_error("no command (alertctl --help lists them)");
    const std::string& command = rest[0];
    if (command == "silence") {
        base.requests.push_back(silence_command(rest, now));
    } else if (command == "deadletters") {
        base.requests = dead_letter_commands(rest);
    } else if (command == "state") {
        const flags f = read_flags(rest, 1, {"--account"}, {});
        std::string path = "/api/v1/state";
        if (f.values.count("--account")) path += "?account=" + encoded(f.values.at("--account"));
        base.requests.push_back({"GET", path, "", false, "state"});
    } else if (command == "explain") {
        const flags f = read_flags(rest, 1, {"--account", "--device", "--from", "--to"}, {});
        if (!f.values.count("--account") || !f.values.count("--device")) {
            throw usage_error("explain needs --account and --device");
        }
        std::string path = "/api/v1/explain?account=" + encoded(f.values.at("--account")) +
                           "&device=" + encoded(f.values.at("--device"));
        char buf[40];
        for (const char* flag : {"--from", "--to"}) {
            if (!f.values.count(flag)) continue;
            std::snprintf(buf, sizeof buf, "%.3f", parse_time(flag, f.values.at(flag)));
            path += std::string("&") + (flag + 2) + "=" + buf;
        }
        base.requests.push_back({"GET", path, "", false, "explain"});
    } else {
        throw usage_error("unknown command '" + command + "' (alertctl --help lists them)");
    }
    return base;
}

std::string render(const std::string& view, const json& answer, double now) {
    if (view == "silences" || view == "silences-all") {
        std::vector<std::vector<std::string>> rows = {
            {"ID", "STATUS", "MATCHERS", "STARTS", "ENDS", "BY", "COMMENT"}};
        for (const json& s : answer.value("silences", json::array())) {
            if (view == "silences" && json_text(s, "status") == "ended") continue;
            const std::string ends =
                s.value("untilResolved", false) ? "until resolved" : when(json_number(s, "endsAt"));
            rows.push_back({json_text(s, "id"), json_text(s, "status"),
                            matchers_text(s.value("matchers", json::object())),
                            when(json_number(s, "startsAt")), ends, json_text(s, "createdBy"),
                            json_text(s, "comment")});
        }
        return table(rows);
    }
    if (view == "silence") {
        const json s = answer.value("silence", json::object());
        return "silence " + json_text(s, "id") + " " + json_text(s, "status") + " (" +
               matchers_text(s.value("matchers", json::object())) + ")\n";
    }
    if (view == "state") {
        std::string out;
        const json groups = answer.value("devices", json::object());
        for (const char* group : {"offline", "pending", "flapping", "silenced", "inhibited"}) {
            const json list = groups.value(group, json::array());
            out += std::string(group) + ": " + std::to_string(list.size()) + "\n";
            std::vector<std::vector<std::string>> rows;
            for (const json& d : list) {
                const double since = json_number(d, "since");
                std::string extra = json_text(d, "heldBy");
                if (extra.empty()) extra = json_text(d, "bridge");
                rows.push_back({"  " + json_text(d, "account"), json_text(d, "device"),
                                json_text(d, "name"), json_text(d, "state"), "since " + when(since),
                                std::to_string(static_cast<long long>(now - since)) + " s", extra});
            }
            out += table(rows);
        }
        return out;
    }
    if (view == "explain") {
        std::vector<std::vector<std::string>> rows = {
            {"DECIDED", "HELD BACK", "RULE", "BY", "WHY"}};
        for (const json& h : answer.value("heldBack", json::array())) {
            rows.push_back({when(json_number(h, "ts")), json_text(h, "notifType"),
                            json_text(h, "rule"), json_text(h, "by"), json_text(h, "detail")});
        }
        if (rows.size() == 1) {
            return "nothing held back for " + json_text(answer, "account") + "/" +
                   json_text(answer, "device") + " then\n";
        }
        return table(rows);
    }
    if (view == "deadletters") {
        std::vector<std::vector<std::string>> rows = {
            {"ID", "TARGET", "DEDUPKEY", "ATTEMPTS", "ERROR"}};
        for (const json& d : answer.value("deadLetters", json::array())) {
            std::string target = json_text(d, "target");
            if (!json_text(d, "recipient").empty())
                target += " (" + json_text(d, "recipient") + ")";
            rows.push_back({json_text(d, "id"), target, json_text(d, "key"),
                            json_text(d, "attempts"), json_text(d, "error")});
        }
        return table(rows) + std::to_string(answer.value("total", 0)) + " in all\n";
    }
    if (view == "deadletter") return answer.value("deadLetter", json::object()).dump(2) + "\n";
    if (view == "replayed") {
        return "replayed " + json_text(answer, "replayed") + " as outbox entry " +
               json_text(answer, "entry") + "\n";
    }
    if (view == "purged") return "purged " + json_text(answer, "purged") + "\n";
    return answer.dump(2) + "\n";
}

}  // namespace alerts::ctl
