// etag_fields.cpp — an ETag's members, as the parser found them in one pass, validated.
#include "core/etag_fields.hpp"

#include <cmath>

namespace alerts {

namespace {

using kind = etag_fields::kind;

const char* const FIELD_NAMES[8] = {"id", "account", "device", "type",
                                    "ts", "state",   "region", "magnitude"};

bool get_name(const etag_fields& f, int i, bool required, std::string_view& out,
              std::string& error) {
    const etag_fields::member& v = f.values[i];
    if (v.type == kind::absent) {
        if (required) error = std::string("missing field '") + FIELD_NAMES[i] + "'";
        return !required;
    }
    if (v.type != kind::string) {
        error = std::string("field '") + FIELD_NAMES[i] + "' must be a string";
        return false;
    }
    const std::string_view s = v.text;
    if ((required && s.empty()) || s.size() > MAX_NAME_LENGTH) {
        error = std::string("field '") + FIELD_NAMES[i] + "' must have 1 to 255 characters";
        return false;
    }
    // A site's group is kept as a device whose id begins with U+0001 (alert_core.hpp): no
    // ETag may name it.
    if (i == 2 && s[0] == '\x01') {
        error = "field 'device' must not begin with U+0001 (kept for sites' groups)";
        return false;
    }
    out = s;
    return true;
}

bool get_number(const etag_fields& f, int i, double& out, std::string& error) {
    const etag_fields::member& v = f.values[i];
    if (v.type == kind::absent) {
        error = std::string("missing field '") + FIELD_NAMES[i] + "'";
        return false;
    }
    if (v.type != kind::number || !std::isfinite(v.number)) {
        error = std::string("field '") + FIELD_NAMES[i] + "' must be a number";
        return false;
    }
    out = v.number;
    return true;
}

bool get_enum_text(const etag_fields& f, int i, std::string_view& out, std::string& error) {
    return get_name(f, i, true, out, error);
}

bool parse_kind(const etag_fields& f, etag& out, std::string& error) {
    std::string_view text;
    if (!get_enum_text(f, 3, text, error)) return false;
    const auto type = parse_etag_type(text);
    if (!type) {
        error = "unknown type '" + std::string(text) + "'";
        return false;
    }
    out.type = *type;
    if (out.type == etag_type::motion) {
        return get_name(f, 6, true, out.region, error) && get_number(f, 7, out.magnitude, error);
    }
    if (!get_enum_text(f, 5, text, error)) return false;
    const auto state = parse_device_state(text);
    if (!state) {
        error = "unknown state '" + std::string(text) + "'";
        return false;
    }
    out.state = *state;
    return true;
}

}  // namespace

int etag_fields::index(std::string_view key) {
    switch (key.size()) {
        case 2:
            return key == "id" ? 0 : key == "ts" ? 4 : -1;
        case 4:
            return key == "type" ? 3 : -1;
        case 5:
            return key == "state" ? 5 : -1;
        case 6:
            return key == "device" ? 2 : key == "region" ? 6 : -1;
        case 7:
            return key == "account" ? 1 : -1;
        case 9:
            return key == "magnitude" ? 7 : -1;
        default:
            return -1;
    }
}

bool etag_from_fields(const etag_fields& f, etag& out, std::string& error) {
    out = etag{};
    return get_name(f, 0, false, out.id, error) && get_name(f, 1, true, out.account, error) &&
           get_name(f, 2, true, out.device, error) && get_number(f, 4, out.ts, error) &&
           parse_kind(f, out, error);
}

void add_etag(const etag_fields& f, std::size_t index, parsed_batch& out) {
    etag e;
    std::string error;
    if (etag_from_fields(f, e, error)) {
        out.etags.push_back(e);
    } else {
        out.rejected.push_back({index, "etag " + std::to_string(index) + ": " + error});
    }
}

}  // namespace alerts
