// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The approval service: whether one specific operation that needs approval may proceed.
//
//     cordon::approval_service approvals;        // no session log: grants last as long as it
//     approvals.add_responder(std::make_shared<cordon::function_responder>(
//         "my-ui", [](const cordon::approval_request& asked, std::stop_token) {
//             return ask_my_user(asked) ? std::optional(cordon::approval_outcome::allowed_once)
//                                       : std::optional(cordon::approval_outcome::rejected);
//         }));
//     cordon::approval_request question;
//     question.command = "npm install";
//     question.requested_mode = cordon::sandbox_mode::workspace_write;
//     if (cordon::is_allowed(approvals.request(question).outcome)) { /* run it wider */ }
//
// The sandbox governs the boundary a command runs within; approval governs whether a wider
// boundary may be used for one operation. Both fail closed: every path that is not a clear "yes"
// from someone who was asked ends in "not allowed".
//
// request() decides, in this order:
//   1. writes `approval/asked` to the session log (when there is one; a failed write means the
//      question is not asked: `unavailable`, with the reason);
//   2. already cancelled: `cancelled`;
//   3. the effective policy (the session's approval/policy event, else the configured one) is
//      `never`: `rejected`, decided here, before any responder runs, so no responder can
//      bypass it;
//   4. an approval rule (cordon/approval_rules.hpp) of the options matches the command: any
//      forbid rule's is `rejected`; else an allow rule whose mode is at least the requested one,
//      for a call that changes nothing in the command's environment or stdin, inherits nothing
//      that changes what a shell runs, and asks for no more network than it stands under (the
//      host's under danger-full-access), `allowed-once`; without asking. A forbid rule wins over
//      every allow rule, wherever it stands; among allow rules the first decides;
//   5. a standing allowed-for-session grant covers the command (command_prefix.hpp: the same
//      words, under the same mode, in the same working directory), and the call changes nothing
//      in the command's environment or stdin: `allowed-for-session`, without asking;
//   6. the responders, in chain order, on a thread of the service's: each answers or passes to
//      the next; the end of the chain, a throwing responder, or an answer outside the vocabulary
//      is `unavailable`. Cancellation, or no answer within the timeout, is `cancelled` at once;
//      an answer that comes later is discarded;
//      A responder's allowed-for-session for a call session_grant_refusal() refuses (a command
//      that cannot be shown whole, a call no grant could cover) is `unavailable`: no responder
//      offers it, so it answers nothing that was asked;
//   7. writes `approval/decided` (with the grant, for allowed-for-session) and returns.
//
// Events: {"type":"approval/asked","id","tool","command","workdir","mode","from","reason",
// "justification","network","network_from"(,"domains","domains_from": under proxy)(,"env")} and
// {"type":"approval/decided","id","outcome","by"(,"grant":{"prefix","exact","mode","network"
// (,"domains")(,"workdir")})(,"rule")(,"detail")}. `by` names who decided: "policy", "rule",
// "grant", a responder's name, "timeout", "cancel", "none" (decided_by below).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "cordon/approval_rules.hpp"
#include "cordon/export.hpp"
#include "cordon/mode.hpp"
#include "cordon/session_log.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::policy {

