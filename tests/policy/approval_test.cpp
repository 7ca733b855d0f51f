// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The approval service: the policy first, then standing grants, then the responder chain;
// cancellation and the timeout answer at once; every request leaves its audit pair.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <future>
#include <map>
#include <thread>

#include "cordon/approval.hpp"
#include "policy/display.hpp"
#include "support.hpp"

namespace cordon::policy {
namespace {

using namespace std::chrono_literals;
using sandbox::sandbox_mode;
using test::temp_dir;

std::shared_ptr<const session_log> make_log(const temp_dir& dir) {
    auto opened = session_log::open_or_create(dir / "s.jsonl", dir.path());
    return std::make_shared<const session_log>(std::get<session_log>(std::move(opened)));
}

approval_request ask(std::string command = "git push origin main",
                     sandbox_mode mode = sandbox_mode::danger_full_access) {
    approval_request request;
    request.command = std::move(command);
    request.requested_mode = mode;
    request.effective_mode = sandbox_mode::read_only;
    request.workdir = "/src/app";
    request.justification = "push the release tag";
    request.reason = "escalate sandbox to " + std::string(sandbox::to_string(mode)) + ": push";
    return request;
}

std::shared_ptr<approval_responder> answering(std::string name,
                                              std::optional<approval_outcome> outcome,
                                              std::vector<std::string>* calls = nullptr) {
    return std::make_shared<function_responder>(
        name, [name, outcome, calls](const approval_request&, std::stop_token) {
            if (calls != nullptr) calls->push_back(name);
            return outcome;
        });
}

// The approval/asked and approval/decided events, in order.
std::vector<nlohmann::json> audit(const session_log& log) {
    std::vector<nlohmann::json> out;
    const auto state = std::get<session_state>(log.state());
    for (const auto& event : state.events) {
        if (event.type == "approval/asked" || event.type == "approval/decided") {
            out.push_back(event.body);
        }
    }
    return out;
}

void expect_pair(const session_log& log, const approval_decision& decision,
                 std::string_view outcome) {
    const auto pair = audit(log);
    ASSERT_EQ(pair.size(), 2u);
    EXPECT_EQ(pair[0]["type"], "approval/asked");
    EXPECT_EQ(pair[0]["id"], decision.id);
    EXPECT_EQ(pair[0]["command"], "git push origin main");
    EXPECT_EQ(pair[0]["mode"], "danger-full-access");
    EXPECT_EQ(pair[0]["from"], "read-only");
    EXPECT_EQ(pair[1]["type"], "approval/decided");
    EXPECT_EQ(pair[1]["id"], decision.id);
    EXPECT_EQ(pair[1]["outcome"], outcome);
    EXPECT_EQ(pair[1]["by"], decision.by);
}

TEST(Approval, EachOutcomeOfAResponderIsReturnedAndAudited) {
    for (auto outcome :
         {approval_outcome::allowed_once, approval_outcome::allowed_for_session,
          approval_outcome::rejected, approval_outcome::cancelled, approval_outcome::unavailable}) {
        temp_dir dir;
        auto log = make_log(dir);
        approval_service service({}, log);
        service.add_responder(answering("tester", outcome));
        const auto decision = service.request(ask());
        EXPECT_EQ(decision.outcome, outcome);
        EXPECT_EQ(decision.by, "tester");
        EXPECT_EQ(decision.source, decided_by::responder);
        EXPECT_TRUE(decision.asked);
        EXPECT_EQ(decision.id.rfind("ap-", 0), 0u);
        expect_pair(*log, decision, to_string(outcome));
    }
}

TEST(Approval, NoResponderIsUnavailable) {
    temp_dir dir;
    auto log = make_log(dir);
    approval_service service({}, log);
    const auto decision = service.request(ask());
    EXPECT_EQ(decision.outcome, approval_outcome::unavailable);
    expect_pair(*log, decision, "unavailable");
}

TEST(Approval, NeverRejectsBeforeAnyResponderRuns) {
    temp_dir dir;
    auto log = make_log(dir);
    approval_service service({approval_policy::never}, log);
    std::vector<std::string> calls;
    service.prepend_responder(answering("first", approval_outcome::allowed_once, &calls));
    const auto decision = service.request(ask());
    EXPECT_EQ(decision.outcome, approval_outcome::rejected);
    EXPECT_EQ(decision.by, "policy");
    EXPECT_EQ(decision.source, decided_by::policy);
    EXPECT_FALSE(decision.asked);
    EXPECT_TRUE(calls.empty());
    expect_pair(*log, decision, "rejected");
}

TEST(Approval, TheSessionsPolicyWinsInBothDirections) {
    temp_dir dir;
    auto log = make_log(dir);
    ASSERT_FALSE(log->append({{"type", "approval/policy"}, {"policy", "never"}}));
    {
        approval_service service({approval_policy::ask}, log);
        service.add_responder(answering("yes", approval_outcome::allowed_once));
        EXPECT_EQ(service.effective_policy(), approval_policy::never);
        EXPECT_EQ(service.request(ask()).outcome, approval_outcome::rejected);
    }
    ASSERT_FALSE(log->append({{"type", "approval/policy"}, {"policy", "ask"}}));
    approval_service service({approval_policy::never}, log);
    service.add_responder(answering("yes", approval_outcome::allowed_once));
    EXPECT_EQ(service.effective_policy(), approval_policy::ask);
    EXPECT_EQ(service.request(ask()).outcome, approval_outcome::allowed_once);
}

TEST(Approval, RespondersDelegateInChainOrder) {
    approval_service service;
    std::vector<std::string> calls;
    service.add_responder(answering("second", std::nullopt, &calls));
    service.add_responder(answering("third", approval_outcome::rejected, &calls));
    service.add_responder(answering("fourth", approval_outcome::allowed_once, &calls));
    service.prepend_responder(answering("first", std::nullopt, &calls));
    const auto decision = service.request(ask());
    EXPECT_EQ(decision.outcome, approval_outcome::rejected);
    EXPECT_EQ(decision.by, "third");
    EXPECT_EQ(calls, (std::vector<std::string>{"first", "second", "third"}));
}

TEST(Approval, AllDelegatingIsUnavailable) {
    approval_service service;
    service.add_responder(answering("pass", std::nullopt));
    const auto decision = service.request(ask());
    EXPECT_EQ(decision.outcome, approval_outcome::unavailable);
    EXPECT_EQ(decision.by, "none");
    EXPECT_EQ(decision.source, decided_by::none);
    EXPECT_TRUE(decision.asked);
}

TEST(Approval, AThrowingOrRogueResponderIsUnavailable) {
    temp_dir dir;
    auto log = make_log(dir);
    {
        approval_service service({}, log);
        service.add_responder(std::make_shared<function_responder>(
            "thrower",
            [](const approval_request&, std::stop_token) -> std::optional<approval_outcome> {
                throw std::runtime_error("the terminal went away");
            }));
        service.add_responder(answering("after", approval_outcome::allowed_once));
        const auto decision = service.request(ask());
        EXPECT_EQ(decision.outcome, approval_outcome::unavailable);
        EXPECT_EQ(decision.by, "thrower");
        EXPECT_NE(decision.detail.find("the terminal went away"), std::string::npos);
    }
    approval_service service({}, log);
    service.add_responder(answering("rogue", static_cast<approval_outcome>(42)));
    const auto decision = service.request(ask());
    EXPECT_EQ(decision.outcome, approval_outcome::unavailable);
    EXPECT_NE(decision.detail.find("not an approval outcome"), std::string::npos);
}

TEST(Approval, CancelledBeforeAskingAsksNobody) {
    temp_dir dir;
    auto log = make_log(dir);
    approval_service service({}, log);
    std::vector<std::string> calls;
    service.add_responder(answering("yes", approval_outcome::allowed_once, &calls));
    std::stop_source cancel;
    cancel.request_stop();
    const auto decision = service.request(ask(), cancel.get_token());
    EXPECT_EQ(decision.outcome, approval_outcome::cancelled);
    EXPECT_EQ(decision.source, decided_by::cancel);
    EXPECT_FALSE(decision.asked);
    EXPECT_TRUE(calls.empty());
    expect_pair(*log, decision, "cancelled");
}

// A responder that answers only after it was let go: its answer must be discarded.
struct late_responder {
    std::mutex mutex;
    std::condition_variable changed;
    bool asked = false;
    bool release = false;
    bool saw_stop = false;

