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
#include "cordon/escalate.hpp"
#include "cordon/terminal_prompt.hpp"

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

escalation_answer ask_to_escalate(validated& checked, const standing& stand,
                                  const settings& effective,
                                  const policy::escalation_setting& setting) {
    policy::approval_service service(
        policy::approval_options{stand.approval, effective.approval_timeout.value,
                                 effective.approval_rule_values()},
        stand.log);
    service.add_responder(std::make_shared<policy::terminal_prompt>(stand.log != nullptr));
    policy::escalation_ask ask;
    ask.mode = checked.escalate;
    ask.network = checked.escalate_network;
    ask.justification = checked.justification;
    ask.tool = std::string(run_command_name);
    ask.command = checked.command_text;
    ask.input = checked.input_text;
    escalation_answer out;
    policy::escalation_outcome decided;
    {
        interrupt_watch watch;
        decided = policy::escalate(checked.request, ask, setting, service, watch.token());
        out.interrupted_by = watch.signal();
    }
    out.status = decided.status;
    out.error = std::move(decided.error);
    out.approval = std::move(decided.approval);
    return out;
}

}  // namespace cordon::cli
