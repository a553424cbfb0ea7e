// The X-Ray trace header (launcher/src/xray_trace.hpp): Lambda's Lambda-Runtime-Trace-Id read
// into a W3C trace-id and sampled flag; anything malformed is no trace, never a wrong one.
#include <doctest/doctest.h>

#include <string>

#include "xray_trace.hpp"

using actionloop::parse_xray_trace;

namespace {

const std::string ROOT = "Root=1-5759e988-bd862e3fe1be46a994272793";
const std::string TRACE_ID = "5759e988bd862e3fe1be46a994272793";

// "<trace-id>/<0|1>", or "none".
std::string parsed(const std::string& header) {
    const auto trace = parse_xray_trace(header);
    if (!trace) return "none";
    return trace->trace_id + (trace->sampled ? "/1" : "/0");
}

}  // namespace

TEST_CASE("xray trace: Lambda's header gives the trace-id and Sampled") {
    CHECK(parsed(ROOT + ";Parent=53995c3f42cd8ad8;Sampled=1") == TRACE_ID + "/1");
    CHECK(parsed(ROOT + ";Parent=53995c3f42cd8ad8;Sampled=0") == TRACE_ID + "/0");
    CHECK(parsed(ROOT) == TRACE_ID + "/0");  // no Sampled: not sampled
    CHECK(parsed(ROOT + ";Sampled=?") == TRACE_ID + "/0");
    CHECK(parsed(ROOT + ";Sampled=") == TRACE_ID + "/0");
    CHECK(parsed(ROOT + ";Sampled=10") == TRACE_ID + "/0");
    // Any order, other fields, spaces around the fields, a trailing ';'.
    CHECK(parsed("Sampled=1;Lineage=a87bd80c:1|68fd508a:5;" + ROOT + ";Parent=53995c3f42cd8ad8") ==
          TRACE_ID + "/1");
    CHECK(parsed(" " + ROOT + " ; Sampled = 1 ;") == TRACE_ID + "/1");
    // The first of a repeated field counts.
    CHECK(parsed(ROOT + ";Sampled=1;Sampled=0") == TRACE_ID + "/1");
    CHECK(parsed(ROOT + ";Root=1-00000000-000000000000000000000001") == TRACE_ID + "/0");
    // Upper-case hex digits are read, the trace-id is lower case (as W3C requires).
    CHECK(parsed("Root=1-5759E988-BD862E3FE1BE46A994272793;Sampled=1") == TRACE_ID + "/1");
    // All zeros but one digit is a valid id.
    CHECK(parsed("Root=1-00000000-000000000000000000000001") ==
          "00000000000000000000000000000001/0");
}

TEST_CASE("xray trace: a malformed or missing Root is no trace") {
    for (const std::string& header : {
             std::string(),
             std::string(";;;"),
             std::string("Sampled=1"),
             std::string("Parent=53995c3f42cd8ad8;Sampled=1"),
             std::string("Root="),
             std::string("Root"),
             std::string("root=1-5759e988-bd862e3fe1be46a994272793"),   // keys are case-sensitive
             std::string("Root=2-5759e988-bd862e3fe1be46a994272793"),   // another version
             std::string("Root=1-5759e988-bd862e3fe1be46a99427279"),    // 23 random digits
             std::string("Root=1-5759e988-bd862e3fe1be46a9942727930"),  // 25
             std::string("Root=1-5759e98-8bd862e3fe1be46a994272793"),   // '-' misplaced
             std::string("Root=1-5759e988bd862e3fe1be46a994272793"),    // no second '-'
             std::string("Root=1_5759e988-bd862e3fe1be46a994272793"),   // not '-'
             std::string("Root=1-5759e988-bd862e3fe1be46a99427279g"),   // not hex
             std::string("Root=1-5759e988-bd862e3fe1be46a9942727 3"),   // a space inside
             std::string("Root=1-00000000-000000000000000000000000"),   // all zeros
             std::string("Root=1-5759e988-bd862e3fe1be46a994272793x"),  // trailing junk
             std::string("Root=1-5759e988-bd862e3fe1be46a994272793,Sampled=1"),
             std::string("Root=1-5759e988-bd862e3fe1be46a994\0"
                         "72793",
                         40),  // a NUL
             std::string("Root=1-5759e988-bd862e3fe1be46a994272793\xff"),
             std::string("Root=0-5759e988-bd862e3fe1be46a994272793;Root=1-5759e988-"
                         "bd862e3fe1be46a994272793"),
         }) {
        CHECK_MESSAGE(parsed(header) == "none", header);
    }
}

TEST_CASE("xray trace: a megabyte of empty fields is no trace, and a Root after them is read") {
    const std::string header(1 << 20, ';');
    CHECK(parsed(header) == "none");
    CHECK(parsed(header + ROOT + ";Sampled=1") == TRACE_ID + "/1");
}