struct approval_request {
    // What asks: "bash" (MCP), "cordon run", your program's name. The terminal prompt opens with
    // it ("<tool>: the command asks to run under a wider sandbox mode"): set it.
    std::string tool = "bash";
    std::string command;  // as the person answering will see it
    std::filesystem::path workdir;
    sandbox::sandbox_mode effective_mode = sandbox::sandbox_mode::read_only;  // standing mode
    sandbox::sandbox_mode requested_mode = sandbox::sandbox_mode::read_only;
    // The network the call stands under and the one it would run with (danger-full-access: the
    // host's, allow). Logged beside the modes; a standing grant covers no call that asks for
    // more network than it was given under.
    network_request effective_network;
    network_request requested_network;
    std::string justification;  // the agent's one sentence
    std::string reason;         // "escalate sandbox to <mode>: <justification>"
    // What the call does to the command's environment, "NAME=value" or "-NAME" (unset). Shown to
    // the person asked and logged: BASH_ENV, PATH or an exported BASH_FUNC_* change what a command
    // runs as much as its text does. For that reason a standing grant never covers a call that
    // sets any.
    std::vector<std::string> env;
    // What the command would inherit from the caller's own environment that changes what a shell
    // or the dynamic loader runs ("NAME=value": BASH_FUNC_*%% exported functions, BASH_ENV, ENV,
    // SHELLOPTS, BASHOPTS, PS4, BASH_XTRACEFD, LD_*, GLIBC_TUNABLES; inherited_runner_variables()
    // of escalate.hpp). Shown and logged as env is, and for the same reason never covered by a
    // grant or a rule: `touch x` with an exported function `touch` runs the function.
    std::vector<std::string> inherited;
    // The whole environment the command would start with, "NAME=value" sorted (build_environment()
    // of cordon/environment.hpp, without OLDPWD, SHLVL and _). Not shown; a grant records it
    // and covers only a call that starts with the very same: PATH, NODE_OPTIONS or PYTHONPATH
    // change what `npm test` runs as much as its words do.
    std::vector<std::string> environment;
    // The directories on the PATH the command would start with that a run can write (inside the
    // workspace, a writable root, /tmp), or that are relative: a run under the standing mode can
    // put a `git` there that the next `git status` finds first. Shown, logged, and with any, no
    // grant or rule covers the call.
    std::vector<std::string> writable_path;
    // What the call feeds the command's stdin, as describe_input() words it; empty when it feeds
    // nothing. `python3 -` or `bash` run what they read: a yes to the text alone would be a yes to
    // any program. Shown, logged, and, like env, never covered by a standing grant.
    std::string input;
    // What else the wider mode changes beyond the mode, one line (policy_change()): the
    // protections that stay, or that an unconfined run drops. Shown to the person asked.
    std::string policy;
    // What the call changes in the network, "deny \u2192 proxy: registry.npmjs.org"
    // (network_change()); empty when nothing. Shown to the person asked.
    std::string network;
};

class approval_responder {
public:
    virtual ~approval_responder() = default;
    // Shown in the log's "by" field.
    [[nodiscard]] virtual std::string name() const = 0;
    // Answers, or returns nullopt to let the next responder answer. Runs on a thread of the
    // service's; `stop` is requested when the question is cancelled or times out, and what is
    // returned after that is discarded, so return soon. May throw (the answer is then
    // `unavailable`).
    virtual std::optional<approval_outcome> answer(const approval_request& request,
                                                   std::stop_token stop) = 0;
};

// A responder made of a function, for hosts and tests.
class function_responder final : public approval_responder {
public:
    using function =
        std::function<std::optional<approval_outcome>(const approval_request&, std::stop_token)>;
    function_responder(std::string name, function answer)
        : name_(std::move(name)), answer_(std::move(answer)) {}
    [[nodiscard]] std::string name() const override { return name_; }
    std::optional<approval_outcome> answer(const approval_request& request,
                                           std::stop_token stop) override {
        return answer_(request, std::move(stop));
    }

private:
    std::string name_;
    function answer_;
};

