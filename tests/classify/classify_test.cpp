// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The classification matrix: one function decides every ending, in order: nothing started, the
// runner failed, the command ran; out-of-band proof before stderr text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <string>

#include "classify/classify.hpp"
#include "classify/signature_scanner.hpp"
#include "sandbox/backends.hpp"

namespace cordon::classify {
namespace {

using sandbox::backend_kind;
using sandbox::confined_argv;
using ::testing::HasSubstr;

confined_argv wrapped(backend_kind kind) {
    confined_argv out;
    out.backend = kind;
    out.denial_signatures = sandbox::denial_signatures(kind);
    out.runner_failure_rules = sandbox::runner_failure_rules(kind);
    return out;
}

using sandbox::launcher_stage;
using sandbox::status_report;
using verdict_kind = sandbox::status_report::verdict;

status_report status(verdict_kind outcome, std::string message = {},
                     launcher_stage stage = launcher_stage::ruleset, int error = 0) {
    status_report out;
    out.outcome = outcome;
    out.message = std::move(message);
    out.stage = stage;
    out.error = error;
    return out;
}

// A run that ended with `exit_code` (nullopt: `signal`), and what its channel said.
run_evidence ended(std::optional<int> exit_code, std::optional<status_report> channel,
                   bool denial_seen = false, std::optional<int> signal = std::nullopt) {
    run_evidence out;
    out.exit_code = exit_code;
    out.signal = signal;
    out.status = std::move(channel);
    out.denial_seen = denial_seen;
    return out;
}

verdict judge(const run_evidence& evidence, const confined_argv* confined,
              std::string_view stderr_text = {}) {
    return decide(evidence, {confined, "runner", stderr_text});
}

// ---- 1. nothing started -----------------------------------------------------------------------

TEST(Decide, ASpawnFailureIsTheRequestsUnlessTheRunnerItselfCouldNotRun) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    run_evidence missing;
    missing.spawn_failure = spawn_error{spawn_stage::exec, ENOENT};

    // Unconfined: the program is missing.
    verdict plain = decide(missing, {nullptr, "prog", {}});
    EXPECT_EQ(plain.outcome.kind, outcome_kind::not_started);
    ASSERT_TRUE(plain.outcome.start_failure);
    EXPECT_EQ(plain.outcome.start_failure->stage, spawn_stage::exec);
    EXPECT_EQ(plain.outcome.message, "prog: No such file or directory");
    EXPECT_FALSE(plain.outcome.started());

    // Confined: the spawned program is the runner, so the sandbox failed.
    verdict confined = decide(missing, {&bwrap, "/usr/bin/bwrap", {}});
    EXPECT_EQ(confined.outcome.kind, outcome_kind::runner_failed);
    EXPECT_EQ(confined.outcome.message, "/usr/bin/bwrap: No such file or directory");

    // Unless the request caused it (an argv too large) or it failed at another stage.
    for (const spawn_error error :
         {spawn_error{spawn_stage::exec, E2BIG}, spawn_error{spawn_stage::exec, ENOMEM},
          spawn_error{spawn_stage::chdir, ENOENT}, spawn_error{spawn_stage::cgroup, EOPNOTSUPP}}) {
        run_evidence e;
        e.spawn_failure = error;
        EXPECT_EQ(decide(e, {&bwrap, "bwrap", {}}).outcome.kind, outcome_kind::not_started)
            << to_string(error.stage) << " " << error.error;
    }

