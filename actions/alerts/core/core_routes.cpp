// core_routes.cpp — the routing tree of docs/alerts.md, "Routing", applied to each notification
// as it is emitted: the receivers its fields (and its device's labels) reach, their e-mail
// addresses as its recipients and the webhook targets they name. The root's default receiver is
// the recipients as before (region, then device, then account) and every webhook, so a tree that
// sends everything to the root changes nothing. Only a config with a `route` gets here.
#include <algorithm>

#include "core/alert_core.hpp"

namespace alerts {

namespace {

// Appends the items of `from` that `to` does not hold yet.
void add_missing(std::vector<std::string>& to, const std::vector<std::string>& from) {
    for (const std::string& item : from) {
        if (std::find(to.begin(), to.end(), item) == to.end()) to.push_back(item);
    }
}

}  // namespace

// False when every route it reached is muted at its due time or does not send resolved ones:
// then it is not sent (counted as silenced, as a maintenance window's are).
bool alert_core::route(notification& n) {
    route_subject s;
    s.notif_type = name_of(n.type);
    if (n.has_resolves) {
        s.resolves_type = name_of(n.resolves.type);
        s.resolved = true;
    }
    if (n.region) {
        s.level = n.region->level;
        s.region = n.region->name;
    } else if (n.type == notif_type::possible_tamper) {
        s.level = "critical";
    }
    s.account = account_id(n.account);
    const device_config* cfg = nullptr;
    if (is_site_notif(n.type)) {
        if (n.site) s.site = n.site->id;
    } else {
        s.device = device_id(n.device);
        cfg = device_cfg(n.device);
        if (const site_config* site = cfg ? config_->site_of(*cfg) : nullptr) s.site = site->id;
        if (cfg && !cfg->labels.empty()) s.labels = &cfg->labels;
    }
    s.t = n.due_ts;
    std::vector<std::uint32_t> reached;
    if (!config_->routes.route(s, reached)) {
        ++result_.stats.silenced;
        if (options_.explain && !is_site_notif(n.type)) {
            explain(n.device, n.type, "route", n.event_ts, {},
                    "every route it reaches is muted now, or does not send resolved ones");
        }
        return false;
    }
    const std::vector<receiver_config>& receivers = config_->routes.receivers();
    std::vector<std::string>& names = result_.lists.emplace_back();
    std::vector<std::string>& emails = result_.lists.emplace_back();
    std::vector<std::string>& hooks = result_.lists.emplace_back();
    bool every_hook = false;
    for (std::uint32_t r : reached) {
        if (r == route_tree::DEFAULT_RECEIVER) {
            names.emplace_back("default");
            add_missing(emails, *n.recipients);
            every_hook = true;
            continue;
        }
        names.push_back(receivers[r].name);
        add_missing(emails, receivers[r].email);
        add_missing(hooks, receivers[r].webhooks);
    }
    n.receivers = &names;
    n.recipients = &emails;
    n.webhooks = every_hook ? nullptr : &hooks;
    return true;
}

}  // namespace alerts
