// The local Runtime API's rules, driven directly with an injected clock (Unix epoch
// milliseconds passed with each call): invokes paired with parked /next, ids and deadlines,
// the runtime's answers (202, 400, 410), timeouts, Managed-Instances refusals, the classic
// queue, the invocation-id echo, init errors and clients that go away.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <regex>
#include <string>

#include "lambda_api/broker.hpp"
#include "lambda_api/stats.hpp"
#include "lambda_test_util.hpp"

using namespace actionloop;
using namespace actionloop::lambda_api;
using lambda_test::header;
using lambda_test::recorder;

namespace {

constexpr std::int64_t T0 = 1'800'000'000'000;  // "now" in these tests
constexpr const char* ARN = "arn:aws:lambda:us-east-1:012345678912:function:test_function";

broker_config classic(std::int64_t timeout_ms = 3000) {
    broker_config c;
    c.timeout_ms = timeout_ms;
    c.function_arn = ARN;
    return c;
}

broker_config managed(size_t n) {
    broker_config c = classic();
    c.max_concurrency = n;
    return c;
}

invoke_request event(std::string body) {
    invoke_request i;
    i.event = std::move(body);
    return i;
}

runtime_post post(const std::string& id, std::string body = "{\"ok\":true}") {
    runtime_post p;
    p.request_id = id;
    p.body = std::move(body);
    return p;
}

std::string request_id(const answer& next) {
    return header(next, "Lambda-Runtime-Aws-Request-Id").value_or("");
}

// An invoke delivered to a /next parked first: the /next's answer.
answer delivered(broker& b, const recorder& invoker, std::int64_t at = T0,
                 std::string body = "{}") {
    recorder next;
    CHECK(b.next(next.reply(), at) != 0);
    CHECK(b.invoke(event(std::move(body)), invoker.reply(), at) == 0);
    return next.only();
}

std::string error_type(const answer& a) {
    return nlohmann::json::parse(a.body).at("errorType").get<std::string>();
}

}  // namespace

TEST_CASE("broker: a parked /next gets the invoke's event with Lambda's headers") {
    broker b(classic(), 1);
    recorder next;
    recorder invoker;
    CHECK(b.next(next.reply(), T0) != 0);
    CHECK(next.count() == 0);
    CHECK(b.stats().parked == 1);
    CHECK(b.invoke(event(R"({"name":"Ann"})"), invoker.reply(), T0 + 5) == 0);
    const answer& e = next.only();
    CHECK(e.status == 200);
    CHECK(e.json);
    CHECK(e.body == R"({"name":"Ann"})");
    const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
    CHECK(std::regex_match(request_id(e), uuid));
    CHECK(header(e, "Lambda-Runtime-Deadline-Ms") == std::to_string(T0 + 5 + 3000));
    CHECK(header(e, "Lambda-Runtime-Invoked-Function-Arn") == ARN);
    const std::regex xray("Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=1");
    CHECK(std::regex_match(header(e, "Lambda-Runtime-Trace-Id").value_or(""), xray));
    CHECK_FALSE(header(e, "Lambda-Runtime-Client-Context"));
    CHECK_FALSE(header(e, "Lambda-Runtime-Cognito-Identity"));
    CHECK_FALSE(header(e, "Lambda-Runtime-Aws-Tenant-Id"));
    CHECK_FALSE(header(e, "Lambda-Runtime-Invocation-Id"));
    CHECK(invoker.count() == 0);
    CHECK(b.busy());
    CHECK(b.stats().in_flight == 1);
    CHECK(b.stats().parked == 0);
}

TEST_CASE("broker: the invoke's trace, client context, Cognito identity and tenant go to /next") {
    broker b(classic(), 1);
    recorder next;
    recorder invoker;
    b.next(next.reply(), T0);
    invoke_request i = event("{}");
    i.trace_id = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    i.client_context = R"({"client":{}})";
    i.cognito_identity = R"({"cognitoIdentityId":"a","cognitoIdentityPoolId":"b"})";
    i.tenant_id = "t-1";
    b.invoke(i, invoker.reply(), T0);
    const answer& e = next.only();
    CHECK(header(e, "Lambda-Runtime-Trace-Id") == i.trace_id);
    CHECK(header(e, "Lambda-Runtime-Client-Context") == i.client_context);
    CHECK(header(e, "Lambda-Runtime-Cognito-Identity") == i.cognito_identity);
    CHECK(header(e, "Lambda-Runtime-Aws-Tenant-Id") == "t-1");
}