    std::shared_ptr<approval_responder> make(approval_outcome late_answer) {
        return std::make_shared<function_responder>(
            "late", [this, late_answer](const approval_request&, std::stop_token stop) {
                std::unique_lock lock(mutex);
                asked = true;
                changed.notify_all();
                changed.wait(lock, [this] { return release; });
                saw_stop = stop.stop_requested();
                return std::optional<approval_outcome>(late_answer);
            });
    }
    void wait_asked() {
        std::unique_lock lock(mutex);
        changed.wait(lock, [this] { return asked; });
    }
    void let_go() {
        std::lock_guard lock(mutex);
        release = true;
        changed.notify_all();
    }
};

TEST(Approval, CancellingDuringTheQuestionAnswersAtOnceAndDiscardsTheLateAnswer) {
    temp_dir dir;
    auto log = make_log(dir);
    late_responder late;
    {
        approval_service service({}, log);
        service.add_responder(late.make(approval_outcome::allowed_once));
        std::stop_source cancel;
        auto decided = std::async(std::launch::async,
                                  [&] { return service.request(ask(), cancel.get_token()); });
        late.wait_asked();
        cancel.request_stop();
        const auto decision = decided.get();  // returns while the responder still waits
        EXPECT_EQ(decision.outcome, approval_outcome::cancelled);
        EXPECT_EQ(decision.by, "cancel");
        EXPECT_EQ(decision.source, decided_by::cancel);
        EXPECT_TRUE(decision.asked);
        late.let_go();
        expect_pair(*log, decision, "cancelled");
    }  // the service joins the responder's thread
    EXPECT_TRUE(late.saw_stop);
    EXPECT_EQ(audit(*log).size(), 2u);  // the late "yes" left no trace
    EXPECT_TRUE(std::get<session_state>(log->state()).grants.empty());
}

// A cancel can come before the asking thread starts to wait: here the responder itself
// withdraws the question (as a client does that gives up the moment it is asked). The asking
// thread must answer "cancelled" whichever of them gets there first, many times over.
TEST(Approval, ACancelThatComesBeforeTheAskerWaitsIsAnsweredNotHung) {
    approval_service service({}, nullptr);
    std::stop_source* current = nullptr;
    service.add_responder(std::make_shared<function_responder>(
        "withdrawing", [&current](const approval_request&, std::stop_token stop) {
            std::stop_source withdraw = *current;  // the round's own may end before this returns
            withdraw.request_stop();
            const auto give_up = std::chrono::steady_clock::now() + 10s;
            while (!stop.stop_requested() && std::chrono::steady_clock::now() < give_up)
                std::this_thread::sleep_for(100us);
            return std::optional(approval_outcome::allowed_once);  // too late, and discarded
        }));
    for (int round = 0; round < 200; ++round) {
        std::stop_source cancel;
        current = &cancel;
        const auto decision = service.request(ask(), cancel.get_token());
        ASSERT_EQ(decision.outcome, approval_outcome::cancelled) << "round " << round;
        ASSERT_EQ(decision.source, decided_by::cancel) << "round " << round;
    }
}

TEST(Approval, AnUnansweredQuestionIsCancelledAtTheTimeout) {
    temp_dir dir;
    auto log = make_log(dir);
    late_responder late;
    approval_service service({approval_policy::ask, 200ms}, log);
    service.add_responder(late.make(approval_outcome::allowed_for_session));
    const auto decision = service.request(ask());
    EXPECT_EQ(decision.outcome, approval_outcome::cancelled);
    EXPECT_EQ(decision.by, "timeout");
    EXPECT_EQ(decision.source, decided_by::timeout);
    late.let_go();
    expect_pair(*log, decision, "cancelled");
}

TEST(Approval, ASessionGrantCoversExactlyTheCommandUnderTheSameModeAndNothingElse) {
    temp_dir dir;
    auto log = make_log(dir);
    approval_service service({}, log);
    std::vector<std::string> calls;
    service.add_responder(answering("person", approval_outcome::allowed_for_session, &calls));
    const auto first = service.request(ask("git push origin main"));
    ASSERT_EQ(first.outcome, approval_outcome::allowed_for_session);
    ASSERT_TRUE(first.grant);
    EXPECT_EQ(first.grant->prefix, (std::vector<std::string>{"git", "push", "origin", "main"}));
    EXPECT_EQ(calls.size(), 1u);

    // Covered: the same words (quoted or not), the same mode; nobody is asked.
    const auto again = service.request(ask("git push 'origin' main"));
    EXPECT_EQ(again.outcome, approval_outcome::allowed_for_session);
    EXPECT_EQ(again.by, "grant");
    EXPECT_EQ(again.source, decided_by::grant);
    EXPECT_FALSE(again.asked);
    EXPECT_EQ(again.grant->id, first.id);
    EXPECT_EQ(calls.size(), 1u);

    // Not covered: another operand, fewer or more words, another mode, shell syntax or an option.
    (void)service.request(ask("git push origin v1.0"));
    (void)service.request(ask("git push origin"));
    (void)service.request(ask("git push origin main --force"));
    (void)service.request(ask("git push origin main", sandbox_mode::workspace_write));
    (void)service.request(ask("git push origin main; rm -rf ~"));
    (void)service.request(ask("git push --receive-pack='touch pwned; git-receive-pack' ."));
    EXPECT_EQ(calls.size(), 7u);
    // Nor in another working directory: `./build.sh` there is another program.
    approval_request elsewhere = ask("git push origin main");
    elsewhere.workdir = "/src/other";
    (void)service.request(elsewhere);
    EXPECT_EQ(calls.size(), 8u);

    // Revoked: asked again.
    ASSERT_EQ(service.grants().size(), 8u);  // every answer above was allowed-for-session
    for (const auto& grant : service.grants())
        ASSERT_FALSE(service.revoke(grant.id));
    EXPECT_TRUE(service.grants().empty());
    (void)service.request(ask("git push origin main"));
    EXPECT_EQ(calls.size(), 9u);
    EXPECT_TRUE(service.revoke("ap-unknown"));
}

// A standing grant covers later runs nobody looks at: a command that could not be shown whole (a
// character shown escaped, or too long) gets none, whatever a responder answers.
TEST(Approval, ACommandThatCannotBeShownWholeIsNeverGrantedForTheSession) {
    const std::string nbsp = "\u00a0";
    std::string padded = "echo ok";
    for (int i = 0; i < 600; ++i)
        padded += nbsp;
    padded += "; touch pwned";
    for (const std::string& command :
         std::vector<std::string>{padded, "echo ok\u202e; touch pwned", "make\nmake install",
                                  "echo " + std::string(display_bound, 'x')}) {
        temp_dir dir;
        auto log = make_log(dir);
        approval_service service({}, log);
        std::vector<std::string> calls;
        service.add_responder(answering("person", approval_outcome::allowed_for_session, &calls));
        const auto decision = service.request(ask(command));
        EXPECT_EQ(decision.outcome, approval_outcome::unavailable) << command;
        EXPECT_FALSE(decision.grant);
        EXPECT_NE(decision.detail.find("cannot be shown whole"), std::string::npos)
            << decision.detail;
        EXPECT_TRUE(service.grants().empty());
        const auto pair = audit(*log);
        ASSERT_EQ(pair.size(), 2u);
        EXPECT_EQ(pair[1]["outcome"], "unavailable");
        EXPECT_FALSE(pair[1].contains("grant"));
        // Allowed once is still an answer.
        approval_service once;
        once.add_responder(answering("person", approval_outcome::allowed_once));
        EXPECT_EQ(once.request(ask(command)).outcome, approval_outcome::allowed_once);
    }
}

// BASH_ENV, PATH or an exported function change what runs as much as the command's text: the
// person sees them, the log records them, and no standing grant covers a call that sets any.
TEST(Approval, ACallThatChangesTheEnvironmentIsNeverCoveredByAGrant) {
    temp_dir dir;
    auto log = make_log(dir);
    approval_service service({}, log);
    std::vector<approval_request> seen;
    service.add_responder(std::make_shared<function_responder>(
        "person", [&seen](const approval_request& request, std::stop_token) {
            seen.push_back(request);
            return std::optional(approval_outcome::allowed_for_session);
        }));
    ASSERT_EQ(service.request(ask("git status")).outcome, approval_outcome::allowed_for_session);
    for (const auto& env :
         {std::map<std::string, std::optional<std::string>>{{"BASH_ENV", "/ws/evil.sh"}},
          std::map<std::string, std::optional<std::string>>{{"BASH_FUNC_git%%", "() { id; }"},
                                                            {"PATH", std::nullopt}}}) {
        approval_request request = ask("git status");
        request.env = env_overrides(env);
        const auto decision = service.request(request);
        EXPECT_EQ(decision.source, decided_by::responder);  // asked, not covered
        // Nor granted: no grant could cover it, so none was offered, and an answer that takes
        // one answers nothing that was asked.
        EXPECT_EQ(decision.outcome, approval_outcome::unavailable);
        EXPECT_EQ(decision.detail,
                  "a standing grant is not given: a call that sets or unsets the environment is "
                  "asked about every time");
        EXPECT_FALSE(decision.grant);
    }
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[1].env, (std::vector<std::string>{"BASH_ENV=/ws/evil.sh"}));
    EXPECT_EQ(seen[2].env, (std::vector<std::string>{"BASH_FUNC_git%%=() { id; }", "-PATH"}));
    const auto events = audit(*log);
    ASSERT_EQ(events.size(), 6u);
    EXPECT_FALSE(events[0].contains("env"));
    EXPECT_EQ(events[2]["env"], nlohmann::json({"BASH_ENV=/ws/evil.sh"}));
    // The plain command is still covered.
    EXPECT_EQ(service.request(ask("git status")).source, decided_by::grant);
}

// `python3 -` or `bash` run what they read: a call that feeds stdin, or keeps it open for the
// agent to write later, is shown with its input and never covered by a grant of its text.
TEST(Approval, ACallThatFeedsStdinIsShownItsInputAndNeverCoveredByAGrant) {
    temp_dir dir;
    auto log = make_log(dir);
    approval_service service({}, log);
    std::vector<approval_request> seen;
    service.add_responder(std::make_shared<function_responder>(
        "person", [&seen](const approval_request& request, std::stop_token) {
            seen.push_back(request);
            return std::optional(approval_outcome::allowed_for_session);
        }));
    ASSERT_EQ(service.request(ask("python3 -")).outcome, approval_outcome::allowed_for_session);
    for (const auto& input : {describe_input(std::string("import os; os.system('id')\n"), false),
                              describe_input(std::nullopt, true)}) {
        approval_request request = ask("python3 -");
        request.input = input;
        EXPECT_EQ(service.request(request).source, decided_by::responder);  // asked, not covered
    }
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[1].input, "stdin: 27 bytes: import os; os.system('id')\\n");
    EXPECT_EQ(seen[2].input, "stdin: kept open: the agent can write to it while the command runs");
    const auto events = audit(*log);
    ASSERT_EQ(events.size(), 6u);
    EXPECT_FALSE(events[0].contains("input"));
    EXPECT_EQ(events[2]["input"], seen[1].input);
    EXPECT_EQ(service.request(ask("python3 -")).source, decided_by::grant);
}

