// The /run framing: newline stripping, answer validation, deadline lookup, the line buffer.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/framing.hpp"

using namespace actionloop;

TEST_CASE("frame_request removes every newline and ends the line") {
    std::string out;
    frame_request("{\"a\":\n1}\n", out);
    CHECK(out == "{\"a\":1}\n");
    frame_request("", out);
    CHECK(out == "\n");
    frame_request("\n\n\n", out);
    CHECK(out == "\n");
    frame_request("{\"s\":\"x\\ny\"}", out);  // an escaped newline is two bytes, kept
    CHECK(out == "{\"s\":\"x\\ny\"}\n");
}

TEST_CASE(
    "is_plain_json_container: the usual answers in one pass, anything unusual left to the parser") {
    CHECK(is_plain_json_container("{\"greeting\":\"Hello, Mike!\"}\n"));
    CHECK(is_plain_json_container(
        " [1, -2.5, 0, true, false, null, {}, [], {\"a\":[{\"b\":\"\"}]}] \n"));
    CHECK(is_plain_json_container("{}"));
    CHECK(is_plain_json_container("[]"));
    // Valid, but outside the plain subset: the parser decides (is_object_or_array is true).
    for (const char* unusual : {"{\"a\":\"\\n\"}", "{\"a\":1e3}", "{\"a\":\"\xc3\xa9\"}",
                                "[11111111111111111111111111111111]"}) {
        CHECK_FALSE(is_plain_json_container(unusual));
        CHECK(is_object_or_array(unusual));
    }
    CHECK_FALSE(is_plain_json_container(std::string(65, '[') + std::string(65, ']')));
    CHECK(is_object_or_array(std::string(65, '[') + std::string(65, ']')));
    // Not JSON, or not one container.
    for (const char* bad :
         {"{", "[1,]", "{\"a\":}", "{\"a\" 1}", "{\"a\":1,}", "[1 2]", "{}{}", "[] x", "[01]",
          "[-]", "[1.]", "[tru]", "{1:2}", "\"s\"", "42", "[\"a]", "[1]]", "{]"}) {
        CHECK_FALSE(is_plain_json_container(bad));
    }
}

TEST_CASE("is_object_or_array accepts exactly one object or array") {
    CHECK(is_object_or_array("{\"a\":1}\n"));
    CHECK(is_object_or_array("   {\"a\":1}   \n"));
    CHECK(is_object_or_array("[1,2]\n"));
    CHECK(is_object_or_array("{}"));
    CHECK_FALSE(is_object_or_array("\"a string\"\n"));
    CHECK_FALSE(is_object_or_array("42\n"));
    CHECK_FALSE(is_object_or_array("null\n"));
    CHECK_FALSE(is_object_or_array("true\n"));
    CHECK_FALSE(is_object_or_array("\n"));
    CHECK_FALSE(is_object_or_array(""));
    CHECK_FALSE(is_object_or_array("{\"a\":1} xyz\n"));
    CHECK_FALSE(is_object_or_array("{\"a\":\n"));
    CHECK_FALSE(is_object_or_array("{ error: \"x\"}\n"));  // the Go launcher's invalid JSON
}

TEST_CASE("find_top_level_field skips nested values") {
    std::string body =
        R"({"value":{"deadline":"1","x":[{"deadline":"2"}],"s":"\"deadline\""},"deadline":"3"})";
    auto found = find_top_level_field(body, "deadline");
    REQUIRE(found);
    CHECK(*found == "3");
    CHECK_FALSE(find_top_level_field(R"({"value":{"deadline":"1"}})", "deadline"));
    CHECK_FALSE(find_top_level_field("XXX", "deadline"));
    CHECK_FALSE(find_top_level_field("", "deadline"));
    CHECK(*find_top_level_field(R"({ "a" : 12 , "b":true})", "a") == "12");
}

TEST_CASE("find_deadline_ms reads a string or number of epoch milliseconds") {
    CHECK(find_deadline_ms(R"({"deadline":"1764460800123"})") == 1764460800123LL);
    CHECK(find_deadline_ms(R"({"deadline":1764460800123})") == 1764460800123LL);
    CHECK_FALSE(find_deadline_ms(R"({"deadline":"soon"})"));
    CHECK_FALSE(find_deadline_ms(R"({"deadline":""})"));
    CHECK_FALSE(find_deadline_ms(R"({"value":{}})"));
    CHECK_FALSE(find_deadline_ms(R"({"deadline":"99999999999999999999999"})"));
}