    // The spawner's own explanation wins over errno's.
    run_evidence limited;
    limited.spawn_failure = spawn_error{spawn_stage::cgroup, EOPNOTSUPP};
    limited.spawn_detail = "cannot enforce the requested limits: no cgroup";
    EXPECT_EQ(decide(limited, {nullptr, "prog", {}}).outcome.message, limited.spawn_detail);
}

// ---- the Landlock rung applied in the forked child ---------------------------------------------

// The spawned program is the command: its exec failure is the command's, as when the launcher
// reports it, and only a failure to put the walls up is the sandbox's, in the launcher's words.
TEST(DecideInChild, TheSameAnswersAsTheLaunchersPath) {
    const confined_argv landlock = wrapped(backend_kind::landlock);
    const auto in_child = [&landlock](const run_evidence& evidence) {
        return decide(evidence, {&landlock, "/tmp/prog", "", "/tmp/prog", true});
    };

    run_evidence missing;
    missing.spawn_failure = spawn_error{spawn_stage::exec, ENOENT};
    const verdict child = in_child(missing);
    EXPECT_EQ(child.outcome.kind, outcome_kind::not_started);
    ASSERT_TRUE(child.outcome.start_failure);
    EXPECT_EQ(child.outcome.start_failure->stage, spawn_stage::exec);
    const std::string line = "cordon-landlock: exec failed: /tmp/prog: No such file or directory";
    const verdict launcher =
        decide(ended(125, status(verdict_kind::failed, line, launcher_stage::exec, ENOENT)),
               {&landlock, "cordon-landlock", "", "/tmp/prog"});
    EXPECT_EQ(child.outcome.kind, launcher.outcome.kind);
    EXPECT_EQ(child.outcome.message, launcher.outcome.message);

    run_evidence walls;
    walls.spawn_failure =
        spawn_error{spawn_stage::confine, EPERM, static_cast<int>(launcher_stage::ruleset)};
    walls.spawn_detail = "cordon-landlock: landlock ruleset error: Operation not permitted";
    const verdict failed = in_child(walls);
    EXPECT_EQ(failed.outcome.kind, outcome_kind::runner_failed);
    EXPECT_EQ(failed.outcome.message, walls.spawn_detail);
    EXPECT_FALSE(failed.outcome.started());
}

// With no runner between cordon and the command, nothing on the command's stderr or in its exit
// status can be taken for a runner failure: the exec proved the start.
TEST(DecideInChild, TheCommandCannotPassForAFailedRunner) {
    const confined_argv landlock = wrapped(backend_kind::landlock);
    const std::string forged = "cordon-landlock: landlock ruleset error: Operation not permitted\n";
    const verdict v = decide(ended(125, std::nullopt, true),
                             {&landlock, "/usr/bin/bash", forged, "/usr/bin/bash", true});
    EXPECT_EQ(v.outcome.kind, outcome_kind::exited);
    EXPECT_EQ(v.outcome.exit_code, std::optional<int>(125));
    // The same stderr without the proof of an exec is a runner failure on the launcher's path.
    EXPECT_EQ(judge(ended(125, std::nullopt), &landlock, forged).outcome.kind,
              outcome_kind::runner_failed);
}

// ---- 2. the runner failed ---------------------------------------------------------------------

TEST(Decide, AFailureRecordIsARunnerFailureWithItsMessageAndOutranksDenial) {
    const confined_argv landlock = wrapped(backend_kind::landlock);
    const std::string line = "cordon-landlock: cannot open rule path: /x: Permission denied";
    verdict v = judge(ended(125, status(verdict_kind::failed, line), true), &landlock,
                      "noise that is not the line\n");
    EXPECT_EQ(v.outcome.kind, outcome_kind::runner_failed);
    EXPECT_EQ(v.outcome.message, line);
    EXPECT_FALSE(v.outcome.exit_code);
    EXPECT_FALSE(v.denied);
}

// The launcher had confined itself; only the command's exec failed: the sandbox worked, and the
// answer is the one a run without a sandbox gives.
TEST(Decide, TheLaunchersExecStageIsNotStartedNotARunnerFailure) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    const std::string line = "cordon-landlock: exec failed: /tmp/prog: No such file or directory";
    verdict v =
        judge(ended(125, status(verdict_kind::failed, line, launcher_stage::exec, ENOENT)), &bwrap);
    EXPECT_EQ(v.outcome.kind, outcome_kind::not_started);
    ASSERT_TRUE(v.outcome.start_failure);
    EXPECT_EQ(v.outcome.start_failure->stage, spawn_stage::exec);
    EXPECT_EQ(v.outcome.start_failure->error, ENOENT);
    EXPECT_EQ(v.outcome.message, line);
    EXPECT_FALSE(v.outcome.exit_code) << "the launcher's 125 is not the command's status";

