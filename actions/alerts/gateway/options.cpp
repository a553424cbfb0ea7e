// options.cpp — alertgw's flags, environment and secret files (see options.hpp).
#include "gateway/options.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>

#include "cli/gnu_options.hpp"

#include "gateway/ledger/email_address.hpp"
#include "runtime/secret_file.hpp"

namespace alerts::gateway {

namespace {

double number(const std::string& flag, const std::string& text, double min, double max) {
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || !std::isfinite(value) || value < min ||
        value > max) {
        throw std::invalid_argument(flag + ": '" + text + "' is not a number from " +
                                    std::to_string(min) + " to " + std::to_string(max));
    }
    return value;
}

int integer(const std::string& flag, const std::string& text, int min, int max) {
    const double value = number(flag, text, min, max);
    if (value != std::floor(value))
        throw std::invalid_argument(flag + ": '" + text + "' is not a whole number");
    return static_cast<int>(value);
}

std::chrono::milliseconds seconds(const std::string& flag, const std::string& text, double min,
                                  double max) {
    return std::chrono::milliseconds(std::llround(number(flag, text, min, max) * 1000));
}

void check_url(const std::string& flag, const std::string& url,
               std::initializer_list<const char*> schemes) {
    for (const char* scheme : schemes) {
        if (url.rfind(scheme, 0) == 0 && url.size() > std::string(scheme).size()) return;
    }
    std::string list;
    for (const char* scheme : schemes) list += (list.empty() ? "" : ", ") + std::string(scheme);
    // The value is not repeated: it may hold a token.
    throw std::invalid_argument(flag + ": not a URL starting with " + list);
}

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

/// A secret from the variable NAME or the file NAME_FILE names (not both); empty if neither.
std::string secret_from_environment(const std::string& name) {
    const std::string file_variable = name + "_FILE";
    const std::string value = env(name.c_str());
    const std::string file = env(file_variable.c_str());
    if (!value.empty() && !file.empty()) {
        throw std::invalid_argument("set " + name + " or " + file_variable + ", not both");
    }
    return file.empty() ? value : read_secret_file(file_variable, file);
}

/// NAME=VALUE (the name first, as --webhook and --webhook-auth-file take it).
std::pair<std::string, std::string> named(const std::string& flag, const std::string& text) {
    const auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0)
        throw std::invalid_argument(flag + ": expected NAME=VALUE");
    return {text.substr(0, equals), text.substr(equals + 1)};
}

webhook_target parse_webhook(const std::string& text) {
    webhook_target target;
    const auto scheme = text.find("://");
    const bool plain = scheme != std::string::npos && scheme < text.find('=');
    if (plain) {
        target.url = text;
    } else {
        std::tie(target.name, target.url) = named("--webhook", text);
    }
    check_url("--webhook", target.url, {"http://", "https://"});
    if (target.name.empty()) target.name = webhook_name(target.url);
    if (target.name == "email" || target.name == "all" ||
        target.name.find_first_of("\r\n\t ") != std::string::npos) {
        throw std::invalid_argument("--webhook: '" + target.name + "' cannot name a webhook");
    }
    return target;
}

using flag_handler = std::function<void(options&, const std::string&)>;

/// The flags of the targets: where to deliver, and how to log in.
void add_target_flags(std::map<std::string, flag_handler>& flags) {
    flags.insert({
        {"--smtp",
         [](options& settings, const std::string& value) {
             check_url("--smtp", value, {"smtp://", "smtps://"});
             settings.smtp.url = value;
         }},
        {"--smtp-user",
         [](options& settings, const std::string& value) { settings.smtp.user = value; }},
        {"--smtp-password-file",
         [](options& settings, const std::string& value) {
             settings.smtp.password = read_secret_file("--smtp-password-file", value);
         }},
        {"--smtp-ca-file",
         [](options& settings, const std::string& value) { settings.smtp.ca_file = value; }},
        {"--from",
         [](options& settings, const std::string& value) {
             if (!is_email_address(value))
                 throw std::invalid_argument("--from: '" + value + "' is not an e-mail address");
             settings.from = value;
         }},
        {"--webhook",
         [](options& settings, const std::string& value) {
             settings.webhooks.push_back(parse_webhook(value));
         }},
        {"--webhook-url-file",
         [](options& settings, const std::string& value) {
             const auto [name, path] = named("--webhook-url-file", value);
             settings.webhooks.push_back(
                 parse_webhook(name + "=" + read_secret_file("--webhook-url-file", path)));
         }},
        {"--webhook-auth-file",
         [](options& settings, const std::string& value) {
             const auto [name, path] = named("--webhook-auth-file", value);
             for (webhook_target& target : settings.webhooks) {
                 if (target.name == name) {
                     target.authorization = read_secret_file("--webhook-auth-file", path);
                     return;
                 }
             }
             throw std::invalid_argument("--webhook-auth-file: no webhook named '" + name +
                                         "' (give --webhook first)");
         }},
    });
}

