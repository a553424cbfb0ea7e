#include "lambda_api/stats.hpp"

#include <nlohmann/json.hpp>

namespace actionloop::lambda_api {

std::string stats_json(const api_stats& s) {
    nlohmann::ordered_json j;
    j["invokes"] = s.invokes;
    j["delivered"] = s.delivered;
    j["responses"] = s.responses;
    j["errors"] = s.errors;
    j["timeouts"] = s.timeouts;
    j["refused_invokes"] = s.refused_invokes;
    j["refused_next"] = s.refused_next;
    j["late_posts"] = s.late_posts;
    j["unknown_ids"] = s.unknown_ids;
    j["repeated_posts"] = s.repeated_posts;
    j["echo_ok"] = s.echo_ok;
    j["echo_missing"] = s.echo_missing;
    j["echo_wrong"] = s.echo_wrong;
    j["init_errors"] = s.init_errors;
    j["init_failed_invokes"] = s.init_failed_invokes;
    j["too_large"] = s.too_large;
    j["gone_next"] = s.gone_next;
    j["gone_invokes"] = s.gone_invokes;
    j["parked"] = s.parked;
    j["parked_peak"] = s.parked_peak;
    j["queued"] = s.queued;
    j["queued_peak"] = s.queued_peak;
    j["in_flight"] = s.in_flight;
    j["in_flight_peak"] = s.in_flight_peak;
    j["init_failed"] = s.init_failed;
    return j.dump() + "\n";
}

}  // namespace actionloop::lambda_api