    // Told the command, the message is the one a run without a sandbox gives.
    const run_evidence launcher =
        ended(125, status(verdict_kind::failed, line, launcher_stage::exec, ENOENT));
    run_evidence spawner;
    spawner.spawn_failure = spawn_error{spawn_stage::exec, ENOENT};
    EXPECT_EQ(decide(launcher, {&bwrap, "bwrap", "", "/tmp/prog"}).outcome.message,
              decide(spawner, {nullptr, "/tmp/prog", "", ""}).outcome.message);
}

TEST(Decide, AMalformedChannelIsARunnerFailure) {
    const confined_argv landlock = wrapped(backend_kind::landlock);
    verdict v = judge(ended(0, sandbox::decode_status("garbage")), &landlock);
    EXPECT_EQ(v.outcome.kind, outcome_kind::runner_failed);
    EXPECT_THAT(v.outcome.message, HasSubstr("malformed"));
}

// Silence proves nothing: a runner that exits, even 0, without the `started` record never ran
// the command (a launcher that exits 0 without exec'ing is not a successful run).
TEST(Decide, ASilentChannelIsARunnerFailureWhateverTheExitStatus) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    for (const int code : {0, 1, 125}) {
        verdict v = judge(ended(code, status(verdict_kind::silent)), &bwrap);
        EXPECT_EQ(v.outcome.kind, outcome_kind::runner_failed) << code;
        EXPECT_EQ(v.outcome.message, "the sandbox runner exited with status " +
                                         std::to_string(code) + " without starting the command");
    }
    verdict killed =
        judge(ended(std::nullopt, status(verdict_kind::silent), false, SIGSEGV), &bwrap);
    EXPECT_EQ(killed.outcome.kind, outcome_kind::runner_failed);
    EXPECT_THAT(killed.outcome.message, HasSubstr("killed by SIGSEGV"));

    // The runner's own line, when it printed one, says it better.
    verdict named = judge(ended(1, status(verdict_kind::silent)), &bwrap,
                          "\nbwrap: Can't find source path /nope: No such file or directory\n");
    EXPECT_EQ(named.outcome.message,
              "bwrap: Can't find source path /nope: No such file or directory");
}

TEST(Decide, ASilentRunnerEndedByCordonIsATimeoutOrACancellation) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    run_evidence e = ended(std::nullopt, status(verdict_kind::silent), false, SIGKILL);
    e.timed_out = true;
    EXPECT_EQ(judge(e, &bwrap).outcome.kind, outcome_kind::timed_out);
    e.timed_out = false;
    e.aborted = true;
    EXPECT_EQ(judge(e, &bwrap).outcome.kind, outcome_kind::aborted);
}

TEST(Decide, ASilentRunnerAtTheRunsLimitWasStoppedByTheLimit) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    run_evidence e = ended(std::nullopt, status(verdict_kind::silent), false, SIGKILL);
    e.limits_hit.memory = true;
    verdict v = judge(e, &bwrap);
    EXPECT_EQ(v.outcome.kind, outcome_kind::not_started);
    ASSERT_TRUE(v.outcome.start_failure);
    EXPECT_EQ(v.outcome.start_failure->stage, spawn_stage::cgroup);
    EXPECT_EQ(v.outcome.start_failure->error, ENOMEM);
    EXPECT_THAT(v.outcome.message, HasSubstr("memory limit"));
}

// The launcher failed after the run met its limit (it could not fork the command): the limit,
// not the sandbox, kept the command from starting.
TEST(Decide, ALauncherFailureAtTheRunsLimitWasStoppedByTheLimit) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    run_evidence e = ended(125, status(verdict_kind::failed,
                                       "cordon-landlock: cannot start the "
                                       "command: Resource temporarily "
                                       "unavailable",
                                       launcher_stage::spawn, EAGAIN));
    verdict failed = judge(e, &bwrap);
    EXPECT_EQ(failed.outcome.kind, outcome_kind::runner_failed) << "no limit was met";
    e.limits_hit.processes = true;
    verdict limited = judge(e, &bwrap);
    EXPECT_EQ(limited.outcome.kind, outcome_kind::not_started);
    ASSERT_TRUE(limited.outcome.start_failure);
    EXPECT_EQ(limited.outcome.start_failure->stage, spawn_stage::cgroup);
    EXPECT_EQ(limited.outcome.start_failure->error, EAGAIN);
    EXPECT_THAT(limited.outcome.message, HasSubstr("process limit"));
}

