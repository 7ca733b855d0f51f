#include "cli/escalation_prompt.hpp"

#include <signal.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <stop_token>
#include <thread>

#include "cli/terminal_prompt.hpp"
#include "policy/approval.hpp"
#include "policy/command_prefix.hpp"
#include "policy/display.hpp"
#include "policy/escalation.hpp"

namespace cordon::cli {

namespace {

// SIGINT, SIGTERM or SIGHUP while someone is being asked withdraws the question (`cancelled`, and
// the audit pair is still written) instead of killing cordon between the two events. The handler
// only stores the signal; a watcher thread turns it into a stop request.
std::atomic<int> interrupted_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

void note_interrupt(int signal) {
    interrupted_signal.store(signal);
}

class interrupt_watch {
public:
    interrupt_watch() {
        struct sigaction action {};
        action.sa_handler = note_interrupt;
        ::sigemptyset(&action.sa_mask);
        for (std::size_t i = 0; i < signals_.size(); ++i) {
            ::sigaction(signals_[i], &action, &previous_[i]);
        }
        watcher_ = std::jthread([this](std::stop_token own) {
            while (!own.stop_requested()) {
                if (interrupted_signal.load() != 0) {
                    source_.request_stop();
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        });
    }
    ~interrupt_watch() {
        watcher_.request_stop();
        watcher_.join();
        for (std::size_t i = 0; i < signals_.size(); ++i) {
            ::sigaction(signals_[i], &previous_[i], nullptr);
        }
    }
    interrupt_watch(const interrupt_watch&) = delete;
    interrupt_watch& operator=(const interrupt_watch&) = delete;

    [[nodiscard]] std::stop_token token() const { return source_.get_token(); }
    // The signal that came, or 0.
    [[nodiscard]] static int signal() { return interrupted_signal.load(); }

private:
    static constexpr std::array<int, 3> signals_{SIGINT, SIGTERM, SIGHUP};
    std::array<struct sigaction, 3> previous_{};
    std::stop_source source_;
    std::jthread watcher_;
};

// The record's "approval" object.
nlohmann::json approval_json(const policy::escalation_result& result,
                             sandbox::sandbox_mode requested) {
    nlohmann::json out = {{"asked", result.decision.has_value()},
                          {"outcome", nullptr},
                          {"id", nullptr},
                          {"mode", std::string(sandbox::to_string(requested))},
                          {"by", nullptr}};
    if (const auto& decision = result.decision) {
        out["outcome"] = std::string(policy::to_string(decision->outcome));
        if (!decision->id.empty()) out["id"] = decision->id;
        if (!decision->by.empty()) out["by"] = decision->by;
        if (decision->grant) {
            out["grant"] = {{"id", decision->grant->id},
                            {"covers", policy::describe(*decision->grant)},
                            {"mode", std::string(sandbox::to_string(decision->grant->mode))}};
        }
        if (!decision->detail.empty()) out["detail"] = decision->detail;
    }
    return out;
}

}  // namespace

escalation_answer ask_to_escalate(const validated& checked, const standing& stand) {
    policy::approval_service service(
        policy::approval_options{stand.approval, checked.approval_timeout}, stand.log);
    service.add_responder(std::make_shared<terminal_prompt>(stand.log != nullptr));
    policy::escalation_request question;
    question.requested_mode = *checked.escalate;
    question.effective_mode = stand.policy.mode;
    question.justification = checked.justification;
    question.subject = "command";
    question.tool = std::string(run_command_name);
    question.command = checked.command_text;
    question.workdir = checked.request.workdir.value_or(stand.policy.workspace_root);
    question.env = policy::env_overrides(checked.request.env);
    question.input = checked.input_text;
    escalation_answer out;
    policy::escalation_result result;
    {
        interrupt_watch watch;
        result = policy::approve_escalation(question, &service, watch.token());
        out.interrupted_by = interrupt_watch::signal();
    }
    out.granted = result.granted;
    out.error = result.error;
    out.approval = approval_json(result, *checked.escalate);
    return out;
}

}  // namespace cordon::cli
