// context_builder: an activation's context from its request's members.
#include "activation.hpp"

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "env_export.hpp"
#include "xray_trace.hpp"

namespace actionloop {
namespace {

// The variable Lambda's runtimes set to the invocation's X-Ray header, for the AWS SDKs.
constexpr std::string_view TRACE_VARIABLE = "_X_AMZN_TRACE_ID";

// No deadline for a value that is not positive, or past what the clock can represent (a
// conversion to its nanoseconds would overflow).
context::time_point from_epoch_ms(long long ms) {
    using std::chrono::milliseconds;
    const auto latest =
        std::chrono::duration_cast<milliseconds>(context::time_point::max().time_since_epoch());
    if (ms <= 0 || ms >= latest.count()) return context::time_point::max();
    return context::time_point(milliseconds(ms));
}

context::time_point parse_deadline(std::string_view text) {
    const std::string terminated(text);  // strtoll's rules, as before (spaces, '+')
    char* end = nullptr;
    const long long ms = std::strtoll(terminated.c_str(), &end, 10);
    if (text.empty() || end == nullptr || *end != '\0') return context::time_point::max();
    return from_epoch_ms(ms);
}

// The first member the environment export leaves out, on stderr (once: every activation may
// carry the same ones). Its name is printed with anything but printable ASCII as '?'.
void report_unexported(std::string_view key) {
    static bool reported = false;
    if (reported) return;
    reported = true;
    std::string shown(key.substr(0, env_export::MAX_NAME_BYTES));
    for (char& c : shown) {
        if (c < 0x20 || c > 0x7e) c = '?';
    }
    std::cerr << "actionloop: the request member \"" << shown
              << "\" is not exported as an __OW_ variable (beside upstream's, at most "
              << env_export::MAX_OTHER_NAMES << " names of at most " << env_export::MAX_NAME_BYTES
              << " letters, digits and _; values of at most " << env_export::MAX_VALUE_BYTES
              << " bytes; docs/SDK.md); the context still has it if it is one of its fields. "
                 "Later ones are not reported."
              << std::endl;
}

}  // namespace

void context_builder::add_string(std::string_view key, std::string_view text) {
    if (key == "proxy_deadline") {  // the proxy's word to the launcher, not the platform's
        proxy_deadline_ = parse_deadline(text);
        has_proxy_deadline_ = true;
        return;
    }
    if (platform_ == platform::lambda) {
        // Lambda's own members; Lambda's runtimes export no per-request variable but
        // _X_AMZN_TRACE_ID (build()).
        if (key == "lambda_trace_id") {
            lambda_trace_id_ = text;
            return;
        }
        if (key == "lambda_client_context") {
            client_context_ = text;
            return;
        }
        if (key == "lambda_cognito_identity") {
            cognito_identity_ = text;
            return;
        }
    } else if (!env_export::process().set(key, text)) {
        // The environment is kept for compatibility only; the context does not read it.
        report_unexported(key);
    }
    if (key == "activation_id") {
        activation_id_ = text;
    } else if (key == "action_name") {
        action_name_ = text;
    } else if (key == "namespace") {
        namespace_ = text;
    } else if (key == "api_host") {
        api_host_ = text;
    } else if (key == "deadline") {
        deadline_ = parse_deadline(text);
    } else if (key == "transaction_id") {
        transaction_id_ = text;
    }
}

void context_builder::add_deadline_ms(long long ms) { deadline_ = from_epoch_ms(ms); }

context context_builder::build() {
    std::string traceparent =
        make_traceparent(traceparent_header_, transaction_id_, activation_id_, lambda_trace_id_);
    if (platform_ == platform::lambda) {
        // A header too long for the environment (MAX_VALUE_BYTES) leaves it unset; the
        // context still has it.
        if (lambda_trace_id_.empty()) {
            env_export::process().unset_named(TRACE_VARIABLE);
        } else {
            env_export::process().set_named(TRACE_VARIABLE, lambda_trace_id_);
        }
    }
    context ctx(std::move(activation_id_), std::move(action_name_), std::move(namespace_),
                std::move(api_host_), has_proxy_deadline_ ? proxy_deadline_ : deadline_);
    ctx.transaction_id_ = std::move(transaction_id_);
    ctx.traceparent_ = std::move(traceparent);
    ctx.client_context_ = std::move(client_context_);
    ctx.cognito_identity_ = std::move(cognito_identity_);
    ctx.lambda_trace_id_ = std::move(lambda_trace_id_);
    return ctx;
}

namespace {

bool is_lower_hex(std::string_view text) {
    for (char c : text) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

bool all_zeros(std::string_view text) { return text.find_first_not_of('0') == std::string::npos; }

// FNV-1a, 64 bits, from `seed`: a stable spread of an id into hex digits (not a secret).
std::uint64_t fnv1a(std::string_view text, std::uint64_t seed) {
    std::uint64_t hash = seed;
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

void append_hex(std::string& out, std::uint64_t value) {
    static const char HEX_DIGITS[] = "0123456789abcdef";
    for (int shift = 60; shift >= 0; shift -= 4) out.push_back(HEX_DIGITS[(value >> shift) & 0xf]);
}

// `id` itself when it is `digits` lowercase hex digits and not all zeros (OpenWhisk's
// activation ids are 32), else a hash of it.
std::string hex_id(std::string_view id, size_t digits) {
    if (id.size() >= digits && is_lower_hex(id.substr(0, digits)) &&
        !all_zeros(id.substr(0, digits))) {
        return std::string(id.substr(0, digits));
    }
    std::string out;
    for (std::uint64_t seed = 0xcbf29ce484222325ULL; out.size() < digits; seed += 0x9e3779b9) {
        append_hex(out, fnv1a(id, seed));
    }
    out.resize(digits);
    if (all_zeros(out)) out.back() = '1';
    return out;
}

}  // namespace

std::string make_traceparent(std::string_view header, std::string_view transaction_id,
                             std::string_view activation_id, std::string_view xray) {
    std::optional<xray_trace> xray_ids;
    if (!xray.empty()) xray_ids = parse_xray_trace(xray);
    // version 00: "00-" 32 hex "-" 16 hex "-" 2 hex; a later version may append "-…".
    const bool valid = header.size() >= 55 && header.substr(0, 3) == "00-" && header[35] == '-' &&
                       header[52] == '-' && is_lower_hex(header.substr(3, 32)) &&
                       is_lower_hex(header.substr(36, 16)) && is_lower_hex(header.substr(53, 2)) &&
                       !all_zeros(header.substr(3, 32)) && (header.size() == 55);
    std::string trace_id;
    std::string flags = "01";
    if (xray_ids) {
        trace_id = std::move(xray_ids->trace_id);
        flags = xray_ids->sampled ? "01" : "00";
    } else if (valid) {
        trace_id = std::string(header.substr(3, 32));
        flags = std::string(header.substr(53, 2));
    } else if (!transaction_id.empty()) {
        trace_id = hex_id(transaction_id, 32);
    } else {
        return {};
    }
    const std::string parent = activation_id.empty()
                                   ? hex_id(std::string(transaction_id) + "/activation", 16)
                                   : hex_id(activation_id, 16);
    return "00-" + trace_id + "-" + parent + "-" + flags;
}

}  // namespace actionloop
