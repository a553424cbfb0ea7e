// The crash report's allocation-free demangler (launcher/src/crash_report.hpp): the names a
// backtrace shows, and what it leaves mangled.
#include <doctest/doctest.h>

#include <string>

#include "crash_report.hpp"

using actionloop::demangle_simple;

namespace {

std::string demangled(const char* mangled, unsigned long size = 256) {
    char out[256];
    return demangle_simple(mangled, out, size) ? std::string(out) : std::string("<mangled>");
}

}  // namespace

TEST_CASE("crash report: functions in namespaces and classes, constructors, destructors") {
    CHECK(demangled("_Z10read_pricePVi") == "read_price");
    CHECK(demangled("_ZN4shop10read_priceEPVi") == "shop::read_price");
    CHECK(demangled("_ZN4shop7receiptD2Ev") == "shop::receipt::~receipt");
    CHECK(demangled("_ZN4shop7receiptC1Ev") == "shop::receipt::receipt");
    CHECK(demangled("_ZNK4shop4cart5totalEv") == "shop::cart::total");
    CHECK(demangled("_ZN12_GLOBAL__N_14helpEv") == "(anonymous namespace)::help");
    CHECK(demangled("_ZL6helperv") == "helper");
    CHECK(demangled("_ZSt9terminatev") == "std::terminate");
    CHECK(demangled("_ZN4shop10read_priceEPVi.cold") == "shop::read_price");
}

TEST_CASE("crash report: template arguments are shown as <…>, balanced") {
    CHECK(demangled("_ZNKSt6vectorIiSaIiEE4sizeEv") == "std::vector<…>::size");
    CHECK(demangled("_ZN5outer5innerIiE3getEv") == "outer::inner<…>::get");
    CHECK(demangled("_ZN3fooILi3EE3barEv") == "foo<…>::bar");
    CHECK(demangled("_ZN3fooIN3Inf1EEE3barEv") == "foo<…>::bar");  // 'I' and 'E' in names
    CHECK(demangled("_Z3maxIiET_S0_S0_") == "max<…>");
}

TEST_CASE("crash report: what the demangler does not know stays mangled, and it never overflows") {
    CHECK(demangled("_ZN3fooclEv") == "<mangled>");  // operator()
    CHECK(demangled("main") == "<mangled>");         // not a C++ name
    CHECK(demangled("_Z") == "<mangled>");
    CHECK(demangled("_Z99short") == "<mangled>");                    // a length past the end
    CHECK(demangled("_ZN3foo") == "<mangled>");                      // no E
    CHECK(demangled("_ZN4shop10read_priceEPVi", 8) == "<mangled>");  // does not fit
    CHECK_FALSE(demangle_simple(nullptr, nullptr, 0));
}