TEST_CASE("line_buffer hands out one line and reports what followed it") {
    line_buffer buffer(100);
    CHECK_FALSE(buffer.append("{\"a\"", 4));
    CHECK(buffer.append(":1}\n{\"b\":2}\n", 12));
    std::string line;
    CHECK(buffer.take_line(line) == 8);
    CHECK(line == "{\"a\":1}\n");
    CHECK(buffer.buffered() == 0);
}

TEST_CASE("line_buffer hands out pipelined answers one by one, keeping what follows") {
    line_buffer buffer(100);
    CHECK(buffer.append("{\"a\":1}\n{\"b\":2}\n{\"c\"", 20));
    std::string line;
    REQUIRE(buffer.has_line());
    buffer.take_next_line(line);
    CHECK(line == "{\"a\":1}\n");
    REQUIRE(buffer.has_line());
    buffer.take_next_line(line);
    CHECK(line == "{\"b\":2}\n");
    CHECK_FALSE(buffer.has_line());
    CHECK(buffer.buffered() == 4);
    CHECK(buffer.append(":3}\n", 4));
    buffer.take_next_line(line);  // the last line: handed over whole
    CHECK(line == "{\"c\":3}\n");
    CHECK(buffer.buffered() == 0);
    CHECK_FALSE(buffer.has_line());
}

TEST_CASE("line_buffer caps each pipelined answer, not the sum of them") {
    line_buffer buffer(10);
    const std::string two = "{\"a\":123}\n{\"b\":456}\n";  // 9 + 1 bytes each
    CHECK(buffer.append(two.data(), two.size()));
    CHECK_FALSE(buffer.overflowed());
    std::string line;
    buffer.take_next_line(line);
    CHECK_FALSE(buffer.overflowed());
    const std::string long_one = std::string(11, 'z');
    buffer.append(long_one.data(), long_one.size());
    CHECK_FALSE(buffer.overflowed());  // the head line is complete and within the cap
    buffer.take_next_line(line);
    CHECK(buffer.overflowed());  // now the head is the long one
}

TEST_CASE("line_buffer overflows past its cap without a newline") {
    line_buffer buffer(10);
    std::string chunk(11, 'x');
    CHECK_FALSE(buffer.append(chunk.data(), chunk.size()));
    CHECK(buffer.overflowed());
    buffer.clear();
    CHECK_FALSE(buffer.overflowed());
    std::string complete = std::string(11, 'y') + "\n";  // a whole line over the cap too
    CHECK(buffer.append(complete.data(), complete.size()));
    CHECK(buffer.overflowed());
    buffer.clear();
    std::string fits = std::string(10, 'z') + "\n";
    CHECK(buffer.append(fits.data(), fits.size()));
    CHECK_FALSE(buffer.overflowed());
}

TEST_CASE("append_string_member adds one member before the closing brace of an object") {
    std::string body = "{\"value\":{\"a\":1},\"deadline\":\"123\"}";
    CHECK(append_string_member(body, "proxy_deadline", "42"));
    CHECK(body == "{\"value\":{\"a\":1},\"deadline\":\"123\",\"proxy_deadline\":\"42\"}");
    std::string empty = " { } \n";
    CHECK(append_string_member(empty, "k", "v"));
    CHECK(empty == " { \"k\":\"v\"} \n");
    CHECK(nlohmann::json::parse(empty) == nlohmann::json{{"k", "v"}});
    std::string nested = "{\"a\":{}}";
    CHECK(append_string_member(nested, "k", "v"));
    CHECK(nested == "{\"a\":{},\"k\":\"v\"}");
    for (std::string other : {"", "  ", "[1]", "XXX", "\"s\"", "{", "}", "{\"a\":1"}) {
        const std::string before = other;
        CHECK_FALSE(append_string_member(other, "k", "v"));
        CHECK(other == before);
    }
}
