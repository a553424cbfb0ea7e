// The request side of single-entrypoint mode: envelope → classic /init and /run bodies.
#include "protocol/knative/envelope.hpp"

#include <cctype>
#include <unordered_map>

#include <boost/beast/core/string.hpp>

#include "protocol/base64.hpp"
#include "protocol/error_answer.hpp"
#include "protocol/knative/text.hpp"

namespace actionloop::knative {
namespace {

using boost::beast::iequals;

bool json_media_type(const std::string& content_type) {
    return iequals(trim(content_type.substr(0, content_type.find(';'))), "application/json");
}

// true/false; null, 0 and "" also false; anything else refused.
bool flag(const ordered_json& init, const char* name) {
    auto it = init.find(name);
    if (it == init.end() || it->is_null()) return false;
    if (it->is_boolean()) return it->get<bool>();
    if (it->is_number() && *it == 0) return false;
    if (it->is_string() && it->get_ref<const std::string&>().empty()) return false;
    throw refusal(INTERNAL_ERROR, INTERNAL_TEXT);
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string percent_decode(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '+') {
            out.push_back(' ');
        } else if (c == '%' && i + 2 < text.size() && is_hex(text[i + 1]) && is_hex(text[i + 2])) {
            out.push_back(static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16)));
            i += 2;
        } else {
            out.push_back(c);
        }
    }
    return out;
}

const char* js_type(const ordered_json& value) {
    if (value.is_string()) return "string";
    if (value.is_boolean()) return "boolean";
    return "number";
}

// V: absent or null → {}; an object or array as is; a scalar refused.
ordered_json arguments_value(const ordered_json& envelope) {
    auto it = envelope.find("value");
    if (it == envelope.end() || it->is_null()) return ordered_json::object();
    if (it->is_object() || it->is_array()) return *it;
    throw refusal(FORBIDDEN,
                  std::string("Internal system error: the argument must be a dictionary but "
                              "has type '") +
                      js_type(*it) + "'.");
}

// The top-level string members of the /run line: those of `activation`, then the body's (but
// `value`); a later one of the same name replaces an earlier one in its place (as ordered_json's
// operator[] would, but with an index of the names: an envelope may have many).
class line_strings {
public:
    void add_from(const ordered_json& from) {
        if (!from.is_object()) return;
        for (const auto& [key, member] : from.items()) {
            if (key != "value" && member.is_string()) set(key, member.get<std::string>());
        }
    }
    // `name` when the line has none, or has "".
    void default_to(const std::string& name, const std::string& text) {
        const auto it = index_.find(name);
        if (it == index_.end() || strings_[it->second].second.empty()) set(name, text);
    }
    // {"value": args, the strings...}
    ordered_json line(ordered_json args) && {
        ordered_json line = ordered_json::object();
        auto& members = line.get_ref<ordered_json::object_t&>();
        members.reserve(strings_.size() + 1);
        members.emplace_back("value", std::move(args));
        for (auto& [key, text] : strings_) members.emplace_back(key, std::move(text));
        return line;
    }

private:
    void set(const std::string& name, std::string text) {
        const auto [it, added] = index_.emplace(name, strings_.size());
        if (added) {
            strings_.emplace_back(name, std::move(text));
        } else {
            strings_[it->second].second = std::move(text);
        }
    }

    std::vector<std::pair<std::string, std::string>> strings_;
    std::unordered_map<std::string, size_t> index_;
};

}  // namespace

std::string header_value(const web_request& req, const std::string& name) {
    for (const auto& [key, value] : req.headers) {
        if (iequals(key, name)) return value;
    }
    return {};
}

std::string path_of(const std::string& target) { return target.substr(0, target.find('?')); }

ordered_json parse_envelope(const web_request& req, const json_limits& limits) {
    if (!json_media_type(header_value(req, "Content-Type"))) return ordered_json::object();
    if (req.body.find_first_not_of(" \t\r\n") == std::string::npos) return ordered_json::object();
    if (auto excess = json_bounds_error(req.body, limits)) {
        throw refusal(PAYLOAD_TOO_LARGE, "The request's JSON " + *excess + ".");
    }
    ordered_json envelope = parse_ordered(req.body);
    if (envelope.is_discarded() || !envelope.is_structured()) {
        throw refusal(INTERNAL_ERROR, BAD_REQUEST_TEXT);
    }
    return envelope.is_array() ? ordered_json::object() : envelope;
}

init_fields translate_init(const ordered_json& init_member) {
    const ordered_json init = init_member.is_object() ? init_member : ordered_json::object();
    init_fields fields;
    const bool binary = flag(init, "binary");
    fields.raw = flag(init, "raw");
    auto code = init.find("code");
    if (code == init.end() || !code->is_string() || code->get_ref<const std::string&>().empty()) {
        throw refusal(FORBIDDEN, NO_CODE_TEXT);
    }
    auto main = init.find("main");
    const bool named = main != init.end() && main->is_string() && !main->get<std::string>().empty();
    ordered_json value = {{"code", *code},
                          {"main", named ? main->get<std::string>() : std::string("main")},
                          {"binary", binary}};
    if (auto env = init.find("env"); env != init.end()) value["env"] = *env;
    if (auto name = init.find("name"); name != init.end() && name->is_string()) {
        fields.name = name->get<std::string>();
    }
    fields.init_body = ordered_json{{"value", std::move(value)}}.dump();
    return fields;
}

std::string translate_run(const ordered_json& envelope, const web_request& req, bool raw,
                          const std::string& action_name, const std::string& user) {
    ordered_json args = arguments_value(envelope);
    auto activation = envelope.find("activation");
    const bool has_activation = activation != envelope.end();
    if (has_activation && (raw || args.is_object())) {
        ordered_json context = {{"__ow_method", req.method},
                                {"__ow_headers", headers_object(req)},
                                {"__ow_path", ""},
                                {"__ow_user", user}};
        if (raw) {
            context["__ow_body"] = encode_base64(args.dump());
            context["__ow_query"] = query_object(req.target);
            args = std::move(context);
        } else {
            for (auto& [key, member] : context.items()) args[key] = member;
        }
    }
    line_strings strings;
    if (has_activation) strings.add_from(*activation);
    strings.add_from(envelope);
    if (!action_name.empty()) strings.default_to("action_name", action_name);
    return std::move(strings)
        .line(std::move(args))
        .dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

ordered_json query_object(const std::string& target) {
    ordered_json query = ordered_json::object();
    const size_t mark = target.find('?');
    if (mark == std::string::npos) return query;
    const std::string text = target.substr(mark + 1);
    size_t start = 0;
    while (start < text.size()) {
        size_t amp = text.find('&', start);
        if (amp == std::string::npos) amp = text.size();
        const std::string pair = text.substr(start, amp - start);
        start = amp + 1;
        if (pair.empty()) continue;
        const size_t eq = pair.find('=');
        const std::string name = percent_decode(pair.substr(0, eq));
        const std::string value =
            eq == std::string::npos ? "" : percent_decode(pair.substr(eq + 1));
        auto it = query.find(name);
        if (it == query.end()) {
            query[name] = value;
        } else if (it->is_array()) {
            it->push_back(value);
        } else {
            *it = ordered_json::array({*it, value});
        }
    }
    return query;
}

ordered_json headers_object(const web_request& req) {
    ordered_json headers = ordered_json::object();
    for (const auto& [name, value] : req.headers) {
        const std::string key = lower(name);
        auto it = headers.find(key);
        if (it == headers.end()) {
            headers[key] = value;
        } else {
            *it = it->get<std::string>() + ", " + value;
        }
    }
    return headers;
}

}  // namespace actionloop::knative
