// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/approval.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <random>
#include <stdexcept>

#include "base/enum_text.hpp"
#include "policy/command_prefix.hpp"
#include "policy/display.hpp"
#include "policy/escalation.hpp"

namespace cordon::policy {

using nlohmann::json;

namespace {

// An outcome is in the vocabulary when its spelling reads back as itself: a value cast from a
// number no enumerator has is spelled as nothing (base/enum_text.hpp).
bool in_vocabulary(approval_outcome outcome) {
    return parse_approval_outcome(to_string(outcome)) == outcome;
}

}  // namespace

constexpr auto decided_by_texts = base::enum_texts<decided_by>({
    {decided_by::unrecorded, "unrecorded"},
    {decided_by::cancel, "cancel"},
    {decided_by::policy, "policy"},
    {decided_by::rule, "rule"},
    {decided_by::grant, "grant"},
    {decided_by::responder, "responder"},
    {decided_by::timeout, "timeout"},
    {decided_by::none, "none"},
});

std::string_view to_string(decided_by source) noexcept {
    return decided_by_texts.text(source);
}

std::string describe_input(const std::optional<std::string>& data, bool kept_open) {
    // Enough to read a short script whole; a longer one is shown by its start and its size.
    constexpr std::size_t shown_bytes = 400;
    std::string out;
    if (data && !data->empty()) {
        std::size_t cut = std::min(data->size(), shown_bytes);
        while (cut < data->size() && cut > 0 &&
               (static_cast<unsigned char>((*data)[cut]) & 0xC0u) == 0x80u)
            --cut;  // not inside a UTF-8 sequence
        out = "stdin: " + std::to_string(data->size()) +
              (data->size() == 1 ? " byte: " : " bytes: ") +
              shown_compactly(std::string_view(*data).substr(0, cut)) +
              (cut < data->size() ? " \u2026" : "");
    }
    if (kept_open) {
        out += out.empty() ? "stdin: " : "; then ";
        out += "kept open: the agent can write to it while the command runs";
    }
    return out;
}

std::vector<std::string> env_overrides(
    const std::map<std::string, std::optional<std::string>>& env) {
    std::vector<std::string> out;
    for (const auto& [name, value] : env)
        out.push_back(value ? name + "=" + *value : "-" + name);
    return out;
}

std::string session_grant_refusal(const approval_request& request) {
    if (!shown_whole(request.command)) {
        return "a command with a character shown escaped, or longer than " +
               std::to_string(display_bound) + " bytes, is never allowed for the session";
    }
    if (!request.env.empty()) {
        return "a call that sets or unsets the environment is asked about every time";
    }
    if (!request.inherited.empty()) {
        return "a call that inherits what changes what a shell runs is asked about every time";
    }
    if (!request.writable_path.empty()) {
        return "a call whose PATH holds a directory a run can write is asked about every time";
    }
    if (!request.input.empty()) {
        return "a call that feeds the command's stdin is asked about every time";
    }
    return "";
}

std::string new_approval_id() {
    std::random_device random;
    const std::uint64_t value = (static_cast<std::uint64_t>(random()) << 32) ^ random();
    char text[24];
    std::snprintf(text, sizeof text, "ap-%016llx", static_cast<unsigned long long>(value));
    return text;
}

// One question out to the responders, on a thread of its own: the asking thread waits for it
// only as long as it is willing to, and a late answer lands here, unread.
struct approval_service::question {
    std::mutex mutex;
    std::condition_variable changed;
    bool answered = false;  // guarded by mutex
    approval_outcome outcome = approval_outcome::unavailable;
    bool by_responder = false;  // false: no responder answered
    std::string by;
    std::string detail;
    std::stop_source stop;
    std::thread thread;
    std::atomic<bool> finished{false};
};

namespace {

// A question's thread: `ask` (the responders in turn), and whatever it lets out (bad_alloc) is an
// answer too, "unavailable", never an exception leaving the thread (std::terminate).
template <typename Question, typename Ask>
void ask_on_thread(const std::shared_ptr<Question>& asked, Ask& ask) noexcept {
    try {
        ask();
        return;
    } catch (...) {
    }
    {
        std::lock_guard lock(asked->mutex);
        if (!asked->answered) {
            asked->answered = true;
            asked->outcome = approval_outcome::unavailable;
            asked->by_responder = false;
            try {
                asked->by = "none";
                asked->detail = "asking the responders failed";
            } catch (...) {
            }
        }
    }
    asked->changed.notify_all();
    asked->finished = true;
}

}  // namespace

approval_service::approval_service(approval_options options, std::shared_ptr<const session_log> log)
    : options_(std::move(options)), log_(std::move(log)) {
    // A rule is what its JSON form says, checked against its examples: one built by hand is
    // checked the same way, and one that does not hold is the caller's error.
    for (const command_rule& rule : options_.rules) {
        auto checked = parse_rule(to_json(rule));
        if (auto* error = std::get_if<std::string>(&checked)) throw std::invalid_argument(*error);
    }
}

approval_service::~approval_service() {
    std::list<std::shared_ptr<question>> left;
    {
        std::lock_guard lock(mutex_);
        left.swap(out_);
    }
    for (auto& each : left) {
        each->stop.request_stop();
        if (each->thread.joinable()) each->thread.join();
    }
}

void approval_service::add_responder(std::shared_ptr<approval_responder> responder) {
    std::lock_guard lock(mutex_);
    chain_.push_back(std::move(responder));
}

void approval_service::prepend_responder(std::shared_ptr<approval_responder> responder) {
    std::lock_guard lock(mutex_);
    chain_.insert(chain_.begin(), std::move(responder));
}

bool approval_service::has_responders() const {
    std::lock_guard lock(mutex_);
    return !chain_.empty();
}

approval_policy approval_service::effective_policy() const {
    if (!log_) return options_.policy;
    auto state = log_->standing();
    if (std::holds_alternative<log_error>(state)) return approval_policy::never;
    return std::get<session_state>(state).approval.value_or(options_.policy);
}

std::vector<session_grant> approval_service::grants() const {
    if (!log_) {
        std::lock_guard lock(mutex_);
        return own_grants_;
    }
    auto state = log_->standing();
    if (std::holds_alternative<log_error>(state)) return {};
    return std::get<session_state>(state).grants;
}

std::optional<log_error> approval_service::revoke(const std::string& id) {
    const auto live = grants();
    if (std::none_of(live.begin(), live.end(),
                     [&id](const session_grant& grant) { return grant.id == id; })) {
        return log_error{"no standing grant has the id \"" + id + "\""};
    }
    if (log_) return log_->append({{"type", event_type::approval_revoked}, {"grant", id}});
    std::lock_guard lock(mutex_);
    std::erase_if(own_grants_, [&id](const session_grant& grant) { return grant.id == id; });
    return std::nullopt;
}

void approval_service::reap_finished() {
    std::list<std::shared_ptr<question>> done;
    {
        std::lock_guard lock(mutex_);
        for (auto it = out_.begin(); it != out_.end();) {
            auto next = std::next(it);
            if ((*it)->finished) done.splice(done.end(), out_, it);
            it = next;
        }
    }
    for (auto& each : done) {
        if (each->thread.joinable()) each->thread.join();
    }
}

approval_decision approval_service::request(const approval_request& request,
                                            std::stop_token cancel) {
    reap_finished();
    approval_decision decision;

    std::vector<session_grant> standing;
    std::optional<approval_policy> session_policy;
    if (log_) {
        auto state = log_->standing();
        if (auto* error = std::get_if<log_error>(&state)) {
            decision.by = "none";
            decision.detail =
                "the session log " + log_->path().string() + " cannot be read" +
                (error->line != 0 ? " (line " + std::to_string(error->line) + ")" : std::string()) +
                ": " + error->message;
            return decision;
        }
        standing = std::get<session_state>(state).grants;
        session_policy = std::get<session_state>(state).approval;
    } else {
        std::lock_guard lock(mutex_);
        standing = own_grants_;
    }

    decision.id = new_approval_id();
    if (log_) {
        json asked{{"type", event_type::approval_asked},
                   {"id", decision.id},
                   {"tool", request.tool},
                   {"command", request.command},
                   {"mode", sandbox::to_string(request.requested_mode)},
                   {"from", sandbox::to_string(request.effective_mode)}};
        put_network(asked, request.requested_network, "network", "domains");
        put_network(asked, request.effective_network, "network_from", "domains_from");
        if (!request.workdir.empty()) asked["workdir"] = request.workdir.string();
        if (!request.reason.empty()) asked["reason"] = request.reason;
        if (!request.justification.empty()) asked["justification"] = request.justification;
        if (!request.env.empty()) asked["env"] = request.env;
        if (!request.inherited.empty()) asked["inherited"] = request.inherited;
        if (!request.writable_path.empty()) asked["writable_path"] = request.writable_path;
        if (!request.input.empty()) asked["input"] = request.input;
        if (auto error = log_->append(std::move(asked))) {
            decision.id.clear();
            decision.by = "none";
            decision.detail = std::string(unrecorded_question) + error->message;
            return decision;
        }
    }

    // A call that changes the command's environment or stdin runs something nobody wrote a
    // rule or gave a grant for: it is always asked about.
    const bool unchanged = request.env.empty() && request.inherited.empty() &&
                           request.writable_path.empty() && request.input.empty();
    const auto covering =
        std::find_if(standing.begin(), standing.end(), [&](const session_grant& grant) {
            return unchanged &&
                   covers(grant, request.command, request.requested_mode, request.requested_network,
                          request.workdir, request.environment);
        });
    // A forbid rule that matches decides, wherever it stands among the rules; else the first allow
    // rule that matches, for a mode it reaches and no more network than the call stands under
    // (unconfined, the network is the host's: the mode says it).
    const command_rule* deciding = nullptr;
    for (const command_rule& rule : options_.rules) {
        if (!matches(rule, request.command)) continue;
        if (rule.decision == rule_decision::forbid) {
            deciding = &rule;
            break;
        }
        if (deciding == nullptr && unchanged &&
            !is_strictly_wider(request.requested_mode, rule.mode) &&
            (!sandbox::is_confined(request.requested_mode) ||
             covers(request.effective_network, request.requested_network))) {
            deciding = &rule;
        }
    }
    if (cancel.stop_requested()) {
        decision.outcome = approval_outcome::cancelled;
        decision.source = decided_by::cancel;
        decision.by = "cancel";
        decision.detail = "withdrawn before it was asked";
    } else if (session_policy.value_or(options_.policy) == approval_policy::never) {
        decision.outcome = approval_outcome::rejected;
        decision.source = decided_by::policy;
        decision.by = "policy";
        decision.detail = "the approval policy is never";
    } else if (deciding != nullptr) {
        decision.source = decided_by::rule;
        decision.by = "rule";
        decision.rule = deciding->name;
        if (deciding->decision == rule_decision::forbid) {
            decision.outcome = approval_outcome::rejected;
            decision.detail = "approval rule \"" + deciding->name + "\" forbids it";
        } else {
            decision.outcome = approval_outcome::allowed_once;
            decision.detail = "approval rule \"" + deciding->name + "\" allows it";
        }
    } else if (covering != standing.end()) {
        decision.outcome = approval_outcome::allowed_for_session;
        decision.source = decided_by::grant;
        decision.by = "grant";
        decision.grant = *covering;
    } else {
        std::vector<std::shared_ptr<approval_responder>> chain;
        {
            std::lock_guard lock(mutex_);
            chain = chain_;
        }
        if (chain.empty()) {
            decision.outcome = approval_outcome::unavailable;
            decision.source = decided_by::none;
            decision.by = "none";
            decision.detail = "no responder can ask anyone";
        } else {
            auto asked = std::make_shared<question>();
            auto ask = [asked, chain = std::move(chain), request] {
                std::string by = "none";
                std::string detail;
                approval_outcome outcome = approval_outcome::unavailable;
                bool answered = false;
                for (const auto& responder : chain) {
                    if (asked->stop.stop_requested()) break;
                    by = responder->name();
                    try {
                        auto answer = responder->answer(request, asked->stop.get_token());
                        if (!answer) continue;
                        answered = true;
                        if (in_vocabulary(*answer)) {
                            outcome = *answer;
                        } else {
                            detail = "the answer was not an approval outcome";
                        }
                    } catch (const std::exception& error) {
                        answered = true;
                        detail = std::string("the responder failed: ") + error.what();
                    } catch (...) {
                        answered = true;
                        detail = "the responder failed";
                    }
                    break;
                }
                if (!answered) {
                    by = "none";
                    detail = "no responder answered";
                }
                {
                    std::lock_guard lock(asked->mutex);
                    asked->answered = true;
                    asked->outcome = outcome;
                    asked->by_responder = answered;
                    asked->by = std::move(by);
                    asked->detail = std::move(detail);
                }
                asked->changed.notify_all();
                asked->finished = true;
            };
            asked->thread =
                std::thread([asked, ask = std::move(ask)]() mutable { ask_on_thread(asked, ask); });
            {
                std::lock_guard lock(mutex_);
                out_.push_back(asked);
            }
            const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
            // Registered before the lock is taken, and so ended after it is released: a cancel
            // that came already (the responder may have caused it) runs the callback right here,
            // and one running on the cancelling thread at the end is waited for; either way the
            // callback takes the mutex.
            std::stop_callback wake(cancel, [&asked] {
                std::lock_guard inner(asked->mutex);
                asked->changed.notify_all();
            });
            std::unique_lock lock(asked->mutex);
            const bool answered = asked->changed.wait_until(
                lock, deadline, [&] { return asked->answered || cancel.stop_requested(); });
            decision.asked = true;
            if (asked->answered) {
                decision.outcome = asked->outcome;
                decision.source = asked->by_responder ? decided_by::responder : decided_by::none;
                decision.by = asked->by;
                decision.detail = asked->detail;
            } else {
                decision.outcome = approval_outcome::cancelled;
                decision.source = answered ? decided_by::cancel : decided_by::timeout;
                decision.by = answered ? "cancel" : "timeout";
                decision.detail = answered ? "the question was withdrawn"
                                           : "no answer within " +
                                                 std::to_string(options_.timeout.count()) + " ms";
                // Outside the lock: the responders' own stop callbacks run here.
                lock.unlock();
                asked->stop.request_stop();
            }
        }
    }

    if (decision.outcome == approval_outcome::allowed_for_session && !decision.grant &&
        !session_grant_refusal(request).empty()) {
        // No responder offers a standing grant for such a call; one that answers with it anyway
        // did not answer the question that was asked.
        decision.outcome = approval_outcome::unavailable;
        decision.detail = shown_whole(request.command)
                              ? "a standing grant is not given: " + session_grant_refusal(request)
                              : "a standing grant is not given for a command that cannot be "
                                "shown whole (a character shown escaped, or more than " +
                                    std::to_string(display_bound) + " bytes)";
    }
    if (decision.outcome == approval_outcome::allowed_for_session && !decision.grant) {
        session_grant grant = grant_for(request.command, request.requested_mode, request.workdir,
                                        request.environment);
        grant.network = request.requested_network;
        grant.id = decision.id;
        decision.grant = grant;
        if (!log_) {
            std::lock_guard lock(mutex_);
            own_grants_.push_back(std::move(grant));
        }
    }
    if (log_) {
        json decided{{"type", event_type::approval_decided},
                     {"id", decision.id},
                     {"outcome", to_string(decision.outcome)},
                     {"by", decision.by}};
        if (!decision.detail.empty()) decided["detail"] = decision.detail;
        if (decision.grant) {
            decided["grant"] = {{"id", decision.grant->id},
                                {"prefix", decision.grant->prefix},
                                {"exact", decision.grant->exact},
                                {"mode", sandbox::to_string(decision.grant->mode)}};
            put_network(decided["grant"], decision.grant->network, "network", "domains");
            if (!decision.grant->workdir.empty()) {
                decided["grant"]["workdir"] = decision.grant->workdir.string();
            }
            // Recorded with the grant it makes; a use of it names it by its id.
            if (decision.grant->environment && decision.source != decided_by::grant) {
                decided["grant"]["environment"] = *decision.grant->environment;
            }
        }
        if (!decision.rule.empty()) decided["rule"] = decision.rule;
        if (auto error = log_->append(std::move(decided))) {
            // An allowance that is not on record is not given.
            decision.outcome = approval_outcome::unavailable;
            decision.source = decided_by::unrecorded;
            decision.grant.reset();
            decision.detail = "the decision could not be recorded: " + error->message;
        }
    }
    reap_finished();
    return decision;
}

}  // namespace cordon::policy
