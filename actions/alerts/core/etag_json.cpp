// etag_json.cpp — one pass over each ETag object's members (no per-field map lookups),
// then validation of what was found.
#include "etag_json.hpp"

#include <cmath>
#include <stdexcept>

namespace alerts {

namespace {

using json = nlohmann::json;

enum field : unsigned {
    F_ID = 1,
    F_ACCOUNT = 2,
    F_DEVICE = 4,
    F_TYPE = 8,
    F_TS = 16,
    F_STATE = 32,
    F_REGION = 64,
    F_MAGNITUDE = 128
};

struct raw_fields {
    unsigned seen = 0;
    const json* values[8] = {};
};

int field_index(const std::string& key) {
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

const char* const FIELD_NAMES[8] = {"id", "account", "device", "type",
                                    "ts", "state",   "region", "magnitude"};

bool get_name(const raw_fields& f, int i, bool required, std::string_view& out,
              std::string& error) {
    const json* v = f.values[i];
    if (!v) {
        if (required) error = std::string("missing field '") + FIELD_NAMES[i] + "'";
        return !required;
    }
    if (!v->is_string()) {
        error = std::string("field '") + FIELD_NAMES[i] + "' must be a string";
        return false;
    }
    const std::string& s = v->get_ref<const std::string&>();
    if ((required && s.empty()) || s.size() > MAX_NAME_LENGTH) {
        error = std::string("field '") + FIELD_NAMES[i] + "' must have 1 to 255 characters";
        return false;
    }
    out = s;
    return true;
}

bool get_number(const raw_fields& f, int i, double& out, std::string& error) {
    const json* v = f.values[i];
    if (!v) {
        error = std::string("missing field '") + FIELD_NAMES[i] + "'";
        return false;
    }
    if (!v->is_number() || !std::isfinite(v->get<double>())) {
        error = std::string("field '") + FIELD_NAMES[i] + "' must be a number";
        return false;
    }
    out = v->get<double>();
    return true;
}

bool get_enum_text(const raw_fields& f, int i, std::string_view& out, std::string& error) {
    return get_name(f, i, true, out, error);
}

bool parse_kind(const raw_fields& f, etag& out, std::string& error) {
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

bool parse_etag(const json& j, etag& out, std::string& error) {
    if (!j.is_object()) {
        error = "must be an object";
        return false;
    }
    raw_fields f;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const int i = field_index(it.key());
        if (i >= 0) f.values[i] = &it.value();
    }
    out = etag{};
    return get_name(f, 0, false, out.id, error) && get_name(f, 1, true, out.account, error) &&
           get_name(f, 2, true, out.device, error) && get_number(f, 4, out.ts, error) &&
           parse_kind(f, out, error);
}

void parse_etags(const json& etags, parsed_batch& out) {
    if (!etags.is_array()) throw std::invalid_argument("'etags' must be an array");
    out.etags.reserve(out.etags.size() + etags.size());
    std::string error;
    etag e;
    std::size_t index = 0;
    for (const json& j : etags) {
        if (parse_etag(j, e, error)) {
            out.etags.push_back(e);
        } else {
            out.rejected.push_back({index, "etag " + std::to_string(index) + ": " + error});
        }
        ++index;
    }
}

}  // namespace alerts