TEST(Approval, DescribeInputShowsWhatTheCommandWillReadEscapedAndCut) {
    EXPECT_EQ(describe_input(std::nullopt, false), "");
    EXPECT_EQ(describe_input(std::string(), false), "");
    // No byte can redraw the question.
    EXPECT_EQ(describe_input(std::string("a\x1b[2Jb"), false), "stdin: 6 bytes: a\\x1b[2Jb");
    EXPECT_EQ(describe_input(std::string("ls\n"), true),
              "stdin: 3 bytes: ls\\n; then kept open: the agent can write to it while the "
              "command runs");
    const std::string shown = describe_input(std::string(5000, 'x'), false);
    EXPECT_EQ(shown.rfind("stdin: 5000 bytes: xxx", 0), 0u) << shown;
    EXPECT_LT(shown.size(), 600u);
    EXPECT_EQ(shown.substr(shown.size() - 3), "\u2026");
    // A cut never splits a UTF-8 sequence.
    const std::string wide = describe_input(std::string(399, 'x') + "\u00e9" + "tail", false);
    EXPECT_NE(wide.find(std::string(399, 'x') + " \u2026"), std::string::npos) << wide;
}

TEST(Approval, GrantsWithoutALogLastAsLongAsTheService) {
    approval_service service;
    std::vector<std::string> calls;
    service.add_responder(answering("person", approval_outcome::allowed_for_session, &calls));
    EXPECT_EQ(service.request(ask("npm test")).outcome, approval_outcome::allowed_for_session);
    EXPECT_EQ(service.request(ask("npm  test")).by, "grant");
    EXPECT_EQ(calls.size(), 1u);
    ASSERT_EQ(service.grants().size(), 1u);
    EXPECT_FALSE(service.revoke(service.grants()[0].id));
    (void)service.request(ask("npm test"));
    EXPECT_EQ(calls.size(), 2u);
}