// What proves the runner's job depends on the job: `started` for a command, the probe answer for
// --probe. Either record in the other's place is a runner failure.
TEST(Decide, TheProofMustMatchTheJob) {
    confined_argv run = wrapped(backend_kind::landlock);
    run.status = sandbox::status_channel{sandbox::runner_status_fd};
    confined_argv probe = run;
    probe.status->job = sandbox::runner_job::answer_probe;

    EXPECT_EQ(judge(ended(0, status(verdict_kind::started)), &run).outcome.kind,
              outcome_kind::exited);
    EXPECT_EQ(judge(ended(0, status(verdict_kind::probed)), &probe).outcome.kind,
              outcome_kind::exited);
    EXPECT_EQ(judge(ended(0, status(verdict_kind::probed)), &run).outcome.kind,
              outcome_kind::runner_failed);
    EXPECT_EQ(judge(ended(0, status(verdict_kind::started)), &probe).outcome.kind,
              outcome_kind::runner_failed);
}

TEST(Decide, RunnerTextIsOrdinaryOutputWhenTheChannelProvesTheCommandRan) {
    for (auto kind : {backend_kind::bwrap, backend_kind::landlock}) {
        const confined_argv confined = wrapped(kind);
        const char* text =
            kind == backend_kind::bwrap ? "bwrap: fake\n" : "cordon-landlock: fake\n";
        verdict v = judge(ended(125, status(verdict_kind::started)), &confined, text);
        EXPECT_EQ(v.outcome.kind, outcome_kind::exited) << sandbox::to_string(kind);
        EXPECT_EQ(v.outcome.exit_code, 125);
        EXPECT_FALSE(v.denied);
    }
}

// Without a channel (Seatbelt), the backend's stderr rules decide, unless cordon ended the run.
TEST(Decide, StderrRulesApplyOnlyWithoutAChannel) {
    const confined_argv seatbelt = wrapped(backend_kind::seatbelt);
    verdict v = judge(ended(1, std::nullopt, true), &seatbelt, "sandbox-exec: profile error\n");
    EXPECT_EQ(v.outcome.kind, outcome_kind::runner_failed);
    EXPECT_EQ(v.outcome.message, "sandbox-exec: profile error");
    EXPECT_FALSE(v.denied);

    run_evidence timed = ended(std::nullopt, std::nullopt, false, SIGTERM);
    timed.timed_out = true;
    EXPECT_EQ(judge(timed, &seatbelt, "sandbox-exec: profile error\n").outcome.kind,
              outcome_kind::timed_out);
}

// ---- 3. the command ran -----------------------------------------------------------------------

TEST(Decide, WhoEndedTheCommandInOrder) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    const auto started = status(verdict_kind::started);

    verdict exited = judge(ended(3, started), &bwrap);
    EXPECT_EQ(exited.outcome.kind, outcome_kind::exited);
    EXPECT_EQ(exited.outcome.exit_code, 3);
    EXPECT_TRUE(exited.outcome.started());

    verdict signaled = judge(ended(std::nullopt, started, false, SIGSEGV), &bwrap);
    EXPECT_EQ(signaled.outcome.kind, outcome_kind::signaled);
    EXPECT_EQ(signaled.outcome.signal, SIGSEGV);

    // A timeout outranks how the leader died, and keeps it: a TERM-trapping command that exits
    // 143 timed out all the same.
    run_evidence timed = ended(143, started);
    timed.timed_out = true;
    verdict timed_out = judge(timed, &bwrap);
    EXPECT_EQ(timed_out.outcome.kind, outcome_kind::timed_out);
    EXPECT_EQ(timed_out.outcome.exit_code, 143);

    run_evidence cancelled = ended(std::nullopt, started, false, SIGKILL);
    cancelled.aborted = true;
    EXPECT_EQ(judge(cancelled, &bwrap).outcome.kind, outcome_kind::aborted);

    // Unconfined runs have no runner: the same rules, no channel, never denied.
    EXPECT_EQ(judge(ended(0, std::nullopt, true), nullptr).outcome.kind, outcome_kind::exited);
    EXPECT_FALSE(judge(ended(1, std::nullopt, true), nullptr).denied);
}

