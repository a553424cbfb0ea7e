// The crash report: signal handlers and a terminate handler that print a backtrace.
#include "crash_report.hpp"

#if __has_include(<backtrace.h>)
#include <backtrace.h>
#else
// libgcc-N-dev puts backtrace.h in GCC's own include folder, which clang (clang-tidy) does not
// search: the part of its C API used here.
#include <cstdint>
extern "C" {
struct backtrace_state;
typedef void (*backtrace_error_callback)(void* data, const char* msg, int errnum);
typedef int (*backtrace_full_callback)(void* data, std::uintptr_t pc, const char* filename,
                                       int lineno, const char* function);
typedef void (*backtrace_syminfo_callback)(void* data, std::uintptr_t pc, const char* symname,
                                           std::uintptr_t symval, std::uintptr_t symsize);
backtrace_state* backtrace_create_state(const char* filename, int threaded,
                                        backtrace_error_callback error_callback, void* data);
int backtrace_full(backtrace_state* state, int skip, backtrace_full_callback callback,
                   backtrace_error_callback error_callback, void* data);
int backtrace_syminfo(backtrace_state* state, std::uintptr_t addr,
                      backtrace_syminfo_callback callback, backtrace_error_callback error_callback,
                      void* data);
}
#endif
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <typeinfo>

#include <cxxabi.h>