TEST_CASE("broker: a response is taken (202) and is the invoker's answer") {
    broker b(classic(), 1);
    recorder invoker;
    const std::string id = request_id(delivered(b, invoker));
    const answer taken = b.respond(post(id, R"({"greeting":"hi"})"), T0 + 10);
    CHECK(taken.status == 202);
    CHECK(taken.body == "{\"status\":\"OK\"}\n");
    const answer& result = invoker.only();
    CHECK(result.status == 200);
    CHECK(result.json);
    CHECK(result.body == R"({"greeting":"hi"})");
    CHECK(header(result, "X-Amzn-RequestId") == id);
    CHECK_FALSE(header(result, "X-Amz-Function-Error"));
    CHECK_FALSE(b.busy());
    CHECK(b.stats().responses == 1);
    CHECK_FALSE(b.earliest_deadline().has_value());
}

TEST_CASE("broker: an error post is the invoker's 200 with X-Amz-Function-Error: Unhandled") {
    broker b(classic(), 1);
    recorder invoker;
    const std::string id = request_id(delivered(b, invoker));
    const std::string error = R"({"errorMessage":"boom","errorType":"std::runtime_error"})";
    CHECK(b.fail(post(id, error), T0 + 1).status == 202);
    const answer& result = invoker.only();
    CHECK(result.status == 200);
    CHECK(result.body == error);
    CHECK(header(result, "X-Amz-Function-Error") == "Unhandled");
    CHECK(header(result, "X-Amzn-RequestId") == id);
    CHECK(b.stats().errors == 1);
}

TEST_CASE("broker: an error posted with no body reaches the invoker as an error of its type") {
    broker b(classic(), 1);
    recorder invoker;
    runtime_post p = post(request_id(delivered(b, invoker)), "");
    p.error_type = "Runtime.ExitError";
    CHECK(b.fail(p, T0).status == 202);
    CHECK(invoker.only().body ==
          "{\"errorMessage\":\"the runtime posted an error with an empty body\","
          "\"errorType\":\"Runtime.ExitError\"}\n");
}

TEST_CASE("broker: a post for an unknown id, or a second post, is a 400 InvalidRequestID") {
    broker b(classic(), 1);
    const answer unknown = b.respond(post("no-such-id"), T0);
    CHECK(unknown.status == 400);
    CHECK(unknown.body ==
          "{\"errorMessage\":\"Invalid request ID: 'no-such-id' is not an invocation handed out "
          "by /next (or it was forgotten)\",\"errorType\":\"InvalidRequestID\"}\n");
    recorder invoker;
    const std::string id = request_id(delivered(b, invoker));
    CHECK(b.respond(post(id), T0).status == 202);
    const answer again = b.respond(post(id), T0);
    CHECK(again.status == 400);
    CHECK(error_type(again) == "InvalidRequestID");
    CHECK(b.fail(post(id), T0).status == 400);
    CHECK(invoker.count() == 1);
    const api_stats s = b.stats();
    CHECK(s.unknown_ids == 1);
    CHECK(s.repeated_posts == 2);
    CHECK(s.responses == 1);
}

TEST_CASE("broker: the deadline counts from the /next that takes a queued invoke") {
    broker b(classic(1000), 1);
    recorder invoker;
    CHECK(b.invoke(event("{}"), invoker.reply(), T0) != 0);
    CHECK(b.stats().queued == 1);
    CHECK_FALSE(b.busy());
    recorder next;
    CHECK(b.next(next.reply(), T0 + 400) == 0);
    CHECK(header(next.only(), "Lambda-Runtime-Deadline-Ms") == std::to_string(T0 + 1400));
    CHECK(b.earliest_deadline() == T0 + 1400);
    CHECK(b.stats().queued == 0);
}