TEST(Approval, AnUnreadableLogAllowsNothing) {
    temp_dir dir;
    auto log = make_log(dir);
    {
        std::ofstream out(dir / "s.jsonl", std::ios::app);
        out << "garbage\n";
    }
    approval_service service({}, log);
    service.add_responder(answering("yes", approval_outcome::allowed_once));
    const auto decision = service.request(ask());
    EXPECT_EQ(decision.outcome, approval_outcome::unavailable);
    EXPECT_EQ(decision.source, decided_by::unrecorded);
    EXPECT_NE(decision.detail.find("line 2"), std::string::npos) << decision.detail;
    EXPECT_EQ(service.effective_policy(), approval_policy::never);
}

TEST(Approval, ConcurrentRequestsEachGetTheirOwnPair) {
    temp_dir dir;
    auto log = make_log(dir);
    approval_service service({}, log);
    service.add_responder(answering("yes", approval_outcome::allowed_once));
    std::vector<std::thread> threads;
    std::atomic<int> allowed{0};
    for (int i = 0; i < 8; ++i) {
        threads.emplace_back([&] {
            if (service.request(ask()).outcome == approval_outcome::allowed_once) ++allowed;
        });
    }
    for (auto& thread : threads)
        thread.join();
    EXPECT_EQ(allowed, 8);
    const auto pairs = audit(*log);
    EXPECT_EQ(pairs.size(), 16u);
    std::map<std::string, int> per_id;
    for (const auto& event : pairs)
        ++per_id[event["id"].get<std::string>()];
    EXPECT_EQ(per_id.size(), 8u);
    for (const auto& [id, count] : per_id)
        EXPECT_EQ(count, 2) << id;
}

}  // namespace
}  // namespace cordon::policy
