// delivery_ledger.cpp — see delivery_ledger.hpp.
#include "gateway/ledger/delivery_ledger.hpp"

#include <algorithm>
#include <cstdlib>

#include "gateway/ledger/email_address.hpp"

namespace alerts::gateway {

namespace {

bool is_active(delivery_state state) {
    return state == delivery_state::queued || state == delivery_state::sending ||
           state == delivery_state::waiting;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
    return out;
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        if (comma > start) out.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

constexpr std::string_view RETRY_PREFIX = "retry:";

}  // namespace

bool is_final(delivery_state state) {
    return state == delivery_state::delivered || state == delivery_state::dead ||
           state == delivery_state::skipped;
}

std::string progress_word(const target_progress& progress) {
    switch (progress.state) {
        case delivery_state::delivered:
            return "delivered";
        case delivery_state::dead:
            return "dead";
        case delivery_state::skipped:
            return "skipped";
        default:
            return std::string(RETRY_PREFIX) + joined(progress.recipients);
    }
}

delivery_ledger::delivery_ledger(std::vector<target_spec> targets, retry_policy retry,
                                 ledger_limits limits)
    : specs_(std::move(targets)), retry_(retry), limits_(limits), targets_(specs_.size()) {}

std::size_t delivery_ledger::room() const {
    if (entries_.size() >= limits_.max_held) return 0;
    std::size_t widest = 0;
    for (const target_queue& queue : targets_) {
        if (queue.active < limits_.window_per_target) {
            widest = std::max(widest, limits_.window_per_target - queue.active);
        }
    }
    return std::min(widest, limits_.max_held - entries_.size());
}

const held_entry* delivery_ledger::find(const std::string& entry_id) const {
    const auto found = entries_.find(entry_id);
    return found == entries_.end() ? nullptr : &found->second;
}

std::vector<std::string> delivery_ledger::held_ids() const {
    std::vector<std::string> ids;
    ids.reserve(entries_.size());
    for (const auto& [id, entry] : entries_) ids.push_back(id);
    return ids;
}

void delivery_ledger::add(new_entry source) {
    if (holds(source.id)) return;
    held_entry entry;
    entry.id = source.id;
    entry.commit_ms = std::strtoll(source.id.c_str(), nullptr, 10);
    entry.dedup_key = std::move(source.dedup_key);
    entry.notification = std::move(source.notification);
    entry.targets.resize(specs_.size());
    for (std::size_t target = 0; target < specs_.size(); ++target) {
        if (specs_[target].email) entry.targets[target].recipients = source.recipients;
    }
    restore_progress(entry, source);
    held_entry& stored = entries_.emplace(entry.id, std::move(entry)).first->second;
    schedule_new(stored);
}

void delivery_ledger::schedule_new(held_entry& entry) {
    for (std::size_t target = 0; target < specs_.size(); ++target) {
        target_progress& progress = entry.targets[target];
        if (is_final(progress.state)) continue;
        if (specs_[target].email && !progress.narrowed) check_recipients(entry, target);
        if (!is_final(progress.state)) enter(entry, target);
    }
    changed(entry);  // all final at once (skipped, or done before a claim): acknowledged next
}

void delivery_ledger::restore_progress(held_entry& entry, const new_entry& source) {
    entry.progress_may_exist = !source.progress.empty();
    // A routed notification goes to the webhooks its receivers name, not to the others.
    if (source.webhooks) {
        for (std::size_t target = 0; target < specs_.size(); ++target) {
            const std::vector<std::string>& named = *source.webhooks;
            if (specs_[target].email ||
                std::find(named.begin(), named.end(), specs_[target].name) != named.end()) {
                continue;
            }
            entry.targets[target].state = delivery_state::skipped;
            entry.targets[target].saved = true;
        }
    }
    // A replayed dead letter is for its own target: the others have it already.
    if (!source.only.empty() && source.only != "all") {
        for (std::size_t target = 0; target < specs_.size(); ++target) {
            if (specs_[target].name == source.only) continue;
            entry.targets[target].state = delivery_state::skipped;
            entry.targets[target].saved = true;
        }
    }
    for (const auto& [name, word] : source.progress) {
        for (std::size_t target = 0; target < specs_.size(); ++target) {
            if (specs_[target].name != name) continue;
            target_progress& progress = entry.targets[target];
            progress.saved = true;
            if (word == "delivered") {
                progress.state = delivery_state::delivered;
            } else if (word == "dead") {
                progress.state = delivery_state::dead;
            } else if (word == "skipped") {
                progress.state = delivery_state::skipped;
            } else if (word.rfind(RETRY_PREFIX, 0) == 0) {
                progress.recipients = split_list(word.substr(RETRY_PREFIX.size()));
                progress.narrowed = true;
            }
        }
    }
}

void delivery_ledger::check_recipients(held_entry& entry, std::size_t target) {
    target_progress& progress = entry.targets[target];
    if (progress.recipients.empty()) {
        settle(entry, target, delivery_state::skipped, "no recipients");
        return;
    }
    std::vector<std::string> valid;
    for (const std::string& address : progress.recipients) {
        if (is_email_address(address)) {
            valid.push_back(address);
            continue;
        }
        const std::string error = "not an e-mail address";
        letter(entry, target, address, error);
        emit(ledger_event::kind::dead_letter, entry, target, error, address);
    }
    if (valid.size() == progress.recipients.size()) return;
    progress.recipients = std::move(valid);
    progress.narrowed = true;
    if (progress.recipients.empty()) {
        settle(entry, target, delivery_state::dead, "no valid e-mail address");
    }
}

void delivery_ledger::enter(held_entry& entry, std::size_t target) {
    target_queue& queue = targets_[target];
    target_progress& progress = entry.targets[target];
    if (queue.active < limits_.window_per_target) {
        progress.state = delivery_state::queued;
        ++queue.active;
        queue.ready.push_back(entry.id);
    } else {
        progress.state = delivery_state::parked;
        queue.parked.push_back(entry.id);
    }
}

void delivery_ledger::unpark(std::size_t target) {
    target_queue& queue = targets_[target];
    while (queue.active < limits_.window_per_target && !queue.parked.empty()) {
        const std::string id = std::move(queue.parked.front());
        queue.parked.pop_front();
        const auto found = entries_.find(id);
        if (found == entries_.end()) continue;
        target_progress& progress = found->second.targets[target];
        if (progress.state != delivery_state::parked) continue;
        progress.state = delivery_state::queued;
        ++queue.active;
        queue.ready.push_back(id);
    }
}

void delivery_ledger::settle(held_entry& entry, std::size_t target, delivery_state state,
                             const std::string& error) {
    target_progress& progress = entry.targets[target];
    const bool was_active = is_active(progress.state);
    progress.state = state;
    progress.last_error = error;
    progress.saved = false;
    if (was_active) {
        --targets_[target].active;
        unpark(target);
    }
    if (state == delivery_state::delivered) {
        entry.delivered_to.push_back(specs_[target].name);
        emit(ledger_event::kind::delivered, entry, target);
    } else if (state == delivery_state::skipped) {
        emit(ledger_event::kind::skipped, entry, target, error);
    }
    changed(entry);
    if (all_final(entry) && !entry.delivered_to.empty()) {
        emit(ledger_event::kind::complete, entry, target);
    }
}

void delivery_ledger::acknowledge_unusable(const std::string& entry_id,
                                           std::optional<dead_letter> letter) {
    if (letter) letters_.push_back(std::move(*letter));
    unusable_.push_back(entry_id);
}

void delivery_ledger::wake_due(steady_time now) {
    while (!wakes_.empty() && wakes_.begin()->first <= now) {
        const auto [id, target] = wakes_.begin()->second;
        wakes_.erase(wakes_.begin());
        const auto found = entries_.find(id);
        if (found == entries_.end()) continue;
        target_progress& progress = found->second.targets[target];
        if (progress.state != delivery_state::waiting) continue;
        progress.state = delivery_state::queued;
        targets_[target].ready.push_back(id);
    }
}

std::optional<steady_time> delivery_ledger::next_wake() const {
    if (wakes_.empty()) return std::nullopt;
    return wakes_.begin()->first;
}

std::vector<send_order> delivery_ledger::take_sends() {
    std::vector<send_order> orders;
    for (std::size_t target = 0; target < targets_.size(); ++target) {
        target_queue& queue = targets_[target];
        while (queue.in_flight < limits_.concurrency && !queue.ready.empty()) {
            const std::string id = std::move(queue.ready.front());
            queue.ready.pop_front();
            const auto found = entries_.find(id);
            if (found == entries_.end()) continue;
            target_progress& progress = found->second.targets[target];
            if (progress.state != delivery_state::queued) continue;
            progress.state = delivery_state::sending;
            ++progress.attempts;
            ++queue.in_flight;
            orders.push_back({id, target, progress.attempts, progress.recipients});
        }
    }
    return orders;
}

bool delivery_ledger::has_sends_ready() const {
    return std::any_of(targets_.begin(), targets_.end(), [this](const target_queue& queue) {
        return queue.in_flight < limits_.concurrency && !queue.ready.empty();
    });
}

int delivery_ledger::in_flight() const {
    int total = 0;
    for (const target_queue& queue : targets_) total += queue.in_flight;
    return total;
}

void delivery_ledger::record(const std::string& entry_id, std::size_t target,
                             const attempt_result& result, steady_time now) {
    const auto found = entries_.find(entry_id);
    if (found == entries_.end() || target >= specs_.size()) return;
    held_entry& entry = found->second;
    if (entry.targets[target].state != delivery_state::sending) return;
    --targets_[target].in_flight;
    if (specs_[target].email) {
        record_email(entry, target, result, now);
    } else if (result.outcome == verdict::accepted) {
        settle(entry, target, delivery_state::delivered, "");
    } else {
        fail(entry, target, result, now);
    }
}

void delivery_ledger::record_email(held_entry& entry, std::size_t target,
                                   const attempt_result& result, steady_time now) {
    if (result.outcome != verdict::accepted) {
        fail(entry, target, result, now);
        return;
    }
    target_progress& progress = entry.targets[target];
    std::vector<std::string> again;
    for (const refused_recipient& refused : result.refused) {
        const std::string error =
            "refused: " + std::to_string(refused.reply_code) + " " + refused.reply;
        if (refused.reply_code >= 500 || !retry_.attempts_left(progress.attempts)) {
            letter(entry, target, refused.address, error);
            emit(ledger_event::kind::dead_letter, entry, target, error, refused.address);
        } else {
            again.push_back(refused.address);
            emit(ledger_event::kind::failed, entry, target, error, refused.address);
        }
    }
    if (again.empty()) {
        settle(entry, target, delivery_state::delivered, "");
        return;
    }
    progress.recipients = std::move(again);
    progress.narrowed = true;
    retry_later(entry, target, "recipients refused for now: " + joined(progress.recipients), now);
}

void delivery_ledger::fail(held_entry& entry, std::size_t target, const attempt_result& result,
                           steady_time now) {
    target_progress& progress = entry.targets[target];
    emit(ledger_event::kind::failed, entry, target, result.error);
    if (result.outcome == verdict::permanent || !retry_.attempts_left(progress.attempts)) {
        const std::string recipients = specs_[target].email ? joined(progress.recipients) : "";
        letter(entry, target, recipients, result.error);
        emit(ledger_event::kind::dead_letter, entry, target, result.error, recipients);
        settle(entry, target, delivery_state::dead, result.error);
        return;
    }
    retry_later(entry, target, result.error, now);
}

void delivery_ledger::retry_later(held_entry& entry, std::size_t target, const std::string& error,
                                  steady_time now) {
    target_progress& progress = entry.targets[target];
    progress.state = delivery_state::waiting;
    progress.last_error = error;
    emit(ledger_event::kind::retry, entry, target, error);
    wakes_.emplace(now + retry_.wait_after(progress.attempts), std::make_pair(entry.id, target));
    if (progress.narrowed) {  // the recipients still owed go to the progress hash
        progress.saved = false;
        changed(entry);
    }
}

void delivery_ledger::letter(const held_entry& entry, std::size_t target,
                             const std::string& recipient, const std::string& error) {
    letters_.push_back({entry.id, entry.dedup_key, specs_[target].name, recipient, error,
                        entry.targets[target].attempts, entry.notification});
}

void delivery_ledger::emit(ledger_event::kind what, const held_entry& entry, std::size_t target,
                           const std::string& error, const std::string& recipient) {
    events_.push_back({what, entry.id, target, entry.targets[target].attempts, error, recipient});
}

std::vector<ledger_event> delivery_ledger::take_events() {
    std::vector<ledger_event> out;
    out.swap(events_);
    return out;
}

void delivery_ledger::changed(const held_entry& entry) {
    auto& stored = entries_.at(entry.id);
    if (stored.listed_as_changed) return;
    stored.listed_as_changed = true;
    changed_.push_back(entry.id);
}

bool delivery_ledger::all_final(const held_entry& entry) const {
    return std::all_of(entry.targets.begin(), entry.targets.end(),
                       [](const target_progress& progress) { return is_final(progress.state); });
}

void delivery_ledger::progress_of(const held_entry& entry, ledger_writes& writes) const {
    std::vector<std::pair<std::string, std::string>> fields;
    for (std::size_t target = 0; target < specs_.size(); ++target) {
        const target_progress& progress = entry.targets[target];
        if (progress.saved) continue;
        if (is_final(progress.state) || progress.narrowed) {
            fields.emplace_back(specs_[target].name, progress_word(progress));
        }
    }
    if (!fields.empty()) writes.progress.emplace_back(entry.id, std::move(fields));
}

ledger_writes delivery_ledger::take_writes() const {
    ledger_writes writes;
    writes.dead_letters = letters_;
    for (const std::string& id : changed_) {
        const auto found = entries_.find(id);
        if (found == entries_.end()) continue;
        const held_entry& entry = found->second;
        if (!all_final(entry)) {
            progress_of(entry, writes);
            continue;
        }
        writes.acknowledge.push_back(id);
        if (entry.progress_may_exist) writes.forget_progress.push_back(id);
    }
    writes.acknowledge.insert(writes.acknowledge.end(), unusable_.begin(), unusable_.end());
    return writes;
}

pending_writes delivery_ledger::pending() const {
    if (!letters_.empty() || !unusable_.empty()) return pending_writes::urgent;
    bool progress = false;
    for (const std::string& id : changed_) {
        const auto found = entries_.find(id);
        if (found == entries_.end()) continue;
        if (all_final(found->second)) return pending_writes::urgent;
        progress = true;
    }
    return progress ? pending_writes::progress_only : pending_writes::none;
}

void delivery_ledger::writes_done(const ledger_writes& writes) {
    letters_.clear();
    unusable_.clear();
    for (const std::string& id : writes.acknowledge) entries_.erase(id);
    for (const auto& [id, fields] : writes.progress) {
        const auto found = entries_.find(id);
        if (found == entries_.end()) continue;
        found->second.progress_may_exist = true;
        for (target_progress& progress : found->second.targets) {
            if (is_final(progress.state) || progress.narrowed) progress.saved = true;
        }
    }
    for (const std::string& id : changed_) {
        if (const auto found = entries_.find(id); found != entries_.end()) {
            found->second.listed_as_changed = false;
        }
    }
    changed_.clear();
}

}  // namespace alerts::gateway
