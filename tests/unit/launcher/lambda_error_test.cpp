// A failed activation's answer in Lambda mode (launcher/src/lambda_error.hpp): the exception's
// dynamic type, demangled, and the one {"__lambda_error": …} line, escaped so that it stays
// one line of valid JSON whatever what() holds.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include <nlohmann/json.hpp>

#include "lambda_error.hpp"

using namespace actionloop;

namespace {

struct custom_error : std::runtime_error {
    custom_error() : std::runtime_error("custom") {}
};

// The errorType the launcher would give `thrown`, caught as `Caught`.
template <class Caught, class Thrown>
std::string type_when_caught(const Thrown& thrown) {
    try {
        throw thrown;
    } catch (const Caught&) {
        return current_exception_type();
    }
}

}  // namespace

TEST_CASE("lambda error: type names demangled as the source spells them") {
    CHECK(demangled_type_name(typeid(std::runtime_error).name()) == "std::runtime_error");
    CHECK(demangled_type_name("St12out_of_range") == "std::out_of_range");
    CHECK(demangled_type_name(typeid(int).name()) == "int");
    CHECK(demangled_type_name(typeid(nlohmann::json::type_error).name()) ==
          "nlohmann::json_abi_v3_11_2::detail::type_error");
    CHECK(demangled_type_name(typeid(custom_error).name()) ==
          "(anonymous namespace)::custom_error");
    // What does not demangle is shown as it is; nothing is "Unknown".
    CHECK(demangled_type_name("not a mangled name!") == "not a mangled name!");
    CHECK(demangled_type_name("") == "");
    CHECK(demangled_type_name(nullptr) == "Unknown");
}

TEST_CASE("lambda error: the dynamic type of the exception being handled, not the caught one") {
    CHECK(type_when_caught<std::exception>(std::runtime_error("x")) == "std::runtime_error");
    CHECK(type_when_caught<std::logic_error>(std::out_of_range("x")) == "std::out_of_range");
    CHECK(type_when_caught<std::exception>(custom_error()) ==
          "(anonymous namespace)::custom_error");
    std::string at_type;
    try {
        (void)std::vector<int>().at(3);
    } catch (const std::exception&) {
        at_type = current_exception_type();
    }
    CHECK(at_type == "std::out_of_range");
    std::string json_type;
    try {
        (void)nlohmann::json("text").get<int>();
    } catch (...) {
        json_type = current_exception_type();
    }
    CHECK(json_type == "nlohmann::json_abi_v3_11_2::detail::type_error");
    CHECK(type_when_caught<int>(42) == "int");
    CHECK(current_exception_type() == "Unknown");  // outside a catch
}

TEST_CASE("lambda error: the line's exact shape, its members in Lambda's order") {
    CHECK(lambda_error_line("boom", "std::runtime_error") ==
          R"({"__lambda_error":{"errorMessage":"boom","errorType":"std::runtime_error",)"
          R"("stackTrace":[]}})");
    CHECK(lambda_error_line(UNKNOWN_EXCEPTION, UNKNOWN_TYPE) ==
          R"({"__lambda_error":{"errorMessage":"unknown exception","errorType":"Unknown",)"
          R"("stackTrace":[]}})");
    CHECK(lambda_error_line("", "") ==
          R"({"__lambda_error":{"errorMessage":"","errorType":"","stackTrace":[]}})");
}

TEST_CASE("lambda error: quotes, backslashes, newlines and control characters are escaped") {
    const std::string line =
        lambda_error_line("say \"hi\"\\ \n then\r\t\x01 bye </script>", "a\"b");
    CHECK(line ==
          R"({"__lambda_error":{"errorMessage":"say \"hi\"\\ \n then\r\t\u0001 bye </script>",)"
          R"("errorType":"a\"b","stackTrace":[]}})");
    CHECK(line.find('\n') == std::string::npos);
    const nlohmann::json parsed = nlohmann::json::parse(line);
    CHECK(parsed["__lambda_error"]["errorMessage"] == "say \"hi\"\\ \n then\r\t\x01 bye </script>");
}

TEST_CASE("lambda error: bytes that are not UTF-8 become U+FFFD, valid UTF-8 is kept") {
    const std::string line = lambda_error_line("caf\xc3\xa9 \xff\xfe end \xe2\x82", "t\xc0");
    CHECK(line == "{\"__lambda_error\":{\"errorMessage\":\"caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd"
                  " end \xef\xbf\xbd\",\"errorType\":\"t\xef\xbf\xbd\",\"stackTrace\":[]}}");
    CHECK(nlohmann::json::accept(line));
}

TEST_CASE("lambda error: a long what() is kept whole") {
    const std::string message(100000, 'x');
    const nlohmann::json parsed = nlohmann::json::parse(lambda_error_line(message, "T"));
    CHECK(parsed["__lambda_error"]["errorMessage"] == message);
}
