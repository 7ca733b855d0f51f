// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Runs under a pseudo-terminal (run_request::tty), through the executor, unconfined and on every
// real rung: the command has the terminal as its stdin, stdout, stderr and controlling terminal,
// of the size asked for; what is typed reaches it through the line discipline; its output
// (stderr too) arrives as stdout; a denial is seen in it; the record says the run had a terminal;
// a timeout ends the whole tree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "cordon/run.hpp"
#include "real_backend.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/files.hpp"
#include "support/processes.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
using sandbox::sandbox_mode;
using ::testing::HasSubstr;
using ::testing::Not;

// Where a run goes: unconfined, or confined on one real rung's path.
struct terminal_case {
    std::optional<test::real_backend> backend;  // none: danger-full-access
};

std::string name_of(const ::testing::TestParamInfo<terminal_case>& info) {
    return info.param.backend ? std::string(test::to_string(*info.param.backend))
                              : std::string("unconfined");
}

class TerminalRun : public ::testing::TestWithParam<terminal_case> {
protected:
    void SetUp() override {
        if (GetParam().backend) {
            std::string why;
            provider_ = test::provider_for(test::choice_of(*GetParam().backend), why);
            if (!provider_) CORDON_SKIP_OR_FAIL(why);
        }
    }

    run_record run_in_terminal(std::string script, sandbox_mode mode = sandbox_mode::read_only,
                               std::optional<std::string> typed = std::nullopt,
                               std::chrono::milliseconds timeout = 60s) {
        run_request request;
        request.argv = {"/bin/sh", "-c", std::move(script), test::test_child_path().string()};
        request.mode = GetParam().backend ? mode : sandbox_mode::danger_full_access;
        request.workspace_root = workspace_.path();
        request.tty = terminal_size{31, 97};
        request.stdin_data = std::move(typed);
        request.timeout = timeout;
        executor_options options;
        options.plan = kill_plan::standard(300ms);
        if (GetParam().backend)
            options.landlock_in_child = test::landlock_in_child(*GetParam().backend);
        return run(provider_, std::move(request), options);
    }

    test::temp_dir workspace_;
    std::shared_ptr<sandbox::local_provider> provider_;
};

TEST_P(TerminalRun, TheTerminalIsTheCommandsControllingTerminalOfTheSizeAskedFor) {
    // /dev/tty opens only with a controlling terminal; `stty size` reads the size from fd 0; the
    // session's foreground group is the command's own (ps: tpgid == pgid).
    const run_record record = run_in_terminal(
        "[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-three; stty size; echo via-tty > /dev/tty; "
        "echo \"via-name\" > \"$(tty)\"; "
        "echo to-stderr >&2; "
        "set -- $(ps -o pgid=,tpgid= -p $$); [ \"$1\" = \"$2\" ] && echo foreground");
    ASSERT_EQ(record.outcome.kind, outcome_kind::exited) << record.outcome.message;
    EXPECT_EQ(record.outcome.exit_code, 0) << record.stdout_output.text;
    const std::string& out = record.stdout_output.text;
    EXPECT_THAT(out, HasSubstr("all-three\r\n"));
    EXPECT_THAT(out, HasSubstr("31 97\r\n"));
    EXPECT_THAT(out, HasSubstr("via-tty\r\n"));
    // The name tty(1) gives opens (what GPG_TTY holds): /dev/console under bwrap, which binds the
    // run's terminal there. On the Landlock rung the name is the host's /dev/pts/N, which the
    // rung does not open by name (docs/terminal.md); /dev/tty does.
    if (!GetParam().backend || *GetParam().backend == test::real_backend::bwrap) {
        EXPECT_THAT(out, HasSubstr("via-name\r\n"));
    }
    EXPECT_THAT(out, HasSubstr("to-stderr\r\n"));
    EXPECT_THAT(out, HasSubstr("foreground\r\n"));
    EXPECT_EQ(record.stderr_output.text, "");
    ASSERT_TRUE(record.tty);
    EXPECT_EQ(record.tty->rows, 31);
    EXPECT_EQ(record.tty->cols, 97);
}

TEST_P(TerminalRun, WhatIsTypedGoesThroughTheLineDiscipline) {
    // Echoed by the terminal as typed, read by the command a line at a time.
    const run_record record =
        run_in_terminal("read line; echo \"got:$line\"", sandbox_mode::read_only, "hello there\n");
    ASSERT_EQ(record.outcome.kind, outcome_kind::exited) << record.outcome.message;
    EXPECT_THAT(record.stdout_output.text, HasSubstr("hello there\r\n"));
    EXPECT_THAT(record.stdout_output.text, HasSubstr("got:hello there\r\n"));
}