// A run the OOM killer ended at its memory limit says so, rather than `signaled: SIGKILL` with no
// reason; cordon's own deadline or the caller's cancel, when they came first, still say who ended
// it.
TEST(Decide, TheMemoryLimitEndingTheCommandIsItsOwnOutcome) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    const auto started = status(verdict_kind::started);
    run_evidence oom = ended(std::nullopt, started, false, SIGKILL);
    oom.limits_hit.memory = true;
    verdict out = judge(oom, &bwrap);
    EXPECT_EQ(out.outcome.kind, outcome_kind::out_of_memory);
    EXPECT_EQ(out.outcome.signal, SIGKILL) << "how the leader went is kept";
    EXPECT_TRUE(out.outcome.started());
    EXPECT_FALSE(out.denied);

    // A leader that outlived the process the kernel picked, and exited on its own.
    run_evidence survived = ended(1, started, true);
    survived.limits_hit.memory = true;
    EXPECT_EQ(judge(survived, &bwrap).outcome.kind, outcome_kind::out_of_memory);
    EXPECT_EQ(judge(survived, nullptr).outcome.kind, outcome_kind::out_of_memory);

    oom.timed_out = true;
    EXPECT_EQ(judge(oom, &bwrap).outcome.kind, outcome_kind::timed_out);
    oom.timed_out = false;
    oom.aborted = true;
    EXPECT_EQ(judge(oom, &bwrap).outcome.kind, outcome_kind::aborted);
    // A process limit met is no OOM: the command ran on and ended as it did.
    run_evidence forks = ended(0, started);
    forks.limits_hit.processes = true;
    EXPECT_EQ(judge(forks, &bwrap).outcome.kind, outcome_kind::exited);
}

// Under bwrap the launcher's `ended` record says how the command ended; bwrap's own 128+N does not
// tell a signal from an exit.
TEST(Decide, TheLaunchersEndingOutranksTheRunnersStatus) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    status_report started = status(verdict_kind::started);
    started.ended = status_report::ending{std::nullopt, SIGTERM};
    verdict signaled = judge(ended(128 + SIGTERM, started, true), &bwrap);
    EXPECT_EQ(signaled.outcome.kind, outcome_kind::signaled);
    EXPECT_EQ(signaled.outcome.signal, SIGTERM);
    EXPECT_EQ(signaled.outcome.exit_code, std::nullopt);
    EXPECT_FALSE(signaled.denied) << "a command ended by a signal has no exit code to deny";

    started.ended = status_report::ending{128 + SIGTERM, std::nullopt};
    verdict exited = judge(ended(128 + SIGTERM, started, true), &bwrap);
    EXPECT_EQ(exited.outcome.kind, outcome_kind::exited);
    EXPECT_EQ(exited.outcome.exit_code, 128 + SIGTERM);
    EXPECT_EQ(exited.outcome.signal, std::nullopt);
    EXPECT_TRUE(exited.denied);
}