/// Every flag that takes a value.
const std::map<std::string, flag_handler>& value_flags() {
    static const std::map<std::string, flag_handler> FLAGS = [] {
        std::map<std::string, flag_handler> flags = {
            {"--consumer",
             [](options& settings, const std::string& value) {
                 if (value.empty()) throw std::invalid_argument("--consumer: empty name");
                 settings.consumer = value;
             }},
            {"--metrics-address",
             [](options& settings, const std::string& value) { settings.metrics_address = value; }},
            {"--console-address",
             [](options& settings, const std::string& value) { settings.console_address = value; }},
            {"--console-port",
             [](options& settings, const std::string& value) {
                 settings.console_port = integer("--console-port", value, 1, 65535);
             }},
            {"--console-token-file",
             [](options& settings, const std::string& value) {
                 settings.console_token = read_secret_file("--console-token-file", value);
                 if (settings.console_token.size() < 16 ||
                     settings.console_token.find_first_of(" \t\r\n") != std::string::npos) {
                     throw std::invalid_argument("--console-token-file: the token must be at "
                                                 "least 16 characters, with no space");
                 }
             }},
            {"--metrics-port",
             [](options& settings, const std::string& value) {
                 settings.metrics_port = integer("--metrics-port", value, 1, 65535);
             }},
            {"--timeout",
             [](options& settings, const std::string& value) {
                 settings.timeout = seconds("--timeout", value, 0.01, 3600);
             }},
            {"--max-attempts",
             [](options& settings, const std::string& value) {
                 settings.max_attempts = integer("--max-attempts", value, 1, 1000);
             }},
            {"--claim-after",
             [](options& settings, const std::string& value) {
                 settings.claim_after = seconds("--claim-after", value, 0.1, 86400);
             }},
            {"--concurrency",
             [](options& settings, const std::string& value) {
                 settings.concurrency = integer("--concurrency", value, 1, 4096);
             }},
            {"--window",
             [](options& settings, const std::string& value) {
                 settings.window = static_cast<std::size_t>(integer("--window", value, 1, 1000000));
             }},
            {"--max-held",
             [](options& settings, const std::string& value) {
                 settings.max_held =
                     static_cast<std::size_t>(integer("--max-held", value, 1, 10000000));
             }},
            {"--dead-letter-max",
             [](options& settings, const std::string& value) {
                 settings.dead_letter_max =
                     static_cast<std::size_t>(integer("--dead-letter-max", value, 1, 100000000));
             }},
            {"--alert-delay-threshold",
             [](options& settings, const std::string& value) {
                 settings.alert_delay_threshold = number("--alert-delay-threshold", value, 0, 1e9);
             }},
        };
        add_target_flags(flags);
        return flags;
    }();
    return FLAGS;
}

// Boost.Program_options splits the words (--flag VALUE, --flag=VALUE, -h, repeats); the table
// above checks each value, in the order given. Its own messages are replaced by ones that name
// the flag only: a value may hold a secret.
namespace po = boost::program_options;

po::options_description described() {
    po::options_description described;
    for (const auto& [flag, handler] : value_flags()) {
        described.add_options()(flag.substr(2).c_str(), po::value<std::string>());
    }
    described.add_options()("smtp-require-tls", po::bool_switch())("help,h", po::bool_switch());
    return described;
}