class ConfinedTerminalRun : public TerminalRun {};

TEST_P(ConfinedTerminalRun, ADenialPrintedOnTheTerminalIsADenial) {
    const run_record record = run_in_terminal("echo x > '" + (workspace_ / "f").string() + "'");
    ASSERT_EQ(record.outcome.kind, outcome_kind::exited) << record.outcome.message;
    EXPECT_NE(record.outcome.exit_code, 0);
    EXPECT_TRUE(record.sandbox.denied) << record.stdout_output.text;
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "f"));
}

TEST_P(TerminalRun, ATimeoutEndsEveryProcessOfTheRun) {
    const std::string marker = "cordon-tty-timeout-" + std::to_string(::getpid());
    const run_record record = run_in_terminal(
        "\"$0\" sleep 60000 " + marker + " & setsid \"$0\" sleep 60000 " + marker + " & wait",
        sandbox_mode::read_only, std::nullopt, 1500ms);
    EXPECT_EQ(record.outcome.kind, outcome_kind::timed_out);
    EXPECT_TRUE(test::wait_no_process_with_cmdline(marker, 10s));
}

TEST_P(ConfinedTerminalRun, NothingTypesIntoATerminalOrDrivesAConsole) {
    // TIOCSTI would type into the terminal the command holds (its own here, the person's
    // wherever it held one); TIOCLINUX paste on a virtual console. Refused whatever the kernel's
    // own setting (dev.tty.legacy_tiocsti), and before the terminal is even looked at.
    const run_record record = run_in_terminal(
        "python3 -c '\n"
        "import errno, fcntl, termios\n"
        "for name, request, arg in ((\"sti\", termios.TIOCSTI, b\"x\"), (\"linux\", 0x541C, "
        "b\"\\x02\")):\n"
        "    try:\n"
        "        fcntl.ioctl(0, request, arg)\n"
        "        print(name, \"allowed\")\n"
        "    except OSError as e:\n"
        "        print(name, errno.errorcode[e.errno])\n"
        "'");
    ASSERT_EQ(record.outcome.kind, outcome_kind::exited) << record.outcome.message;
    EXPECT_THAT(record.stdout_output.text, HasSubstr("sti EPERM\r\n"));
    EXPECT_THAT(record.stdout_output.text, HasSubstr("linux EPERM\r\n"));
}

// Through the network proxy the Landlock launcher runs the command as its child, which a terminal
// puts in a session of its own, outside the process group cordon signals where it has no cgroup:
// the command must end with the launcher all the same.
TEST(TerminalRunThroughTheProxy, ATimeoutWithoutACgroupLeavesNoProcess) {
    std::string why;
    auto provider = test::provider_for(sandbox::backend_choice::landlock, why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    test::temp_dir workspace;
    const std::string marker = "cordon-tty-proxy-" + std::to_string(::getpid());
    run_request request;
    // Deaf to the hangup the terminal's end sends: only the kill may end them.
    request.argv = {
        "/bin/sh", "-c",
        "trap '' HUP; \"$0\" sleep 60000 " + marker + " & exec \"$0\" sleep 60000 " + marker,
        test::test_child_path().string()};
    request.mode = sandbox_mode::read_only;
    request.workspace_root = workspace.path();
    request.network.policy = sandbox::network_policy::proxy;
    request.network.allowed_domains = {"example.com"};
    request.tty = terminal_size{24, 80};
    request.timeout = 1500ms;
    executor_options options;
    options.plan = kill_plan::standard(300ms);
    options.cgroup_containment = false;
    const run_record record = run(provider, std::move(request), options);
    EXPECT_EQ(record.outcome.kind, outcome_kind::timed_out) << record.outcome.message;
    ASSERT_TRUE(record.sandbox.backend);
    EXPECT_EQ(*record.sandbox.backend, sandbox::backend_kind::landlock);
    EXPECT_TRUE(test::wait_no_process_with_cmdline(marker, 10s));
}

INSTANTIATE_TEST_SUITE_P(
    Rungs, TerminalRun,
    ::testing::Values(terminal_case{std::nullopt}, terminal_case{test::real_backend::bwrap},
                      terminal_case{test::real_backend::landlock},
                      terminal_case{test::real_backend::landlock_via_launcher}),
    name_of);
INSTANTIATE_TEST_SUITE_P(Rungs, ConfinedTerminalRun,
                         ::testing::Values(terminal_case{test::real_backend::bwrap},
                                           terminal_case{test::real_backend::landlock},
                                           terminal_case{
                                               test::real_backend::landlock_via_launcher}),
                         name_of);

}  // namespace
}  // namespace cordon::runtime