// Every channel a deadline's or a cancellation's signal can leave, whichever step of the launcher
// it lands on (docs/contract.md, "Classification order"): nothing; `ended` alone (the launcher's
// child SIGKILLed before `started`); `started` (the leader killed before or after its exec, or
// the parent before `ended`); `started` then `ended`. Each is the deadline's or the caller's,
// never a runner failure (which would also drop the shared probe verdict).
TEST(Decide, ASignalAtAnyStepOfTheLauncherIsTheDeadlinesOrTheCallers) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    const auto record = [](sandbox::launcher_record_kind kind, int exit_code, int signal) {
        sandbox::launcher_status_record out{};
        out.magic = sandbox::launcher_status_magic;
        out.kind = static_cast<std::uint32_t>(kind);
        out.exit_code = exit_code;
        out.signal = signal;
        return std::string(reinterpret_cast<const char*>(&out), sizeof out);
    };
    const std::string started = record(sandbox::launcher_record_kind::started, 0, 0);
    const std::string killed = record(sandbox::launcher_record_kind::ended, -1, SIGKILL);
    const std::string termed = record(sandbox::launcher_record_kind::ended, -1, SIGTERM);
    const std::string exited = record(sandbox::launcher_record_kind::ended, 0, 0);
    for (const std::string& channel :
         {std::string(), killed, started, started + termed, started + exited}) {
        SCOPED_TRACE(channel.size() / sizeof(sandbox::launcher_status_record));
        for (const bool by_deadline : {true, false}) {
            run_evidence evidence =
                ended(std::nullopt, sandbox::decode_status(channel), false, SIGKILL);
            (by_deadline ? evidence.timed_out : evidence.aborted) = true;
            const verdict v = judge(evidence, &bwrap);
            EXPECT_EQ(v.outcome.kind,
                      by_deadline ? outcome_kind::timed_out : outcome_kind::aborted);
            EXPECT_FALSE(v.outcome.runner);
        }
    }
    // `ended` alone says how the launcher's child went.
    run_evidence before_start = ended(std::nullopt, sandbox::decode_status(killed), false, SIGKILL);
    before_start.timed_out = true;
    EXPECT_EQ(judge(before_start, &bwrap).outcome.signal, SIGKILL);
    // Without cordon's deadline or a cancellation, a child killed before `started` proved
    // nothing: the runner did not start the command.
    run_evidence unexplained = ended(128 + SIGKILL, sandbox::decode_status(killed));
    EXPECT_EQ(judge(unexplained, &bwrap).outcome.kind, outcome_kind::runner_failed);
}

TEST(Decide, DenialNeedsANonZeroExitAndTheDialect) {
    const confined_argv bwrap = wrapped(backend_kind::bwrap);
    const auto started = status(verdict_kind::started);
    EXPECT_TRUE(judge(ended(1, started, true), &bwrap).denied);
    EXPECT_FALSE(judge(ended(0, started, true), &bwrap).denied);
    EXPECT_FALSE(judge(ended(std::nullopt, started, true, SIGKILL), &bwrap).denied)
        << "a signal is never a denial";
    EXPECT_FALSE(judge(ended(1, started, false), &bwrap).denied);
}

TEST(Outcome, NamesAreStable) {
    EXPECT_EQ(to_string(outcome_kind::exited), "exited");
    EXPECT_EQ(to_string(outcome_kind::signaled), "signaled");
    EXPECT_EQ(to_string(outcome_kind::timed_out), "timed-out");
    EXPECT_EQ(to_string(outcome_kind::out_of_memory), "out-of-memory");
    EXPECT_EQ(to_string(outcome_kind::aborted), "aborted");
    EXPECT_EQ(to_string(outcome_kind::not_started), "not-started");
    EXPECT_EQ(to_string(outcome_kind::runner_failed), "runner-failed");
    EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
    EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
    EXPECT_EQ(signal_name(1000), "SIG1000");
}

TEST(MatchRunnerFailure, LauncherRuleNeedsExit125AndSkipsTheNotice) {
    auto rules = sandbox::runner_failure_rules(backend_kind::landlock);
    std::string notice = std::string(sandbox::launcher_notice_line) + "\n";
    // The notice alone is never fatal, at any exit code.
    for (int code : {1, 2, 125}) {
        EXPECT_FALSE(match_runner_failure(code, notice, rules).has_value()) << code;
    }
    // Upper-cased notice still excluded.
    std::string upper = notice;
    for (char& c : upper)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_FALSE(match_runner_failure(125, upper, rules).has_value());
    // A fatal line after the notice is returned, verbatim.
    auto fatal = match_runner_failure(
        125, notice + "cordon-landlock: exec failed: x: No such file or directory\n", rules);
    ASSERT_TRUE(fatal.has_value());
    EXPECT_EQ(*fatal, "cordon-landlock: exec failed: x: No such file or directory");
    // The same fatal line at another exit code is the command's own business.
    EXPECT_FALSE(match_runner_failure(1, "cordon-landlock: exec failed\n", rules).has_value());
    // Notice plus extra text on the same line is fatal.
    EXPECT_TRUE(match_runner_failure(125,
                                     "cordon-landlock: partial enforcement (older Landlock "
                                     "ABI) and more\n",
                                     rules)
                    .has_value());
}

