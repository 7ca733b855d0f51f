// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run`'s exit codes, one test per row of the table in cli/commands.hpp (and
// docs/contract.md), each reached the way a user reaches it, with the real runners.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "real_backend.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

class ExitCode : public ::testing::Test {
protected:
    cli_result run(std::vector<std::string> args) {
        args.insert(args.begin(), "run");
        return run_cordon(args, workspace_.path());
    }
    // The same invocation with --json: the outcome that explains the code.
    std::string outcome_of(std::vector<std::string> args) {
        args.insert(args.begin(), {"run", "--json"});
        const cli_result result = run_cordon(args, workspace_.path());
        return nlohmann::json::parse(result.out).value("outcome", "");
    }

    temp_dir workspace_{"/var/tmp"};
};

TEST_F(ExitCode, TheCommandsOwnStatusWhenItExited) {
    for (const char* mode : {"danger-full-access", "read-only", "workspace-write"}) {
        for (const char* code : {"0", "1", "7", "255"}) {
            EXPECT_EQ(
                run({"--mode", mode, "--", test_child_path().string(), "exit", code}).exit_code,
                std::stoi(code))
                << mode;
        }
    }
    EXPECT_EQ(outcome_of({"--", test_child_path().string(), "exit", "7"}), "exited");
}

TEST_F(ExitCode, Usage2ForAnInvocationCordonRefusesAndNothingRuns) {
    const fs::path marker = workspace_ / "ran";
    const std::string touch = "touch " + marker.string();
    const std::vector<std::vector<std::string>> refused{
        {"--mode", "no-such-mode", "-c", touch},
        {"--timeout", "soon", "-c", touch},
        {"--max-output", "17M", "-c", touch},
        {"--max-memory", "1K", "-c", touch},
        {"--max-memory", "lots", "-c", touch},
        {"--max-memory", "-1G", "-c", touch},
        {"--stdin-file", workspace_.path().string(), "-c", touch},
        {"--mode", "workspace-write", "--workspace", "/", "-c", touch},
        {"--mode", "workspace-write", "--workspace", "/proc", "-c", touch},
    };
    for (const auto& args : refused) {
        const cli_result result = run(args);
        EXPECT_EQ(result.exit_code, cli::exit_usage) << args[1] << " " << result.err;
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_FALSE(fs::exists(marker)) << args[1];
    }
}

// An escalation that was not granted: here nobody can be asked (the test's cordon has no
// controlling terminal). The command never runs; --json says why.
TEST_F(ExitCode, NotApproved3WhenAnEscalationIsNotGrantedAndNothingRuns) {
    const fs::path marker = workspace_ / "ran";
    const std::vector<std::string> escalate{
        "--escalate", "workspace-write",         "--justification", "the test writes a marker",
        "-c",         "touch " + marker.string()};
    const cli_result result = run(escalate);
    EXPECT_EQ(result.exit_code, cli::exit_not_approved) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_FALSE(fs::exists(marker));
    std::vector<std::string> json{"run", "--json"};
    json.insert(json.end(), escalate.begin(), escalate.end());
    const cli_result record = run_cordon(json, workspace_.path());
    EXPECT_EQ(record.exit_code, cli::exit_not_approved);
    EXPECT_EQ(nlohmann::json::parse(record.out)["error"]["code"], "ESCALATION_NOT_APPROVED");
    EXPECT_FALSE(fs::exists(marker));
}

TEST_F(ExitCode, Timeout124WhenCordonsDeadlineEndedTheCommand) {
    const std::vector<std::string> args{"--timeout", "300ms", "--", test_child_path().string(),
                                        "sleep",     "60000"};
    for (const char* mode : {"danger-full-access", "read-only"}) {
        std::vector<std::string> with_mode{"--mode", mode};
        with_mode.insert(with_mode.end(), args.begin(), args.end());
        const cli_result result = run(with_mode);
        EXPECT_EQ(result.exit_code, cli::exit_timeout) << mode;
        EXPECT_NE(result.err.find("[timed out after 300ms]"), std::string::npos) << result.err;
    }
    EXPECT_EQ(outcome_of(args), "timed-out");
}

