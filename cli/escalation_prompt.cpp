// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/escalation_prompt.hpp"

#include <signal.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <atomic>
#include <memory>
#include <stop_token>
#include <thread>

#include "cordon/approval.hpp"
#include "cordon/terminal_prompt.hpp"
#include "policy/display.hpp"
#include "policy/escalation.hpp"
#include "policy/escalation_json.hpp"

namespace cordon::cli {

namespace {

// While it lives, SIGINT, SIGTERM and SIGHUP are caught (boost::asio::signal_set, on a loop of
// its own thread) and the first turns into a stop request on token(). When it ends, their default
// action is restored: nothing is left to withdraw.
class interrupt_watch {
public:
    interrupt_watch() : signals_(io_, SIGINT, SIGTERM, SIGHUP) {
        signals_.async_wait([this](const boost::system::error_code& error, int signal) {
            if (error) return;
            signal_.store(signal);
            source_.request_stop();
        });
        loop_ = std::thread([this] { io_.run(); });
    }
    ~interrupt_watch() {
        io_.stop();
        loop_.join();
    }
    interrupt_watch(const interrupt_watch&) = delete;
    interrupt_watch& operator=(const interrupt_watch&) = delete;

    [[nodiscard]] std::stop_token token() const { return source_.get_token(); }
    // The signal that came, or 0.
    [[nodiscard]] int signal() const { return signal_.load(); }

private:
    boost::asio::io_context io_;
    boost::asio::signal_set signals_;
    std::stop_source source_;
    std::atomic<int> signal_{0};
    std::thread loop_;
};

}  // namespace

escalation_answer ask_to_escalate(const validated& checked, const standing& stand) {
    policy::approval_service service(
        policy::approval_options{stand.approval, checked.approval_timeout}, stand.log);
    service.add_responder(std::make_shared<policy::terminal_prompt>(stand.log != nullptr));
    policy::escalation_request question;
    const sandbox::sandbox_mode mode = checked.escalate.value_or(stand.policy.mode);
    question.requested_mode = mode;
    question.effective_mode = stand.policy.mode;
    question.requested_network = checked.escalate_network;
    question.effective_network = policy::network_of(checked.request.network);
    question.denied_domains = checked.request.network.denied_domains;
    question.justification = checked.justification;
    question.subject = "command";
    question.tool = std::string(run_command_name);
    question.command = checked.command_text;
    question.workdir = checked.request.workdir.value_or(stand.policy.workspace_root);
    question.env = policy::env_overrides(checked.request.env);
    question.input = checked.input_text;
    question.policy =
        policy::policy_change(mode, checked.request.rules, stand.policy.workspace_root);
    escalation_answer out;
    policy::escalation_result result;
    {
        interrupt_watch watch;
        result = policy::approve_escalation(question, &service, watch.token());
        out.interrupted_by = watch.signal();
    }
    out.granted = result.granted;
    out.granted_network = result.granted_network;
    out.error = result.error;
    out.approval = policy::to_json(result);
    return out;
}

}  // namespace cordon::cli