TEST(MatchRunnerFailure, ZeroAndSignalNeverMatchAndBlankSignaturesAreIgnored) {
    std::vector<sandbox::runner_failure_rule> rules{{{}, {"  ", "bwrap: "}, {}}};
    EXPECT_FALSE(match_runner_failure(0, "bwrap: x\n", rules).has_value());
    EXPECT_FALSE(match_runner_failure(std::nullopt, "bwrap: x\n", rules).has_value());
    EXPECT_FALSE(match_runner_failure(1, "anything at all\n", rules).has_value());
    EXPECT_EQ(match_runner_failure(1, "first\r\nBWRAP: second\r\n", rules).value(),
              "BWRAP: second");
}

TEST(MatchesDenial, CaseInsensitiveDialects) {
    auto bwrap = sandbox::denial_signatures(backend_kind::bwrap);
    auto landlock = sandbox::denial_signatures(backend_kind::landlock);
    auto seatbelt = sandbox::denial_signatures(backend_kind::seatbelt);
    EXPECT_TRUE(matches_denial(1, "bash: /etc/x: READ-ONLY FILE SYSTEM", bwrap));
    // Landlock runs inside bwrap too: where a mount does not govern a write (a FIFO), it does.
    EXPECT_TRUE(matches_denial(1, "bash: /var/tmp/fifo: Permission denied", bwrap));
    EXPECT_FALSE(matches_denial(1, "bash: /etc/x: Permission denied", seatbelt));
    EXPECT_TRUE(matches_denial(1, "bash: /etc/x: Permission denied", landlock));
    // A link or rename across the walls (bwrap's binds, Landlock's REFER) answers EXDEV.
    for (const auto* dialect : {&bwrap, &landlock}) {
        EXPECT_TRUE(matches_denial(
            1, "ln: failed to create hard link 'ws/x' => '/etc/x': Invalid cross-device link",
            *dialect));
        EXPECT_TRUE(matches_denial(1, "OSError: [Errno 18] Invalid cross-device link", *dialect));
    }
    EXPECT_FALSE(matches_denial(1, "Invalid cross-device link", seatbelt));
    // Bare EPERM text is a denial only under Seatbelt.
    EXPECT_FALSE(matches_denial(1, "Operation not permitted", landlock));
    EXPECT_TRUE(matches_denial(1, "Operation not permitted", seatbelt));
    EXPECT_FALSE(matches_denial(0, "Permission denied", landlock));
    EXPECT_FALSE(matches_denial(std::nullopt, "Permission denied", landlock));
}

TEST(SignatureScanner, FindsAMatchSplitAcrossChunksAndEarlyInALongStream) {
    std::vector<std::string> signatures{"read-only file system"};
    signature_scanner scanner(signatures);
    scanner.feed("bash: /etc/x: Read-on");
    EXPECT_FALSE(scanner.matched());
    scanner.feed("ly File System\n");
    EXPECT_TRUE(scanner.matched());

    signature_scanner early(signatures);
    early.feed("mkdir: Read-only file system\n");
    for (int i = 0; i < 10000; ++i)
        early.feed(std::string(100, '.'));
    EXPECT_TRUE(early.matched());

    signature_scanner split_every_byte(signatures);
    for (char c : std::string("xx read-only file system yy")) {
        split_every_byte.feed(std::string_view(&c, 1));
    }
    EXPECT_TRUE(split_every_byte.matched());
}

TEST(SignatureScanner, BlankSignaturesNeverMatch) {
    std::vector<std::string> signatures{"", "   "};
    signature_scanner scanner(signatures);
    scanner.feed("anything");
    EXPECT_FALSE(scanner.matched());
}

}  // namespace
}  // namespace cordon::classify