void read_redis_environment(options& settings) {
    const std::string url = env("ALERT_REDIS_URL");
    const std::string sentinels = env("ALERT_REDIS_SENTINELS");
    if (!url.empty() && !sentinels.empty()) {
        throw std::invalid_argument("set ALERT_REDIS_URL or ALERT_REDIS_SENTINELS, not both");
    }
    if (url.empty() && sentinels.empty()) {
        throw std::invalid_argument("ALERT_REDIS_URL is not set (nor ALERT_REDIS_SENTINELS)");
    }
    settings.redis = !url.empty() ? parse_redis_url(url)
                                  : parse_redis_sentinels(sentinels, env("ALERT_REDIS_MASTER"));
    read_redis_credentials(settings.redis);  // the actions' variables, files included
    if (const std::string prefix = env("ALERT_REDIS_PREFIX"); !prefix.empty())
        settings.prefix = prefix;
    settings.min_replicas = sentinels.empty() ? 0 : 1;
    if (const std::string n = env("ALERT_REDIS_MIN_REPLICAS"); !n.empty())
        settings.min_replicas = integer("ALERT_REDIS_MIN_REPLICAS", n, 0, 100);
    if (const std::string ms = env("ALERT_REDIS_WAIT_MS"); !ms.empty())
        settings.wait_for_replicas =
            std::chrono::milliseconds(integer("ALERT_REDIS_WAIT_MS", ms, 1, 600000));
}

/// Secrets from the environment: the value, or the file ..._FILE names (flags win).
void read_secret_environment(options& settings) {
    if (settings.smtp.user.empty()) settings.smtp.user = env("ALERTGW_SMTP_USER");
    const std::string password = secret_from_environment("ALERTGW_SMTP_PASSWORD");
    if (settings.smtp.password.empty()) settings.smtp.password = password;
    if (settings.smtp.ca_file.empty()) settings.smtp.ca_file = env("ALERTGW_SMTP_CA_FILE");
    const std::string authorization = secret_from_environment("ALERTGW_WEBHOOK_AUTHORIZATION");
    for (webhook_target& target : settings.webhooks) {
        if (target.authorization.empty()) target.authorization = authorization;
    }
}

void check_targets(const options& settings) {
    if (settings.smtp.url.empty() && settings.webhooks.empty()) {
        throw std::invalid_argument("nothing to deliver to: give --smtp and/or --webhook");
    }
    if (settings.smtp.require_tls && settings.smtp.url.empty()) {
        throw std::invalid_argument("--smtp-require-tls needs --smtp");
    }
    for (std::size_t i = 0; i < settings.webhooks.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (settings.webhooks[i].name == settings.webhooks[j].name) {
                throw std::invalid_argument("two webhooks named '" + settings.webhooks[i].name +
                                            "': name them (--webhook NAME=URL)");
            }
        }
    }
}

std::string default_consumer() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || !*host)
        std::snprintf(host, sizeof host, "host");
    return std::string(host) + "-" + std::to_string(::getpid());
}

}  // namespace

std::string webhook_name(const std::string& url) {
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) return "webhook";
    const std::string scheme = url.substr(0, scheme_end);
    std::string authority = url.substr(scheme_end + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    if (const auto at = authority.rfind('@'); at != std::string::npos)
        authority = authority.substr(at + 1);
    const auto bracket = authority.rfind(']');
    const auto colon = authority.rfind(':');
    const bool has_port =
        colon != std::string::npos && (bracket == std::string::npos || colon > bracket);
    if (!has_port) authority += scheme == "https" ? ":443" : ":80";
    return scheme + "://" + authority;
}

options parse_options(int argc, char** argv, bool& help) {
    options settings;
    help = false;
    const std::vector<std::string> args(argv + 1, argv + argc);
    for (const po::option& given : actionloop::cli::split_gnu(args, described())) {
        const std::string& name = given.string_key;
        if (given.unregistered || name.empty()) {
            const std::string word = given.original_tokens.at(0);
            throw std::invalid_argument("unknown flag '" + word.substr(0, word.find('=')) + "'");
        }
        if (name == "help") {
            help = true;
            return settings;
        }
        if (name == "smtp-require-tls") {
            settings.smtp.require_tls = true;
            continue;
        }
        value_flags().at("--" + name)(settings, given.value.at(0));
    }
    read_redis_environment(settings);
    read_secret_environment(settings);
    check_targets(settings);
    if (settings.consumer.empty()) settings.consumer = default_consumer();
    return settings;
}

}  // namespace alerts::gateway
