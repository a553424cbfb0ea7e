// console_pages.hpp — the console's pages for people (actions/alerts/README.md, "Operating the
// pipeline"): plain server-rendered HTML over the API's own JSON answers, and one small script
// for the writes (ending and making silences, replaying dead letters), which sends the token a
// person typed into the page's token field as a bearer token. No front-end build step. Pure:
// JSON in, HTML out; every value from the data is HTML-escaped.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/report/delay_timeline.hpp"

namespace alerts::gateway {

/// `text` with &, <, >, " and ' escaped.
std::string html_escape(const std::string& text);

/// Offline now (/api/v1/state's answer), grouped by account and site (a camera's bridge), with
/// what is held back and why; `account` the filter shown ("": all).
std::string offline_page(const nlohmann::json& state, const std::string& account, double now);
/// The flapping devices.
std::string flapping_page(const nlohmann::json& state, double now);
/// The silences (/api/v1/silences), with a form to make one and a button to end each.
std::string silences_page(const nlohmann::json& silences, double now);
/// The dead letters (/api/v1/deadletters), each with a replay button.
std::string dead_letters_page(const nlohmann::json& dead_letters);
/// The newest notifications (/api/v1/notifications).
std::string notifications_page(const nlohmann::json& notifications, double now);
/// Delivery delay over time, minute by minute, as an SVG plot and a table.
std::string delay_page(const std::vector<delay_timeline::point>& points, double now);

}  // namespace alerts::gateway
