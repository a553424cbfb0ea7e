// lambda_error.hpp — how a failed activation is answered in Lambda mode: one line the proxy
// recognises and posts to the Runtime API's /error (docs/SDK.md, "On AWS Lambda"):
//
//   {"__lambda_error":{"errorMessage":"…","errorType":"std::out_of_range","stackTrace":[]}}
//
// errorType is the exception's dynamic type as the source spells it (demangled from its
// std::type_info, which the C++ runtime knows while the exception is being handled).
//
// stackTrace is always empty. The throw site's frames are gone once the launcher catches the
// exception (the stack has been unwound); keeping them would mean taking a backtrace in every
// throw, by replacing the C++ runtime's __cxa_throw, for the exceptions an action catches
// itself as well — a cost on every throw of every action, and a fragile interposition on the
// C++ runtime. Lambda accepts the empty array; the errorType and errorMessage say what failed,
// and a crash still gets its backtrace on stderr (crash_report.hpp).
#pragma once

#include <string>
#include <string_view>

namespace actionloop {

/// The type whose std::type_info::name() is `mangled`, as the source writes it:
/// "std::out_of_range" for "St12out_of_range", "int" for "i" (abi::__cxa_demangle). `mangled`
/// itself when it does not demangle; "Unknown" for null.
std::string demangled_type_name(const char* mangled);

/// Inside a catch block: the dynamic type of the exception being handled, demangled (a
/// std::runtime_error caught as std::exception is "std::runtime_error"); "Unknown" outside one.
std::string current_exception_type();

/// The errorType of an exception that is no std::exception (a thrown int, a string literal),
/// whose errorMessage is UNKNOWN_EXCEPTION.
inline constexpr std::string_view UNKNOWN_TYPE = "Unknown";
inline constexpr std::string_view UNKNOWN_EXCEPTION = "unknown exception";

/// The error's answer line, without its '\n':
/// {"__lambda_error":{"errorMessage":`message`,"errorType":`type`,"stackTrace":[]}}, compact,
/// JSON-escaped (quotes, backslashes, control characters such as newlines), bytes that are not
/// UTF-8 replaced by U+FFFD: always one line of valid JSON.
std::string lambda_error_line(std::string_view message, std::string_view type);

}  // namespace actionloop
