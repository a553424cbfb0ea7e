// The /run path: frame_request, json_bounds_error (the depth and member count of a body, against
// nlohmann's counts), is_object_or_array (the answer check, and its one-pass half),
// find_top_level_field / find_deadline_ms (the deadline lookup that must not parse the whole
// body) and line_buffer (fd-3 output cut into lines under a cap), against simple models.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/framing.hpp"
#include "fuzz_check.hpp"

namespace {

using namespace actionloop;

void check_frame(std::string_view body) {
    std::string framed;
    frame_request(body, framed);
    std::string model;
    for (char c : body) {
        if (c != '\n') model.push_back(c);
    }
    model.push_back('\n');
    FUZZ_CHECK(framed == model);
}

void check_answer(std::string_view line) {
    const bool accepted = is_object_or_array(line);
    const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
    const bool model = !parsed.is_discarded() && (parsed.is_object() || parsed.is_array());
    FUZZ_CHECK(accepted == model);
    // The one-pass check is never more lenient than the parser.
    if (is_plain_json_container(line)) FUZZ_CHECK(model);
}

size_t occurrences(std::string_view text, std::string_view needle) {
    size_t count = 0;
    for (size_t at = text.find(needle); at != std::string_view::npos;
         at = text.find(needle, at + 1)) {
        ++count;
    }
    return count;
}

// Differential check against a full parse, where the two must agree: a JSON object with one
// "deadline" key whose value is 1 to 18 digits, no escapes anywhere.
void check_deadline(std::string_view body) {
    const auto found = find_deadline_ms(body);
    find_top_level_field(body, "value");
    find_top_level_field(body, "");
    if (found) FUZZ_CHECK(*found >= 0);
    if (body.find('\\') != std::string_view::npos || occurrences(body, "\"deadline\"") != 1) {
        return;
    }
    const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) return;
    const auto it = parsed.find("deadline");
    if (it == parsed.end() || !it->is_string()) return;
    const std::string& text = it->get_ref<const std::string&>();
    if (text.empty() || text.size() > 18 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return;
    }
    FUZZ_CHECK(found && *found == std::stoll(text));
}

// The exact depth and member count of a JSON text, from nlohmann's SAX parser (no recursion).
struct shape_counter : nlohmann::json_sax<nlohmann::json> {
    size_t depth = 0, deepest = 0, members = 0;
    bool open() {
        deepest = std::max(deepest, ++depth);
        return true;
    }
    bool value() {
        if (depth > 0) ++members;
        return true;
    }
    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t) override { return value(); }
    bool number_unsigned(number_unsigned_t) override { return value(); }
    bool number_float(number_float_t, const string_t&) override { return value(); }
    bool string(string_t&) override { return value(); }
    bool binary(binary_t&) override { return value(); }
    bool start_object(std::size_t) override { return value() && open(); }
    bool start_array(std::size_t) override { return value() && open(); }
    bool key(string_t&) override { return true; }
    bool end_object() override { return --depth, true; }
    bool end_array() override { return --depth, true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }
};

// check_bounds (the JSON bounds, json_bounds_error) against those counts, for valid JSON: within
// bounds equal to them, over by one on either side. nlohmann's lexer ends the input at a NUL
// byte (the bounds count past it, so they only ever refuse more): the text is cut there.
void check_bounds(std::string_view input) {
    const std::string_view text = input.substr(0, input.find('\0'));
    shape_counter shape;
    if (!nlohmann::json::sax_parse(text, &shape)) return;
    FUZZ_CHECK(!json_bounds_error(text, {shape.deepest, shape.members}));
    if (shape.deepest > 0) {
        const auto excess = json_bounds_error(text, {shape.deepest - 1, shape.members});
        FUZZ_CHECK(excess && excess->find("OW_MAX_JSON_DEPTH") != std::string::npos);
    }
    if (shape.members > 0) {
        const auto excess = json_bounds_error(text, {shape.deepest, shape.members - 1});
        FUZZ_CHECK(excess && excess->find("OW_MAX_JSON_MEMBERS") != std::string::npos);
    }
}

// Feeds `data` to a line_buffer in chunks whose sizes come from `sizes`, the way the executor
// reads fd 3, and compares every line and overflow with a model of the same stream.
void check_lines(std::string_view data, std::string_view sizes, size_t cap) {
    line_buffer buffer(cap);
    std::string pending;  // the model: bytes not yet taken
    size_t at = 0, chunk = 0;
    while (at < data.size()) {
        size_t n = sizes.empty() ? 7 : static_cast<unsigned char>(sizes[chunk++ % sizes.size()]);
        n = std::min(std::max<size_t>(n, 1), data.size() - at);
        const bool complete = buffer.append(data.data() + at, n);
        pending.append(data.data() + at, n);
        at += n;
        const size_t newline = pending.find('\n');
        FUZZ_CHECK(complete == (newline != std::string::npos));
        FUZZ_CHECK(buffer.buffered() == pending.size());
        FUZZ_CHECK(buffer.overflowed() ==
                   ((newline == std::string::npos ? pending.size() : newline) > cap));
        if (buffer.overflowed()) {
            buffer.clear();  // the executor stops the action
            pending.clear();
        } else if (complete) {
            std::string line;
            const size_t extra = buffer.take_line(line);
            FUZZ_CHECK(line == pending.substr(0, newline + 1));
            FUZZ_CHECK(extra == pending.size() - newline - 1);
            FUZZ_CHECK(buffer.buffered() == 0);
            pending.clear();  // extra output is discarded
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    check_frame(input);
    check_answer(input);
    check_deadline(input);
    check_bounds(input);
    // The line buffer: first byte the cap, the next 8 chunk sizes, the rest the stream.
    if (size >= 9) {
        check_lines(input.substr(9), input.substr(1, 8), static_cast<unsigned char>(input[0]));
    }
    return 0;
}