TEST_CASE("broker: a post at the deadline is too late: 410, and the invoker gets the timeout") {
    broker b(classic(1000), 1);
    recorder invoker;
    const std::string id = request_id(delivered(b, invoker));
    CHECK(b.respond(post(id), T0 + 999).status == 202);  // just in time

    recorder late_invoker;
    const std::string late = request_id(delivered(b, late_invoker, T0 + 2000));
    const answer gone = b.respond(post(late), T0 + 3000);
    CHECK(gone.status == 410);
    CHECK(error_type(gone) == "InvokeTimeout");
    const answer& timeout = late_invoker.only();
    CHECK(timeout.status == 200);
    CHECK(header(timeout, "X-Amz-Function-Error") == "Unhandled");
    CHECK(timeout.body == "{\"errorMessage\":\"RequestId: " + late +
                              " Error: Task timed out after 1.00 seconds\",\"errorType\":"
                              "\"Sandbox.Timedout\"}\n");
    // The 410 is given once; a further post is a 400.
    CHECK(b.fail(post(late), T0 + 3001).status == 400);
    const api_stats s = b.stats();
    CHECK(s.late_posts == 1);
    CHECK(s.timeouts == 1);
    CHECK(s.repeated_posts == 1);
}

TEST_CASE("broker: expire() times out what is due, in deadline order, and says what is next") {
    broker b(classic(1000), 1);
    recorder first;
    recorder second;
    const std::string a = request_id(delivered(b, first, T0));
    const std::string c = request_id(delivered(b, second, T0 + 300));
    CHECK(b.earliest_deadline() == T0 + 1000);
    CHECK(b.expire(T0 + 999) == T0 + 1000);
    CHECK(first.count() == 0);
    CHECK(b.expire(T0 + 1000) == T0 + 1300);
    CHECK(first.only().body.find("Task timed out after 1.00 seconds") != std::string::npos);
    CHECK(second.count() == 0);
    CHECK_FALSE(b.expire(T0 + 5000).has_value());
    CHECK(second.count() == 1);
    // A timed-out id: its first post gets 410, the next 400.
    CHECK(b.respond(post(a), T0 + 6000).status == 410);
    CHECK(b.respond(post(a), T0 + 6000).status == 400);
    CHECK(b.fail(post(c), T0 + 6000).status == 410);
    const api_stats s = b.stats();
    CHECK(s.timeouts == 2);
    CHECK(s.late_posts == 2);
    CHECK(s.repeated_posts == 1);
}

TEST_CASE("broker: after the clock steps back, deadlines still expire in their order") {
    broker b(classic(1000), 1);
    recorder first;
    recorder second;
    delivered(b, first, T0 + 500);  // deadline T0 + 1500
    delivered(b, second, T0);       // the clock went back: deadline T0 + 1000
    CHECK(b.earliest_deadline() == T0 + 1000);
    b.expire(T0 + 1000);
    CHECK(second.count() == 1);
    CHECK(first.count() == 0);
    CHECK(b.earliest_deadline() == T0 + 1500);
}

TEST_CASE("broker: the timeout text has the function's timeout to the hundredth of a second") {
    broker b(classic(250), 1);
    recorder invoker;
    delivered(b, invoker);
    b.expire(T0 + 250);
    CHECK(invoker.only().body.find("Task timed out after 0.25 seconds") != std::string::npos);
}

TEST_CASE("broker: Managed Instances: N /next park, the N+1st is refused at once with 500") {
    broker b(managed(3), 1);
    recorder parked[3];
    for (recorder& r : parked) CHECK(b.next(r.reply(), T0) != 0);
    recorder extra;
    CHECK(b.next(extra.reply(), T0) == 0);
    const answer& refused = extra.only();
    CHECK(refused.status == 500);
    CHECK(refused.body ==
          "{\"errorMessage\":\"3 GET /2018-06-01/runtime/invocation/next are parked already, as "
          "many as -max-concurrency 3 allows\",\"errorType\":\"Runtime.TooManyIdleRuntimes\"}\n");
    for (const recorder& r : parked) CHECK(r.count() == 0);
    api_stats s = b.stats();
    CHECK(s.parked == 3);
    CHECK(s.parked_peak == 3);
    CHECK(s.refused_next == 1);
    // Once one is served, one more may park.
    recorder invoker;
    b.invoke(event("{}"), invoker.reply(), T0);
    CHECK(parked[0].count() == 1);  // the oldest first
    recorder another;
    CHECK(b.next(another.reply(), T0) != 0);
    s = b.stats();
    CHECK(s.parked == 3);
    CHECK(s.parked_peak == 3);
}