namespace actionloop {
namespace {

backtrace_state* state = nullptr;
volatile sig_atomic_t first_signal = 0;  // the signal being reported (0: none yet)
pid_t reporter = 0;                      // the thread reporting it (its tid)
constexpr int REPORT_SECONDS = 10;       // the alarm that ends a report that hangs
constexpr int SIGNALS[] = {SIGSEGV, SIGABRT, SIGFPE, SIGILL, SIGBUS};

// A line built in a fixed buffer and written with write(2): async-signal-safe.
class line_out {
public:
    line_out& text(const char* s) {
        while (s != nullptr && *s != '\0' && used_ < sizeof buf_ - 1) buf_[used_++] = *s++;
        return *this;
    }
    line_out& number(unsigned long value) {
        char digits[24];
        int n = 0;
        do {
            digits[n++] = static_cast<char>('0' + value % 10);
            value /= 10;
        } while (value != 0);
        while (n > 0 && used_ < sizeof buf_ - 1) buf_[used_++] = digits[--n];
        return *this;
    }
    line_out& hex(std::uintptr_t value) {
        text("0x");
        char digits[20];
        int n = 0;
        do {
            digits[n++] = "0123456789abcdef"[value & 0xf];
            value >>= 4;
        } while (value != 0);
        while (n > 0 && used_ < sizeof buf_ - 1) buf_[used_++] = digits[--n];
        return *this;
    }
    void end() {
        buf_[used_++] = '\n';
        for (size_t done = 0; done < used_;) {
            const ssize_t n = ::write(2, buf_ + done, used_ - done);
            if (n <= 0) break;
            done += static_cast<size_t>(n);
        }
        used_ = 0;
    }

private:
    char buf_[1024];
    size_t used_ = 0;
};

const char* signal_name(int sig) {
    switch (sig) {
        case SIGSEGV:
            return "SIGSEGV (invalid memory access)";
        case SIGABRT:
            return "SIGABRT (abort)";
        case SIGFPE:
            return "SIGFPE (arithmetic error, e.g. an integer division by zero)";
        case SIGILL:
            return "SIGILL (illegal instruction)";
        case SIGBUS:
            return "SIGBUS (bus error)";
        default:
            return "a signal";
    }
}

struct frames {
    int count = 0;
    bool done = false;             // reached the launcher's loop: the rest is not the action's
    const char* symbol = nullptr;  // backtrace_syminfo's answer
};

// The launcher's glue that calls the entry point (entry.hpp): the frames from there on are
// the activation loop's, summed up in one line.
bool is_launcher_glue(const char* name, const char* file) {
    if (name != nullptr && std::strstr(name, "actionloop_entry_glue") != nullptr) return true;
    if (file == nullptr) return false;  // with -g: the wrapper compile generates (or CMake's)
    const size_t length = std::strlen(file);
    return std::strstr(file, ".actionloop-entry.cpp") != nullptr ||
           (length >= 10 && std::strcmp(file + length - 10, ".entry.cpp") == 0);
}

void on_error(void*, const char*, int) {}  // no symbols: the addresses are printed anyway

void on_symbol(void* data, std::uintptr_t, const char* name, std::uintptr_t, std::uintptr_t) {
    static_cast<frames*>(data)->symbol = name;
}

// One frame: "  #3 user::S::crash_null at action.cpp:14 (0x55d0c9a3f490)".
int on_frame(void* data, std::uintptr_t pc, const char* file, int line, const char* function) {
    auto* seen = static_cast<frames*>(data);
    if (seen->done || pc == static_cast<std::uintptr_t>(-1) || seen->count >= 64) return 0;
    if (function == nullptr) {  // no debug info for it: the symbol table's name
        seen->symbol = nullptr;
        backtrace_syminfo(state, pc, on_symbol, on_error, seen);
        function = seen->symbol;
    }
    if (function == nullptr && seen->count == 0) return 0;  // the signal's trampoline
    line_out out;
    out.text("  #").number(static_cast<unsigned long>(seen->count++)).text(" ");
    if (is_launcher_glue(function, file)) {
        seen->done = true;
        out.text("(the launcher's activation loop)").end();
        return 0;
    }
    char readable[512];
    const char* name = function == nullptr                                    ? "??"
                       : demangle_simple(function, readable, sizeof readable) ? readable
                                                                              : function;
    // compile's name for a `main` of the action's (entry.hpp)
    out.text(std::strcmp(name, "actionloop_user_main") == 0 ? "main" : name);
    if (file != nullptr && line > 0) {
        if (file[0] == '.' && file[1] == '/') file += 2;  // compile's upload-relative names
        out.text(" at ").text(file).text(":").number(static_cast<unsigned long>(line));
    }
    out.text(" (").hex(pc).text(")").end();
    return 0;
}

void print_backtrace(int skip) {
    line_out().text("backtrace (most recent call first):").end();
    frames seen;
    if (state != nullptr) backtrace_full(state, skip, on_frame, on_error, &seen);
    if (seen.count == 0) line_out().text("  (no frames could be read)").end();
}

// The default action for `sig`, unblocked, then the signal: the process ends as it would
// have without the report.
[[noreturn]] void die_of(int sig) {
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    ::sigaction(sig, &fallback, nullptr);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
}

void on_alarm(int) { die_of(first_signal != 0 ? first_signal : SIGABRT); }

void (*crash_flush)() = nullptr;

void on_crash(int sig, siginfo_t* info, void*) {
    const pid_t self = static_cast<pid_t>(::syscall(SYS_gettid));
    pid_t none = 0;
    if (!__atomic_compare_exchange_n(&reporter, &none, self, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST)) {
        // A crash inside the report ends the process with the first signal; another thread's
        // crash waits for the report to end the process (the alarm bounds both).
        if (none == self) die_of(first_signal != 0 ? first_signal : sig);
        for (;;) ::pause();
    }
    first_signal = sig;
    struct sigaction alarm_action {};
    alarm_action.sa_handler = on_alarm;
    sigemptyset(&alarm_action.sa_mask);
    ::sigaction(SIGALRM, &alarm_action, nullptr);
    ::alarm(REPORT_SECONDS);
    if (crash_flush != nullptr) crash_flush();
    line_out out;
    out.text("actionloop: the action crashed: ").text(signal_name(sig));
    if (sig == SIGSEGV || sig == SIGBUS) {
        out.text(" at address ").hex(reinterpret_cast<std::uintptr_t>(info->si_addr));
    }
    out.end();
    print_backtrace(1);
    die_of(sig);
}

// std::terminate: an exception nobody caught (a throw from a noexcept destructor, from a
// thread). Says which, then abort(): its SIGABRT report prints the backtrace, whose frames
// still include the throw's (the stack is not unwound before std::terminate).
[[noreturn]] void on_terminate() {
    line_out out;
    if (std::exception_ptr current = std::current_exception()) {
        out.text("actionloop: an exception escaped (std::terminate)");
        const std::type_info* type = abi::__cxa_current_exception_type();
        char readable[512];
        if (type != nullptr) {
            // type->name() is mangled without the _Z prefix.
            char mangled[512] = "_Z";
            std::strncat(mangled, type->name(), sizeof mangled - 3);
            out.text(": ").text(demangle_simple(mangled, readable, sizeof readable) ? readable
                                                                                    : type->name());
        }
        try {
            std::rethrow_exception(current);
        } catch (const std::exception& e) {
            out.text(": ").text(e.what());
        } catch (...) {
        }
    } else {
        out.text("actionloop: std::terminate was called");
    }
    out.end();
    std::abort();
}

// Itanium names, the simple cases: _Z [L] <name>, with <name> a <source-name> (<len><id>)
// or N [CV/ref] <prefix>... E; templates as <…>.
struct demangler {
    const char* in;
    char* out;
    unsigned long left;  // room in out, the NUL included
    const char* last = nullptr;
    int last_len = 0;

    bool put(const char* s, int n) {
        if (static_cast<unsigned long>(n) >= left) return false;
        std::memcpy(out, s, static_cast<size_t>(n));
        out += n;
        left -= static_cast<unsigned long>(n);
        *out = '\0';
        return true;
    }
    bool put(const char* s) { return put(s, static_cast<int>(std::strlen(s))); }