struct approval_options {
    approval_policy policy = approval_policy::ask;  // a session's approval/policy event wins
    std::chrono::milliseconds timeout{300'000};     // an unanswered question is cancelled
    // What a person or the deployment wrote ahead of time (cordon/approval_rules.hpp), each
    // checked by parse_rule(): the only way a call that was not asked about is allowed, beside
    // the session's exact grants.
    std::vector<command_rule> rules{};
};

// What decided a request, in the order request() tries them.
enum class decided_by {
    unrecorded,  // the question could not be recorded (or the log read): nobody was asked
    cancel,      // withdrawn, before or while a responder was asked
    policy,      // the approval policy is `never`
    rule,        // an approval rule: forbid or allow
    grant,       // a standing allowed-for-session grant covered it
    responder,   // a responder's answer (or its failure, or an answer outside the vocabulary)
    timeout,     // no answer in time
    none,        // no responder answered
};

[[nodiscard]] std::string_view to_string(decided_by source) noexcept;

// The start of an unavailable decision's detail when the session log could not record the
// question (held locked by another process, for instance): the escalation's error then says so,
// since nobody was missing to ask.
inline constexpr std::string_view unrecorded_question = "the question could not be recorded: ";

struct approval_decision {
    approval_outcome outcome = approval_outcome::unavailable;
    decided_by source = decided_by::unrecorded;
    bool asked = false;                  // a responder was consulted
    std::string id;                      // the audit pair's id (empty when nothing was logged)
    std::string by;                      // as in the log: to_string(source), or the responder
    std::optional<session_grant> grant;  // the grant recorded, or the one that covered it
    std::string rule;                    // the name of the rule that decided (source == rule)
    std::string detail;                  // why, for unavailable and cancelled
};

class approval_service {
public:
    // `log` may be null: nothing is audited and session grants live as long as the service.
    // Throws std::invalid_argument when a rule of `options` does not hold (parse_rule() of its
    // JSON form refuses it: a malformed pattern, an example it does not match).
    explicit approval_service(approval_options options = {},
                              std::shared_ptr<const session_log> log = nullptr);
    // Withdraws questions still out and waits for their responders to return.
    ~approval_service();
    approval_service(const approval_service&) = delete;
    approval_service& operator=(const approval_service&) = delete;

    // The chain: add_responder() appends (asked after those added before), prepend_responder()
    // puts one first.
    void add_responder(std::shared_ptr<approval_responder> responder);
    void prepend_responder(std::shared_ptr<approval_responder> responder);

    // The session's approval/policy event, else the configured policy. A log that cannot be
    // read gives `never`: fail closed.
    [[nodiscard]] approval_policy effective_policy() const;
    [[nodiscard]] bool has_responders() const;

    // Decides (see the top of this file). Blocks the calling thread until decided; safe to call
    // from several threads at once. `cancel` withdraws the question.
    [[nodiscard]] approval_decision request(const approval_request& request,
                                            std::stop_token cancel = {});

    // The standing grants: the log's, or this service's own when there is no log.
    [[nodiscard]] std::vector<session_grant> grants() const;
    // Ends grant `id` (an approval/revoked event). An error when there is no such live grant.
    [[nodiscard]] std::optional<log_error> revoke(const std::string& id);

    [[nodiscard]] const std::shared_ptr<const session_log>& log() const noexcept { return log_; }

private:
    struct question;
    std::optional<approval_outcome> ask_chain(const approval_request& request, std::stop_token stop,
                                              std::string& by);
    void reap_finished();

    approval_options options_;
    std::shared_ptr<const session_log> log_;
    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<approval_responder>> chain_;  // guarded by mutex_
    std::vector<session_grant> own_grants_;                   // guarded by mutex_ (no log)
    std::list<std::shared_ptr<question>> out_;                // guarded by mutex_
};

// approval_request::env for the overrides a run request carries (runtime::run_request::env:
// a value sets, nullopt unsets), in name order.
[[nodiscard]] std::vector<std::string> env_overrides(
    const std::map<std::string, std::optional<std::string>>& env);

// approval_request::input for a call that hands the command `data` on stdin and, when `kept_open`,
// leaves stdin open for the caller to write more while it runs: "stdin: 12 bytes: print(1)\n",
// with a long text cut; empty when the call hands it nothing.
[[nodiscard]] std::string describe_input(const std::optional<std::string>& data, bool kept_open);

// Why no allowed-for-session grant is offered for `request`, or "" when one may be: its command is
// not shown whole (display.hpp: "a command with a character shown escaped, or longer than 600
// bytes, is never allowed for the session"), or the call changes what no grant covers (its
// environment, what it inherits that a shell runs, a PATH directory a run can write, its stdin:
// "... is asked about every time"). A responder's allowed-for-session for such a call is
// `unavailable`: nobody offered it.
[[nodiscard]] std::string session_grant_refusal(const approval_request& request);

// A fresh random id ("ap-" and 16 hex digits).
[[nodiscard]] std::string new_approval_id();

}  // namespace cordon::policy

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using policy::approval_decision;
using policy::approval_options;
using policy::approval_request;
using policy::approval_responder;
using policy::approval_service;
using policy::decided_by;
using policy::function_responder;
using policy::to_string;
}  // namespace cordon
CORDON_PUBLIC_END