TEST_CASE("broker: Managed Instances: an invoke with no /next parked fails at once, not queued") {
    broker b(managed(2), 1);
    recorder invoker;
    CHECK(b.invoke(event("{}"), invoker.reply(), T0) == 0);
    const answer& refused = invoker.only();
    CHECK(refused.status == 400);
    CHECK(header(refused, "Error-Type") == "Runtime.Unavailable");
    CHECK(error_type(refused) == "Runtime.Unavailable");
    // Not queued: the next /next parks.
    recorder next;
    CHECK(b.next(next.reply(), T0) != 0);
    CHECK(next.count() == 0);
    const api_stats s = b.stats();
    CHECK(s.invokes == 1);
    CHECK(s.refused_invokes == 1);
    CHECK(s.queued_peak == 0);
}

TEST_CASE("broker: Managed Instances: N invocations run at once, each answered on its own") {
    broker b(managed(2), 1);
    recorder n1;
    recorder n2;
    b.next(n1.reply(), T0);
    b.next(n2.reply(), T0);
    recorder i1;
    recorder i2;
    b.invoke(event("1"), i1.reply(), T0);
    b.invoke(event("2"), i2.reply(), T0);
    CHECK(n1.only().body == "1");
    CHECK(n2.only().body == "2");
    CHECK(b.stats().in_flight == 2);
    CHECK(b.respond(post(request_id(n2.only()), "two"), T0).status == 202);
    CHECK(b.respond(post(request_id(n1.only()), "one"), T0).status == 202);
    CHECK(i1.only().body == "one");
    CHECK(i2.only().body == "two");
    CHECK(b.stats().in_flight_peak == 2);
}

TEST_CASE("broker: classic: invokes queue in order up to the bound, past it 429") {
    broker_config c = classic();
    c.max_queued = 2;
    broker b(c, 1);
    recorder i1;
    recorder i2;
    recorder i3;
    CHECK(b.invoke(event("1"), i1.reply(), T0) != 0);
    CHECK(b.invoke(event("2"), i2.reply(), T0) != 0);
    CHECK(b.invoke(event("3"), i3.reply(), T0) == 0);
    const answer& full = i3.only();
    CHECK(full.status == 429);
    CHECK(header(full, "Retry-After") == "1");
    CHECK(error_type(full) == "TooManyRequestsException");
    CHECK(full.body.find("-max-queue (2)") != std::string::npos);
    recorder n1;
    recorder n2;
    b.next(n1.reply(), T0);
    b.next(n2.reply(), T0);
    CHECK(n1.only().body == "1");
    CHECK(n2.only().body == "2");
    const api_stats s = b.stats();
    CHECK(s.queued_peak == 2);
    CHECK(s.refused_invokes == 1);
    CHECK(s.delivered == 2);
}

TEST_CASE("broker: classic: /next park up to -max-parked, then 500") {
    broker_config c = classic();
    c.max_parked = 2;
    broker b(c, 1);
    recorder n[3];
    CHECK(b.next(n[0].reply(), T0) != 0);
    CHECK(b.next(n[1].reply(), T0) != 0);
    CHECK(b.next(n[2].reply(), T0) == 0);
    CHECK(n[2].only().status == 500);
    CHECK(n[2].only().body.find("-max-parked 2") != std::string::npos);
}

