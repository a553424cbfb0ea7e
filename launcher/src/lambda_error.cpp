// Lambda's error line and the exception's type: see lambda_error.hpp.
#include "lambda_error.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <typeinfo>

#include <nlohmann/json.hpp>

namespace actionloop {

std::string demangled_type_name(const char* mangled) {
    if (mangled == nullptr) return std::string(UNKNOWN_TYPE);
    int status = 0;
    // __cxa_demangle allocates the name with malloc; the unique_ptr frees it.
    const std::unique_ptr<char, void (*)(void*)> name(
        abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
    return status == 0 && name ? std::string(name.get()) : std::string(mangled);
}

std::string current_exception_type() {
    const std::type_info* type = abi::__cxa_current_exception_type();
    return type != nullptr ? demangled_type_name(type->name()) : std::string(UNKNOWN_TYPE);
}

std::string lambda_error_line(std::string_view message, std::string_view type) {
    // nlohmann's objects keep their members sorted: errorMessage, errorType, stackTrace is
    // also the order Lambda's own runtimes write.
    const nlohmann::json line = {{"__lambda_error",
                                  {{"errorMessage", message},
                                   {"errorType", type},
                                   {"stackTrace", nlohmann::json::array()}}}};
    return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace actionloop