// The OOM killer at the run's memory limit ended it: 128 + SIGKILL, as a shell reports it, with
// the outcome and the marker saying why.
TEST_F(ExitCode, SignalPlus128WhenTheMemoryLimitEndedTheCommand) {
    std::string why;
    auto cgroups = cgroup_host_or(why);
    if (!cgroups) CORDON_SKIP_OR_FAIL(why);
    if (!cgroups->memory_unlimitable().empty()) CORDON_SKIP_OR_FAIL(cgroups->memory_unlimitable());
    const std::vector<std::string> args{"--max-memory", "32M", "--", test_child_path().string(),
                                        "allocate",     "256"};
    const cli_result result = run(args);
    EXPECT_EQ(result.exit_code, cli::exit_signal_base + SIGKILL) << result.err;
    EXPECT_NE(result.err.find(
                  "[out of memory: the kernel's OOM killer ended the run (memory limit 32 MiB)]"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(outcome_of(args), "out-of-memory");
}

// `cordon mcp --max-memory` takes the same values, and refuses a bad one before serving.
TEST_F(ExitCode, Usage2ForABadMemoryLimitOfTheMcpServer) {
    for (const char* value : {"1K", "lots", "-1G"}) {
        const cli_result result = run_cordon({"mcp", "--max-memory", value}, workspace_.path());
        EXPECT_EQ(result.exit_code, cli::exit_usage) << value << " " << result.err;
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        EXPECT_NE(result.err.find("invalid --max-memory"), std::string::npos) << result.err;
    }
}

TEST_F(ExitCode, SandboxUnavailable125WhenNoBackendCanRunTheCommand) {
    const fs::path marker = workspace_ / "ran";
    const cli_result result =
        run({"--backend", "seatbelt", "--mode", "read-only", "-c", "touch " + marker.string()});
    EXPECT_EQ(result.exit_code, cli::exit_sandbox_unavailable);
    EXPECT_FALSE(fs::exists(marker));
    EXPECT_EQ(outcome_of({"--backend", "seatbelt", "-c", "true"}), "runner-failed");
}

// A limit that was asked for and that the run could not honour: the command never started.
// Under bwrap the runner needs three processes (bwrap, its init, the launcher) before the command:
// whichever of them the limit stops, the answer is the same.
TEST_F(ExitCode, SandboxUnavailable125WhenTheRunnerDiesAtItsLimit) {
    std::string why;
    if (!cgroup_host_or(why)) CORDON_SKIP_OR_FAIL(why);
    for (const char* limit : {"1", "2", "3"}) {
        SCOPED_TRACE(std::string("--max-processes ") + limit);
        const cli_result result =
            run({"--mode", "read-only", "--backend", "bwrap", "--max-processes", limit, "--",
                 test_child_path().string(), "exit", "0"});
        EXPECT_EQ(result.exit_code, cli::exit_sandbox_unavailable) << result.err;
        EXPECT_NE(result.err.find("process limit before the command started"), std::string::npos)
            << result.err;
    }
}

TEST_F(ExitCode, CannotExecute126ForAFileThatIsNotAProgramOrAWorkdirThatCannotBeEntered) {
    const fs::path garbage = workspace_ / "garbage";
    write_file(garbage, "\x01\x02\x03 not a program\n", fs::perms::owner_all);
    const fs::path unexecutable = workspace_ / "unexecutable";
    write_file(unexecutable, "#!/bin/sh\nexit 0\n", fs::perms::owner_read);
    for (const char* mode : {"danger-full-access", "read-only", "workspace-write"}) {
        EXPECT_EQ(run({"--mode", mode, "--", garbage.string()}).exit_code, cli::exit_cannot_execute)
            << mode;
        EXPECT_EQ(run({"--mode", mode, "--", unexecutable.string()}).exit_code,
                  cli::exit_cannot_execute)
            << mode;
    }
    EXPECT_EQ(outcome_of({"--", garbage.string()}), "not-started");
}

TEST_F(ExitCode, NotFound127ForAMissingProgramUnderEveryBackend) {
    for (const auto path : test::every_real_backend) {
        test::scoped_backend_path on(path);
        const std::string backend(test::backend_flag(path));
        for (const char* mode : {"read-only", "workspace-write"}) {
            const cli_result result = run(
                {"--mode", mode, "--backend", backend, "--", "cordon-no-such-program-anywhere"});
            EXPECT_EQ(result.exit_code, cli::exit_not_found)
                << test::to_string(path) << " " << mode;
            EXPECT_EQ(result.err,
                      "cordon run: cordon-no-such-program-anywhere: No such file or directory\n");
        }
    }
    EXPECT_EQ(
        run({"--mode", "danger-full-access", "--", "cordon-no-such-program-anywhere"}).exit_code,
        cli::exit_not_found);
}

TEST_F(ExitCode, SignalPlus128WhenASignalEndedTheCommand) {
    for (const char* mode : {"danger-full-access", "read-only"}) {
        EXPECT_EQ(
            run({"--mode", mode, "--", test_child_path().string(), "kill-self", "9"}).exit_code,
            cli::exit_signal_base + SIGKILL)
            << mode;
        EXPECT_EQ(
            run({"--mode", mode, "--", test_child_path().string(), "kill-self", "15"}).exit_code,
            cli::exit_signal_base + SIGTERM)
            << mode;
    }
    EXPECT_EQ(outcome_of({"--", test_child_path().string(), "kill-self", "9"}), "signaled");
}

// cordon got SIGTERM while the command ran: it ends the command's tree first, then exits as the
// signal would have had it, its record saying `aborted`. So for every signal whose default would
// have ended cordon where it stands (a SIGUSR1 or a SIGQUIT used to, leaving the command's tree
// to its cgroup's reaper and no record), with or without a terminal.
TEST_F(ExitCode, SignalPlus128WhenCordonWasInterruptedAndEndedTheCommandFirst) {
    for (const int signal : {SIGTERM, SIGQUIT, SIGUSR1, SIGALRM, SIGPWR, SIGRTMIN + 3}) {
        SCOPED_TRACE(signal);
        const fs::path ready = workspace_ / "ready";
        const fs::path record = workspace_ / "record.json";
        fs::remove(ready);
        const std::string marker =
            "cordon-interrupted-" + std::to_string(::getpid()) + "-" + std::to_string(signal);
        const std::string script = "'" + cordon_path().string() +
                                   "' run --json --mode workspace-write -- /bin/sh -c 'touch " +
                                   ready.string() + "; exec " + test_child_path().string() +
                                   " sleep 60000 " + marker + "' >" + record.string() +
                                   " & cordon=$!; while [ ! -e " + ready.string() +
                                   " ]; do sleep 0.01; done; kill -" + std::to_string(signal) +
                                   " $cordon; wait $cordon; echo $?";
        runtime::process_spec spec;
        spec.argv = {"/bin/sh", "-c", script};
        spec.env = child_env();
        spec.cwd = workspace_.path();
        spec.timeout = std::chrono::seconds(60);
        const runtime::process_outcome outcome = runtime::run_process(std::move(spec));
        EXPECT_EQ(outcome.stdout_output.text, std::to_string(cli::exit_signal_base + signal) + "\n")
            << outcome.stderr_output.text;
        const nlohmann::json json = nlohmann::json::parse(test::read_file(record), nullptr, false);
        EXPECT_EQ(json.value("outcome", std::string("no record")), "aborted")
            << test::read_file(record);
        EXPECT_TRUE(wait_no_process_with_cmdline(marker, std::chrono::seconds(10)))
            << "the command outlived the interrupted cordon";
    }
}

// `cordon run ... | head -1`: the reader has its line and goes; cordon ends the command's whole
// tree (a process it left in the background too) and exits as SIGPIPE would have had the command.
TEST_F(ExitCode, SigpipePlus128WhenTheReaderWentAwayAndTheTreeIsGone) {
    const std::string marker = "cordon-reader-gone-" + std::to_string(::getpid());
    const std::string script = "'" + cordon_path().string() +
                               "' run --mode workspace-write --timeout 60s -- /bin/sh -c '" +
                               test_child_path().string() + " sleep 60000 " + marker +
                               " & yes' | head -1; echo \"status ${PIPESTATUS[0]}\"";
    runtime::process_spec spec;
    spec.argv = {"/bin/bash", "-c", script};
    spec.env = child_env();
    spec.cwd = workspace_.path();
    spec.timeout = std::chrono::seconds(60);
    const runtime::process_outcome outcome = runtime::run_process(std::move(spec));
    EXPECT_EQ(outcome.stdout_output.text,
              "y\nstatus " + std::to_string(cli::exit_signal_base + SIGPIPE) + "\n")
        << outcome.stderr_output.text;
    EXPECT_EQ(outcome.stderr_output.text, "");
    EXPECT_TRUE(wait_no_process_with_cmdline(marker, std::chrono::seconds(10)))
        << "the command's tree outlived its reader";
}

}  // namespace
}  // namespace cordon::test