TEST_CASE("broker: a parked /next whose client left is never given an invoke") {
    broker b(managed(1), 1);
    recorder dead;
    const broker::ticket t = b.next(dead.reply(), T0);
    b.next_gone(t);
    b.next_gone(t);  // twice, or a ticket served already: nothing
    CHECK(b.stats().parked == 0);
    CHECK(b.stats().gone_next == 1);
    recorder invoker;
    b.invoke(event("{}"), invoker.reply(), T0);
    CHECK(invoker.only().status == 400);  // Runtime.Unavailable: nobody parked
    CHECK(dead.count() == 0);
    recorder alive;
    CHECK(b.next(alive.reply(), T0) != 0);  // the place is free again
}

TEST_CASE("broker: a queued invoke whose client left is not given to the next /next") {
    broker b(classic(), 1);
    recorder left;
    recorder stays;
    const broker::ticket t = b.invoke(event("left"), left.reply(), T0);
    b.invoke(event("stays"), stays.reply(), T0);
    b.invoke_gone(t);
    recorder next;
    b.next(next.reply(), T0);
    CHECK(next.only().body == "stays");
    CHECK(b.stats().gone_invokes == 1);
    b.invoke_gone(12345);
    CHECK(b.stats().gone_invokes == 1);
}

TEST_CASE("broker: with invocation ids, /next sends one and the posts' echo is checked") {
    broker_config c = classic();
    c.invocation_ids = true;
    broker b(c, 1);

    recorder i1;
    const answer e1 = delivered(b, i1);
    const std::string inv1 = header(e1, "Lambda-Runtime-Invocation-Id").value_or("");
    CHECK(inv1.size() == 36);
    CHECK(inv1 != request_id(e1));
    runtime_post echoed = post(request_id(e1));
    echoed.invocation_id = inv1;
    CHECK(b.respond(echoed, T0).status == 202);

    recorder i2;
    const answer e2 = delivered(b, i2);
    CHECK(header(e2, "Lambda-Runtime-Invocation-Id") != inv1);
    runtime_post wrong = post(request_id(e2));
    wrong.invocation_id = inv1;  // another invocation's
    const answer refused = b.respond(wrong, T0);
    CHECK(refused.status == 400);
    CHECK(error_type(refused) == "InvalidRequestID");
    CHECK(refused.body.find("echoes Lambda-Runtime-Invocation-Id '" + inv1 + "'") !=
          std::string::npos);
    CHECK(i2.count() == 0);  // still in flight: the right post may come
    CHECK(b.fail(post(request_id(e2)), T0).status == 202);  // no echo: taken, counted
    CHECK(header(i2.only(), "X-Amz-Function-Error") == "Unhandled");

    const api_stats s = b.stats();
    CHECK(s.echo_ok == 1);
    CHECK(s.echo_wrong == 1);
    CHECK(s.echo_missing == 1);
}

TEST_CASE("broker: without invocation ids nothing is sent or counted") {
    broker b(classic(), 1);
    recorder invoker;
    const answer e = delivered(b, invoker);
    CHECK_FALSE(header(e, "Lambda-Runtime-Invocation-Id"));
    runtime_post p = post(request_id(e));
    p.invocation_id = "anything";
    CHECK(b.respond(p, T0).status == 202);
    const api_stats s = b.stats();
    CHECK(s.echo_ok + s.echo_missing + s.echo_wrong == 0);
}

TEST_CASE("broker: an init error fails the waiting invokes and every invoke until a /next") {
    broker b(classic(), 1);
    recorder waiting;
    b.invoke(event("{}"), waiting.reply(), T0);
    const std::string error = R"({"errorMessage":"bad config","errorType":"Runtime.InitError"})";
    const answer taken = b.init_error(error, "Runtime.InitError");
    CHECK(taken.status == 202);
    CHECK(taken.body == "{\"status\":\"OK\"}\n");
    const answer& failed = waiting.only();
    CHECK(failed.status == 200);
    CHECK(failed.body == error);
    CHECK(header(failed, "X-Amz-Function-Error") == "Unhandled");
    CHECK(header(failed, "X-Amzn-RequestId").value_or("").size() == 36);
    recorder later;
    CHECK(b.invoke(event("{}"), later.reply(), T0) == 0);
    CHECK(later.only().body == error);
    api_stats s = b.stats();
    CHECK(s.init_errors == 1);
    CHECK(s.init_failed_invokes == 2);
    CHECK(s.init_failed);
    CHECK(s.queued == 0);
    // A runtime polls again: started anew, the invokes go to it.
    recorder next;
    b.next(next.reply(), T0);
    CHECK_FALSE(b.stats().init_failed);
    recorder served;
    b.invoke(event("{\"again\":1}"), served.reply(), T0);
    CHECK(next.only().body == "{\"again\":1}");
}