    bool source_name() {
        int len = 0;
        while (*in >= '0' && *in <= '9') len = len * 10 + (*in++ - '0');
        if (len <= 0 || static_cast<int>(std::strlen(in)) < len) return false;
        last = in;
        last_len = len;
        const bool anonymous = len >= 10 && std::strncmp(in, "_GLOBAL__N", 10) == 0;
        in += len;
        return anonymous ? put("(anonymous namespace)") : put(last, len);
    }

    // Template arguments, balanced, shown as <…>: I, N (nested names) and X (expressions) open
    // what E closes; names are skipped whole (they may hold those letters), literals too.
    bool template_args() {
        int depth = 0;
        do {
            if (*in == '\0') return false;
            if (*in >= '1' && *in <= '9') {
                long len = 0;
                while (*in >= '0' && *in <= '9') len = len * 10 + (*in++ - '0');
                if (len > static_cast<long>(std::strlen(in))) return false;
                in += len;
                continue;
            }
            if (*in == 'L') {  // a literal, L <type> <value> E: its digits are no length
                while (*in != '\0' && *in != 'E') ++in;
                if (*in == '\0') return false;
                ++in;
                continue;
            }
            if (*in == 'I' || *in == 'N' || *in == 'X') ++depth;
            if (*in == 'E') --depth;
            ++in;
        } while (depth > 0);
        return put("<…>");
    }

    bool component() {
        if (*in >= '0' && *in <= '9') return source_name();
        if (in[0] == 'C' && (in[1] == '1' || in[1] == '2' || in[1] == '3')) {
            in += 2;
            return last != nullptr && put(last, last_len);
        }
        if (in[0] == 'D' && (in[1] == '0' || in[1] == '1' || in[1] == '2')) {
            in += 2;
            return last != nullptr && put("~") && put(last, last_len);
        }
        return false;
    }

    bool name() {
        if (in[0] == 'S' && in[1] == 't') {
            in += 2;
            if (!put("std::")) return false;
        }
        if (*in != 'N') {
            if (!component()) return false;
            return *in != 'I' || template_args();
        }
        ++in;
        while (*in == 'K' || *in == 'V' || *in == 'r' || *in == 'R' || *in == 'O') ++in;
        if (in[0] == 'S' && in[1] == 't') {
            in += 2;
            if (!put("std")) return false;
            if (*in != 'E' && !put("::")) return false;
        }
        bool first = true;
        while (*in != 'E') {
            if (*in == 'I') {
                if (!template_args()) return false;
                continue;
            }
            if (!first && !put("::")) return false;
            if (!component()) return false;
            first = false;
        }
        ++in;
        return true;
    }
};

}  // namespace

bool demangle_simple(const char* mangled, char* out, unsigned long size) {
    if (mangled == nullptr || size == 0 || std::strncmp(mangled, "_Z", 2) != 0) return false;
    *out = '\0';
    demangler d{mangled + 2, out, size};
    if (*d.in == 'L') ++d.in;  // internal linkage
    if (!d.name()) return false;
    // What follows is the parameter types (not shown) or a clone suffix (.cold, .constprop.0).
    return true;
}

namespace {

// The program's own file, for libbacktrace; null: its default, /proc/self/exe. A program the
// kernel started is /proc/self/exe; one started through a dynamic loader named on the command
// line (a Lambda zip's bundled loader, see the proxy's engine/action_command.hpp) has the
// loader as /proc/self/exe, whose symbols would name every frame of the program wrongly, while
// AT_EXECFN is the program as the loader was given it.
const char* program_file() {
    static char program[PATH_MAX];
    const auto* execfn = reinterpret_cast<const char*>(::getauxval(AT_EXECFN));
    if (execfn == nullptr || ::realpath(execfn, program) == nullptr) return nullptr;
    char self[PATH_MAX];
    const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (length < 0) return program;  // no /proc: the default would find nothing either
    self[length] = '\0';
    return std::strcmp(self, program) == 0 ? nullptr : program;
}

}  // namespace

void set_crash_flush(void (*flush)()) { crash_flush = flush; }

void install_crash_report() {
    const char* off = std::getenv("ACTIONLOOP_NO_CRASH_REPORT");
    if (off != nullptr && std::strcmp(off, "1") == 0) return;
    state = backtrace_create_state(program_file(), 1, on_error, nullptr);
    // An alternate stack, so a stack overflow can be reported too (never freed: the process
    // keeps it to the end).
    static char alternate[256 * 1024];
    stack_t stack{};
    stack.ss_sp = alternate;
    stack.ss_size = sizeof alternate;
    ::sigaltstack(&stack, nullptr);
    struct sigaction action {};
    action.sa_sigaction = on_crash;
    sigemptyset(&action.sa_mask);
    // No SA_RESETHAND: another thread crashing meanwhile must reach on_crash, and wait there.
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    for (int sig : SIGNALS) ::sigaction(sig, &action, nullptr);
    std::set_terminate(on_terminate);
}

}  // namespace actionloop
