// write_pacing.cpp — see write_pacing.hpp.
#include "gateway/ledger/write_pacing.hpp"

namespace alerts::gateway {

bool write_pacing::due(pending_writes writes, time_point now, bool stopping) {
    if (writes == pending_writes::none) {
        first_waiting_.reset();
        return false;
    }
    if (stopping || writes == pending_writes::urgent) return true;
    if (!first_waiting_) first_waiting_ = now;
    return now - *first_waiting_ >= delay_;
}

std::optional<write_pacing::time_point> write_pacing::next_due() const {
    if (!first_waiting_) return std::nullopt;
    return *first_waiting_ + delay_;
}

}  // namespace alerts::gateway
