// console_api.hpp — alertgw's console (actions/alerts/README.md, "Operating the pipeline"): the
// JSON API under /api/v1/ that alertctl and the pages use. One place turns every failure into
// an answer: a bad request 400, a write without the token 401 (403 when alertgw has no token),
// an unknown thing 404, a conflict 409, Redis unreachable 503; each {"error": "..."}.
//
//   GET    /api/v1/silences                    {"silences": [...]} (each with its "status")
//   POST   /api/v1/silences                    a silence (core/silence.hpp) -> 201 {"silence"}
//   DELETE /api/v1/silences/ID                 ends it now -> {"silence"}
//   GET    /api/v1/deadletters?count=N         {"deadLetters": [...], "total": N}
//   GET    /api/v1/deadletters/ID              {"deadLetter": {...}}
//   POST   /api/v1/deadletters/ID/replay       -> {"replayed": ID, "entry": outbox id}
//   DELETE /api/v1/deadletters/ID              -> {"purged": 1}
//   DELETE /api/v1/deadletters?all=1           -> {"purged": N}
//   GET    /api/v1/state?account=A             {"counts", "devices": {"offline": [...],
//                                               "pending", "flapping", "silenced", "inhibited"}}
//   GET    /api/v1/explain?account=A&device=D&from=T1&to=T2   {"heldBack": [...]}: what the
//                                               rules held back for D, newest first
//   GET    /api/v1/notifications?count=N       the newest outbox entries
#pragma once

#include <functional>
#include <string>

#include "gateway/console/console_store.hpp"
#include "http/http_server.hpp"

namespace alerts::gateway {

class console_api {
public:
    /// `token`: what a write's "Authorization: Bearer" must carry ("": writes are refused);
    /// `clock`: seconds since the epoch.
    console_api(console_store& store, std::string token, std::function<double()> clock);

    /// Answers a request under /api/v1/ (the caller routes the rest).
    actionloop::http_response handle(const actionloop::http_request& request);

private:
    actionloop::http_response route(const actionloop::http_request& request);
    void require_writer(const actionloop::http_request& request) const;

    console_store& store_;
    std::string token_;
    std::function<double()> clock_;
};

/// The status a silence has at `now`: "pending", "active", "ended".
std::string silence_status(const silence& s, double now);

}  // namespace alerts::gateway
