// console_pages.cpp — see console_pages.hpp.
#include "gateway/console/console_pages.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "core/json_read.hpp"
#include "core/utc_time.hpp"

namespace alerts::gateway {

namespace {

using json = nlohmann::json;

const char* const STYLE = R"(
body{font-family:system-ui,sans-serif;margin:0;color:#1d2530;background:#f6f7f9}
nav{background:#1d2530;padding:.6em 1em}nav a{color:#dfe6ee;margin-right:1.2em;text-decoration:none}
nav a.on{color:#fff;font-weight:600;border-bottom:2px solid #6cb4ff}
main{padding:1em 1.5em}h1{font-size:1.4em;margin:.2em 0 .6em}h2{font-size:1.1em;margin:1.2em 0 .4em}
h3{font-size:1em;margin:.8em 0 .3em;color:#445}
table{border-collapse:collapse;background:#fff;margin-bottom:.8em}
th,td{padding:.3em .7em;border-bottom:1px solid #e3e6ea;text-align:left;font-size:.92em}
th{background:#eef1f4}.muted{color:#778}.count{font-size:1.6em;font-weight:600}
.cards{display:flex;gap:1em;margin-bottom:1em}.card{background:#fff;padding:.6em 1em;border:1px solid #e3e6ea}
form.silence{background:#fff;padding:.8em;border:1px solid #e3e6ea;display:grid;
grid-template-columns:repeat(4,auto);gap:.4em .8em;align-items:center;max-width:60em}
#msg{color:#b00020;font-weight:600}.token{float:right;color:#dfe6ee}
.token input{width:14em}button{cursor:pointer}
)";

// The writes: the token typed in the page (kept for this tab only), sent as a bearer token.
const char* const SCRIPT = R"(
const tokenField = document.getElementById('token');
tokenField.value = sessionStorage.getItem('alertgw-token') || '';
tokenField.addEventListener('change', () => sessionStorage.setItem('alertgw-token', tokenField.value));
async function call(method, path, body) {
  sessionStorage.setItem('alertgw-token', tokenField.value);
  const r = await fetch(path, {method, headers: {'Content-Type': 'application/json',
    'Authorization': 'Bearer ' + tokenField.value}, body: body ? JSON.stringify(body) : undefined});
  let answer = {};
  try { answer = await r.json(); } catch (e) {}
  if (!r.ok) { document.getElementById('msg').textContent = answer.error || ('HTTP ' + r.status); return; }
  location.reload();
}
// Who acts: the name typed in the silence form, kept for this tab like the token.
const byField = document.getElementById('by');
if (byField) byField.value = sessionStorage.getItem('alertgw-by') || '';
function actor() { return (byField && byField.value) || sessionStorage.getItem('alertgw-by') || 'console'; }
function endSilence(id) { call('DELETE', '/api/v1/silences/' + id, {by: actor()}); }
function replay(id) { call('POST', '/api/v1/deadletters/' + id + '/replay'); }
// Ids reach the script as data attributes, never inside script text.
document.querySelectorAll('button.end').forEach(b => b.addEventListener('click', () => endSilence(b.dataset.id)));
document.querySelectorAll('button.replay').forEach(b => b.addEventListener('click', () => replay(b.dataset.id)));
function makeSilence(form) {
  const matchers = {};
  for (const k of ['account', 'device', 'bridge', 'site', 'region', 'notifType'])
    if (form[k].value) matchers[k] = form[k].value;
  sessionStorage.setItem('alertgw-by', form.by.value);
  const body = {matchers, comment: form.comment.value, createdBy: actor()};
  if (form.untilResolved.checked) body.untilResolved = true;
  else body.duration = Number(form.minutes.value) * 60;
  call('POST', '/api/v1/silences', body);
  return false;
}
)";

std::string when(double t) {
    if (!(t > 0) || !std::isfinite(t)) return "-";
    return utc_time(t, "%Y-%m-%d %H:%M:%S UTC");
}

std::string ago(double seconds) {
    if (!(seconds >= 0) || !std::isfinite(seconds)) return "-";
    const auto s = static_cast<long long>(seconds);
    char buf[48];
    if (s < 120) {
        std::snprintf(buf, sizeof buf, "%lld s", s);
    } else if (s < 7200) {
        std::snprintf(buf, sizeof buf, "%lld min", s / 60);
    } else if (s < 172800) {
        std::snprintf(buf, sizeof buf, "%lld h %lld min", s / 3600, s % 3600 / 60);
    } else {
        std::snprintf(buf, sizeof buf, "%lld days", s / 86400);
    }
    return buf;
}

std::string esc(const std::string& s) { return html_escape(s); }

std::string layout(const std::string& title, const std::string& active, const std::string& body) {
    std::string out = "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>" +
                      esc(title) + " — alertgw</title><style>" + STYLE +
                      "</style></head><body><nav>";
    for (const auto& [path, name] : std::vector<std::pair<std::string, std::string>>{
             {"/offline", "Offline now"},
             {"/flapping", "Flapping"},
             {"/silences", "Silences"},
             {"/deadletters", "Dead letters"},
             {"/notifications", "Recent notifications"},
             {"/delay", "Delivery delay"}}) {
        out += "<a href=\"";
        out += path;
        out += path == active ? "\" class=on>" : "\">";
        out += name;
        out += "</a>";
    }
    out += "<span class=token>token <input id=token type=password autocomplete=off></span>";
    out += "</nav><main><h1>" + esc(title) + "</h1><p id=msg></p>" + body + "</main>";
    out += std::string("<script>") + SCRIPT + "</script>";
    return out + "</body></html>\n";
}

std::string device_cell(const json& d) {
    const std::string name = json_text(d, "name");
    return "<td>" + esc(json_text(d, "device")) + "</td><td>" + esc(name) + "</td>";
}

// What a notification is about: its device, or "site ID" for a site's group of cameras
// (SiteOffline, SiteChanged, SiteOnline), which has no device.
std::string subject_of(const json& n) {
    std::string device = json_text(n, "device");
    if (!device.empty() || json_text(n, "site").empty()) return device;
    return "site " + json_text(n, "site");
}

// Its name: the camera's, or the site's for a site's group.
std::string name_of(const json& n) {
    const std::string name = json_text(n, "name");
    return name.empty() && json_text(n, "device").empty() ? json_text(n, "siteName") : name;
}

std::string explain_link(const json& d, const std::string& text) {
    return "<a href=\"/api/v1/explain?account=" + esc(json_text(d, "account")) +
           "&amp;device=" + esc(json_text(d, "device")) + "\">" + text + "</a>";
}

// One group of devices (offline, behind a bridge, held back) as a table per account and site.
std::string grouped(const json& list, double now, bool held) {
    std::map<std::string, std::map<std::string, std::vector<json>>> by;
    for (const json& d : list) {
        // The configured site; without one, the bridge stands for the place.
        const std::string site = json_text(d, "site");
        const std::string bridge = json_text(d, "bridge");
        by[json_text(d, "account")][!site.empty()     ? "site " + site
                                    : !bridge.empty() ? "behind bridge " + bridge
                                                      : "(no site)"]
            .push_back(d);
    }
    std::string out;
    for (const auto& [account, sites] : by) {
        for (const auto& [site, devices] : sites) {
            out += "<h3>account " + esc(account) + " · " + esc(site) + " · " +
                   std::to_string(devices.size()) + (devices.size() == 1 ? " camera" : " cameras") +
                   "</h3><table><tr><th>device</th><th>name</th><th>state</th><th>since</th>"
                   "<th>for</th>" +
                   (held ? "<th>held back by</th>" : "") + "<th></th></tr>";
            for (const json& d : devices) {
                const double since = json_number(d, "since");
                std::string by_rule = json_text(d, "heldBy");
                if (d.value("inhibited", false)) by_rule = "bridge " + json_text(d, "bridge");
                out += "<tr>" + device_cell(d) + "<td>" + esc(json_text(d, "state")) + "</td><td>" +
                       when(since) + "</td><td>" + ago(now - since) + "</td>" +
                       (held ? "<td>" + esc(by_rule) + "</td>" : "") + "<td>" +
                       explain_link(d, "why") + "</td></tr>";
            }
            out += "</table>";
        }
    }
    return out.empty() ? "<p class=muted>none</p>" : out;
}

}  // namespace

std::string html_escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string offline_page(const json& state, const std::string& account, double now) {
    const json groups = state.value("devices", json::object());
    const json counts = state.value("counts", json::object());
    std::string body = "<div class=cards>";
    for (const char* c : {"offline", "inhibited", "silenced", "pending", "flapping"}) {
        body += "<div class=card><div class=count id=count-" + std::string(c) + ">" +
                std::to_string(counts.value(c, 0)) + "</div>" + c + "</div>";
    }
    body += "</div><form method=get action=/offline>account <input name=account value=\"" +
            esc(account) + "\"> <button>filter</button></form>";
    body +=
        "<h2>Offline, announced</h2>" + grouped(groups.value("offline", json::array()), now, false);
    body += "<h2>Down behind a bridge that is down (its notification covers them)</h2>" +
            grouped(groups.value("inhibited", json::array()), now, true);
    body += "<h2>Held back by a silence or a maintenance window</h2>" +
            grouped(groups.value("silenced", json::array()), now, true);
    body += "<h2>Changed, hold still running</h2>" +
            grouped(groups.value("pending", json::array()), now, false);
    return layout(account.empty() ? "Offline now" : "Offline now: " + account, "/offline", body);
}

std::string flapping_page(const json& state, double now) {
    const json list = state.value("devices", json::object()).value("flapping", json::array());
    std::string body = "<p>" + std::to_string(list.size()) +
                       " flapping: no offline or online notification for them until they are "
                       "stable.</p><table><tr><th>account</th><th>device</th><th>name</th>"
                       "<th>state</th><th>last change</th><th></th></tr>";
    for (const json& d : list) {
        body += "<tr><td>" + esc(json_text(d, "account")) + "</td>" + device_cell(d) + "<td>" +
                esc(json_text(d, "state")) + "</td><td>" + ago(now - json_number(d, "since")) +
                " ago</td><td>" + explain_link(d, "why") + "</td></tr>";
    }
    return layout("Flapping", "/flapping", body + "</table>");
}

std::string silences_page(const json& silences, double now) {
    std::string body =
        "<h2>New silence</h2><form class=silence id=new-silence onsubmit=\"return "
        "makeSilence(this)\">"
        "<label>account <input name=account></label><label>device <input name=device></label>"
        "<label>bridge <input name=bridge></label><label>site <input name=site></label>"
        "<label>region <input name=region></label>"
        "<label>type <select name=notifType><option value=\"\">any</option>";
    // The types a silence can match (core/silence.cpp): a device's. A site's SiteOffline,
    // SiteChanged and SiteOnline are not among them: a silence acts on its cameras before
    // they are grouped (matchers account, site, device).
    for (const char* t : {"Offline", "InternetOffline", "Online", "StillOffline", "Alert",
                          "FlappingStarted", "FlappingStopped", "PossibleTamper"}) {
        body += std::string("<option>") + t + "</option>";
    }
    body +=
        "</select></label><label>minutes <input name=minutes type=number value=60 min=1></label>"
        "<label><input name=untilResolved type=checkbox> until resolved</label>"
        "<label>by <input name=by id=by></label>"
        "<label>comment <input name=comment></label><button id=create>silence</button></form>";
    body += "<h2>Silences</h2><table id=silences><tr><th>id</th><th>status</th><th>matchers</th>"
            "<th>starts</th><th>ends</th><th>by</th><th>comment</th><th></th></tr>";
    for (const json& s : silences.value("silences", json::array())) {
        std::string matchers;
        const json given =
            s.contains("matchers") && s["matchers"].is_object() ? s["matchers"] : json::object();
        for (const auto& [k, v] : given.items()) {
            matchers += (matchers.empty() ? "" : ", ") + k + "=" +
                        (v.is_string() ? v.get<std::string>()
                                       : v.dump(-1, ' ', false, json::error_handler_t::replace));
        }
        const std::string status = json_text(s, "status");
        const std::string ends =
            s.value("untilResolved", false) ? "until resolved" : when(json_number(s, "endsAt"));
        body += "<tr data-id=\"" + esc(json_text(s, "id")) + "\"><td>" + esc(json_text(s, "id")) +
                "</td><td>" + esc(status) +
                (s.contains("endedBy") ? " (" + esc(json_text(s, "endedBy")) + ")" : "") +
                "</td><td>" + esc(matchers) + "</td><td>" + when(json_number(s, "startsAt")) +
                "</td><td>" + ends + "</td><td>" + esc(json_text(s, "createdBy")) + "</td><td>" +
                esc(json_text(s, "comment")) + "</td><td>" +
                (status == "ended" ? std::string()
                                   : "<button class=end data-id=\"" + esc(json_text(s, "id")) +
                                         "\">end now</button>") +
                "</td></tr>";
    }
    (void)now;
    return layout("Silences", "/silences", body + "</table>");
}

std::string dead_letters_page(const json& dead_letters) {
    const json list = dead_letters.value("deadLetters", json::array());
    std::string body = "<p>" + std::to_string(dead_letters.value("total", 0)) +
                       " in all (the newest shown). Replay sends one back to the outbox for the "
                       "target that gave up, with its dedupKey.</p><table id=deadletters><tr>"
                       "<th>id</th><th>target</th><th>notification</th><th>device</th>"
                       "<th>dedupKey</th><th>attempts</th><th>last error</th><th></th></tr>";
    for (const json& d : list) {
        const json n = d.value("n", json::object());
        std::string target = json_text(d, "target");
        if (!json_text(d, "recipient").empty()) target += " (" + json_text(d, "recipient") + ")";
        body += "<tr data-id=\"" + esc(json_text(d, "id")) + "\"><td>" + esc(json_text(d, "id")) +
                "</td><td>" + esc(target) + "</td><td>" +
                esc(n.is_object() ? json_text(n, "notifType") : "") + "</td><td>" +
                esc(n.is_object() ? json_text(n, "account") + "/" + subject_of(n) : "") +
                "</td><td>" + esc(json_text(d, "key")) + "</td><td>" +
                esc(json_text(d, "attempts")) + "</td><td>" + esc(json_text(d, "error")) +
                "</td><td><button class=replay data-id=\"" + esc(json_text(d, "id")) +
                "\">replay</button></td></tr>";
    }
    return layout("Dead letters", "/deadletters", body + "</table>");
}

std::string notifications_page(const json& notifications, double now) {
    std::string body =
        "<table><tr><th>decided</th><th>type</th><th>account</th><th>device or site</th>"
        "<th>name</th><th>alertDelay</th><th>dedupKey</th><th>note</th></tr>";
    for (const json& e : notifications.value("notifications", json::array())) {
        const json n = e.value("n", json::object());
        if (!n.is_object()) continue;
        std::string note =
            json_text(e, "only").empty() ? "" : "replayed for " + json_text(e, "only");
        if (n.contains("camerasDown")) {  // a site's group: how many of its cameras are down
            std::string down = json_text(n, "camerasDown");
            if (!json_text(n, "cameras").empty()) down += " of " + json_text(n, "cameras");
            down += " cameras down";
            if (!note.empty()) down += "; " + note;
            note = std::move(down);
        }
        body += "<tr><td>" + when(json_number(n, "publishTs")) + "</td><td>" +
                esc(json_text(n, "notifType")) + "</td><td>" + esc(json_text(n, "account")) +
                "</td><td>" + esc(subject_of(n)) + "</td><td>" + esc(name_of(n)) + "</td><td>" +
                esc(json_text(n, "alertDelay")) + " s</td><td>" + esc(json_text(e, "key")) +
                "</td><td>" + esc(note) + "</td></tr>";
    }
    (void)now;
    return layout("Recent notifications", "/notifications", body + "</table>");
}

std::string delay_page(const std::vector<delay_timeline::point>& points, double now) {
    std::string body = "<p>This gateway's deliveries, minute by minute: alertDelay (from when "
                       "the notification was due to its delivery) p50, p99 and max, and "
                       "deliveryDelay (from the commit) p99.</p>";
    if (points.empty())
        return layout("Delivery delay", "/delay", body + "<p class=muted>no deliveries yet</p>");
    const double w = 900, h = 300, left = 60, bottom = 30;
    const double t0 = points.front().minute, t1 = std::max(points.back().minute, t0 + 60);
    double top = 0.001;
    for (const auto& p : points) top = std::max({top, p.alert_max, p.delivery_p99});
    // A log scale, whole decades: delays span milliseconds to minutes.
    const double lo = 0.001;
    top = std::pow(10, std::ceil(std::log10(top) + 1e-9));
    auto y = [&](double v) {
        const double f = std::log10(std::max(v, lo) / lo) / std::log10(std::max(top, lo * 10) / lo);
        return h - bottom - f * (h - bottom - 10);
    };
    auto x = [&](double t) { return left + (t - t0) / (t1 - t0) * (w - left - 10); };
    std::string svg = "<svg id=delay-plot xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                      std::to_string(int(w)) + "\" height=\"" + std::to_string(int(h)) +
                      "\" style=\"background:#fff;border:1px solid #e3e6ea\">";
    char buf[160];
    const int decades = static_cast<int>(std::lround(std::log10(top / lo)));
    for (int k = 0; k <= decades; ++k) {
        const double tick = lo * std::pow(10, k);
        std::snprintf(buf, sizeof buf,
                      "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" stroke=\"#eee\"/>"
                      "<text x=\"4\" y=\"%g\" font-size=\"11\">%gs</text>",
                      left, w - 10, y(tick), y(tick), y(tick) + 4, tick);
        svg += buf;
    }
    const std::vector<std::pair<std::string, double delay_timeline::point::*>> lines = {
        {"#1f77b4", &delay_timeline::point::alert_p50},
        {"#ff7f0e", &delay_timeline::point::alert_p99},
        {"#d62728", &delay_timeline::point::alert_max},
        {"#2ca02c", &delay_timeline::point::delivery_p99}};
    for (const auto& [color, field] : lines) {
        svg += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + color + "\" points=\"";
        for (const auto& p : points) {
            std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x(p.minute), y(p.*field));
            svg += buf;
        }
        svg += "\"/>";
        for (const auto& p : points) {  // a mark per minute: one minute alone is a point
            std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>",
                          x(p.minute), y(p.*field), color.c_str());
            svg += buf;
        }
    }
    svg += "<text x=\"" + std::to_string(int(left)) + "\" y=\"" + std::to_string(int(h - 8)) +
           "\" font-size=\"11\">" + when(t0) + "</text><text x=\"" + std::to_string(int(w - 170)) +
           "\" y=\"" + std::to_string(int(h - 8)) + "\" font-size=\"11\">" + when(t1) +
           "</text></svg>";
    body += svg +
            "<p><span style=\"color:#1f77b4\">■</span> alertDelay p50 "
            "<span style=\"color:#ff7f0e\">■</span> p99 <span style=\"color:#d62728\">■</span> max "
            "<span style=\"color:#2ca02c\">■</span> deliveryDelay p99</p>";
    body += "<table><tr><th>minute</th><th>delivered</th><th>alertDelay p50</th><th>p99</th>"
            "<th>max</th><th>deliveryDelay p99</th></tr>";
    for (auto it = points.rbegin(); it != points.rend(); ++it) {
        std::snprintf(buf, sizeof buf,
                      "<td>%.3f s</td><td>%.3f s</td><td>%.3f s</td><td>%.3f s</td>", it->alert_p50,
                      it->alert_p99, it->alert_max, it->delivery_p99);
        body += "<tr><td>" + when(it->minute) + "</td><td>" + std::to_string(it->count) + "</td>" +
                buf + "</tr>";
    }
    (void)now;
    return layout("Delivery delay", "/delay", body + "</table>");
}

}  // namespace alerts::gateway