TEST_CASE("broker: an init error posted with no body is made one of its type") {
    broker b(classic(), 1);
    b.init_error("", "Runtime.InitError");
    recorder invoker;
    b.invoke(event("{}"), invoker.reply(), T0);
    CHECK(invoker.only().body ==
          "{\"errorMessage\":\"the runtime posted an init error with an empty body\","
          "\"errorType\":\"Runtime.InitError\"}\n");
}

TEST_CASE("broker: an oversized answer: 413 to the runtime, Function.ResponseSizeTooLarge to "
          "the invoker") {
    broker_config c = classic();
    c.max_body_bytes = 100;
    broker b(c, 1);
    recorder invoker;
    const std::string id = request_id(delivered(b, invoker));
    const answer refused = b.too_large(id, T0);
    CHECK(refused.status == 413);
    CHECK(refused.body == "{\"errorMessage\":\"Exceeded maximum allowed payload size (100 bytes, "
                          "-max-body-bytes).\",\"errorType\":\"RequestEntityTooLarge\"}\n");
    const answer& failed = invoker.only();
    CHECK(header(failed, "X-Amz-Function-Error") == "Unhandled");
    CHECK(error_type(failed) == "Function.ResponseSizeTooLarge");
    CHECK(b.respond(post(id), T0).status == 400);  // answered
    // An oversized invoke, or a post for no invocation: the 413 only.
    CHECK(b.too_large("", T0).status == 413);
    CHECK(b.too_large("unknown", T0).status == 413);
    CHECK(b.stats().too_large == 3);
}

TEST_CASE("broker: finished ids are remembered up to -keep-ids, then a post is unknown") {
    broker_config c = classic();
    c.kept_ids = 1;
    broker b(c, 1);
    recorder i1;
    recorder i2;
    const std::string first = request_id(delivered(b, i1));
    CHECK(b.respond(post(first), T0).status == 202);
    const std::string second = request_id(delivered(b, i2));
    CHECK(b.respond(post(second), T0).status == 202);
    CHECK(b.respond(post(second), T0).body.find("answered already") != std::string::npos);
    CHECK(b.respond(post(first), T0).body.find("is not an invocation") != std::string::npos);
}

TEST_CASE("broker: a reply given no answer is never called twice, nor after a timeout's answer") {
    broker b(classic(100), 1);
    recorder invoker;
    const std::string id = request_id(delivered(b, invoker));
    b.expire(T0 + 100);
    CHECK(b.respond(post(id), T0 + 101).status == 410);
    b.expire(T0 + 10000);
    CHECK(invoker.count() == 1);
}

TEST_CASE("stats: the JSON names every count") {
    api_stats s;
    s.invokes = 3;
    s.parked_peak = 2;
    s.init_failed = true;
    const nlohmann::json j = nlohmann::json::parse(stats_json(s));
    CHECK(j.at("invokes") == 3);
    CHECK(j.at("parked_peak") == 2);
    CHECK(j.at("init_failed") == true);
    for (const char* field : {"delivered",     "responses",           "errors",
                              "timeouts",      "refused_invokes",     "refused_next",
                              "late_posts",    "unknown_ids",         "repeated_posts",
                              "echo_ok",       "echo_missing",        "echo_wrong",
                              "init_errors",   "init_failed_invokes", "too_large",
                              "gone_next",     "gone_invokes",        "parked",
                              "queued",        "queued_peak",         "in_flight",
                              "in_flight_peak"}) {
        CAPTURE(field);
        CHECK(j.at(field) == 0);
    }
    CHECK(j.size() == 25);
}
