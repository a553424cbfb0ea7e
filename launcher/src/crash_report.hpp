// crash_report.hpp — what a crashing action prints before it dies: a backtrace naming its
// functions (file:line when built with -g), on stderr, so it lands in the activation's log
// before the sentinels the proxy writes once the process is gone.
//
// Covered: SIGSEGV, SIGABRT, SIGFPE, SIGILL, SIGBUS, and an exception that reaches
// std::terminate (a throw from a noexcept destructor, from a thread of the action's). After
// the report the process dies of the same signal as it would have without it (the proxy
// restarts it). The signal handler only calls async-signal-safe code: write(2) into a stack
// buffer, and GCC's libbacktrace (libgcc-N-dev's libbacktrace.a, built without malloc: it
// reads the executable's symbol table and DWARF with mmap) set up before the first
// activation. A crash or a hang inside the report cannot keep the process alive: the handler
// runs once (a second fault in the reporting thread dies of the first signal, a
// crash in another thread waits for the report to end the process) and an alarm (10 s) ends
// a report that hangs.
#pragma once

namespace actionloop {

/// Installs the handlers (and an alternate signal stack, so a stack overflow is reported).
/// Once, before serving; ACTIONLOOP_NO_CRASH_REPORT=1 in the environment turns it off.
void install_crash_report();

/// Called by the handler first, before the report: writes out what the launcher holds (the
/// answers and logs of a batch, answer_writer.hpp) so the report follows them. It must not
/// wait for a lock (the crash may be inside the holder).
void set_crash_flush(void (*flush)());

/// Demangles an Itanium C++ name without allocating (for the signal handler): functions in
/// namespaces and classes, constructors and destructors, template arguments shown as <…>,
/// clone suffixes dropped. Writes at most `size` - 1 chars and a NUL into `out`; returns
/// false (and leaves `out` unspecified) for what it does not know (operators, lambdas, …),
/// which the caller prints as is.
bool demangle_simple(const char* mangled, char* out, unsigned long size);

}  // namespace actionloop
