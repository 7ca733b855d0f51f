// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Jobs under a terminal (jobs.hpp: screen, press, resize, wait_screen): real programs under a
// real pseudo-terminal, unconfined and on a confined rung. The screen drawn at an offset is the
// one the bytes before it draw; keys arrive as the terminal's modes want them; a resize reaches
// the program; the terminal answers what programs ask it; input typed before the job is ready
// waits for it; eof is the terminal's end-of-file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "cordon/jobs.hpp"
#include "real_backend.hpp"
#include "runtime/runtime_test_util.hpp"
#include "runtime/terminal_emulator.hpp"
#include "support.hpp"
#include "support/files.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;
using sandbox::sandbox_mode;
using ::testing::HasSubstr;

std::chrono::steady_clock::time_point in(std::chrono::milliseconds wait) {
    return std::chrono::steady_clock::now() + wait;
}

std::string rows_of(const terminal_screen& screen) {
    std::string out;
    for (const auto& row : screen.rows)
        out += row + "\n";
    return out;
}

class TerminalJob : public ::testing::Test {
protected:
    std::shared_ptr<job> start(supervisor& jobs, std::string script,
                               sandbox_mode mode = sandbox_mode::danger_full_access,
                               terminal_size size = {24, 80}) {
        job_request request;
        request.run.argv = {"/bin/bash", "--norc", "--noprofile", "-c", std::move(script)};
        request.run.mode = mode;
        request.run.workspace_root = workspace_.path();
        request.run.tty = size;
        request.run.timeout = 60s;
        request.owner = "test";
        auto started = jobs.start(std::move(request));
        if (auto* refused = std::get_if<job_refused>(&started)) {
            ADD_FAILURE() << refused->message;
            return nullptr;
        }
        return std::get<std::shared_ptr<job>>(std::move(started));
    }

    static terminal_key key(std::string_view name) {
        return std::get<terminal_key>(parse_key(name));
    }

    supervisor_options options() const {
        supervisor_options out;
        out.executor.plan = kill_plan::standard(300ms);
        out.executor.spill_root = "/var/tmp";
        return out;
    }

    test::temp_dir workspace_;
};

TEST_F(TerminalJob, TheScreenAtAnOffsetIsWhatTheBytesBeforeItDraw) {
    supervisor jobs(nullptr, options());
    // A program that draws, clears, draws again, a little at a time: every screen read while the
    // output flows must be the screen an emulator fed exactly the bytes before its offset draws,
    // never one ahead or behind.
    auto running = start(jobs,
                         "for i in $(seq 1 150); do printf '\\033[2J\\033[Hframe %d\\r\\n' $i; "
                         "sleep 0.002; printf 'line %d\\r\\n' $i; done; read -r _");
    ASSERT_TRUE(running);
    std::set<std::uint64_t> offsets;
    const auto until = in(30s);
    while (std::chrono::steady_clock::now() < until) {
        const auto screen = running->screen();
        ASSERT_TRUE(screen);
        const stream_read bytes = running->read(job_output::merged, 0, screen->offset);
        ASSERT_EQ(bytes.data.size(), screen->offset) << "the stream holds what the screen shows";
        terminal_emulator replay(screen->size);
        (void)replay.feed(bytes.data);
        ASSERT_EQ(rows_of(replay.snapshot(false, 0)), rows_of(*screen)) << "at " << screen->offset;
        offsets.insert(screen->offset);
        if (screen->rows.size() > 1 && screen->rows[1] == "line 150") break;
    }
    EXPECT_GE(offsets.size(), 3U) << "read while the output flowed, not only once it stopped";
    const auto last = running->screen();
    ASSERT_TRUE(last);
    EXPECT_EQ(last->rows[0], "frame 150");
    EXPECT_EQ(last->rows[1], "line 150");
    EXPECT_EQ(last->cursor.row, 2);
    EXPECT_EQ(running->write("", true).error, std::nullopt);
    EXPECT_TRUE(running->wait_settled(in(30s)));
}

TEST_F(TerminalJob, CtrlZStopsWhatAJobControlShellStartedWhichItResumes) {
    supervisor jobs(nullptr, options());
    // An interactive shell under the terminal: its job is a process group of the session, which
    // Ctrl-Z stops through the line discipline, and `fg` resumes; Ctrl-C then ends it.
    auto running = start(jobs, "PS1='prompt> ' exec bash --norc --noprofile -i");
    ASSERT_TRUE(running);
    ASSERT_EQ(running->wait_screen({"prompt>", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::shown);
    ASSERT_EQ(running->write("sleep 30\n", false).error, std::nullopt);
    ASSERT_EQ(running->wait_screen({"", 300ms, std::nullopt}, in(30s)), screen_wait_result::quiet);
    const terminal_key suspend[] = {key("Ctrl-Z")};
    ASSERT_EQ(running->press(suspend).error, std::nullopt);
    ASSERT_EQ(running->wait_screen({"Stopped", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::shown)
        << rows_of(*running->screen());
    ASSERT_EQ(running->write("fg\n", false).error, std::nullopt);
    ASSERT_EQ(running->wait_screen({"", 300ms, std::nullopt}, in(30s)), screen_wait_result::quiet);
    const terminal_key interrupt[] = {key("Ctrl-C")};
    ASSERT_EQ(running->press(interrupt).error, std::nullopt);
    // The resumed sleep, in the foreground again, is what Ctrl-C ended (128 + SIGINT).
    ASSERT_EQ(running->write("echo status-$?\n", false).error, std::nullopt);
    ASSERT_EQ(running->wait_screen({"status-1", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::shown)
        << rows_of(*running->screen());
    EXPECT_THAT(rows_of(*running->screen()), HasSubstr("status-130"));
    ASSERT_EQ(running->write("exit\n", false).error, std::nullopt);
    EXPECT_EQ(running->wait_screen({"never shown", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::settled);
}

TEST_F(TerminalJob, InputBeforeTheTerminalIsReadyWaitsForItAndAJobThatNeverRanSaysWhy) {
    supervisor jobs(nullptr, options());
    // stdin_data is typed once the job is prepared, which start() does not wait for.
    job_request request;
    request.run.argv = {"/bin/bash", "--norc", "-c", "read -r line; echo \"got:$line\""};
    request.run.mode = sandbox_mode::danger_full_access;
    request.run.workspace_root = workspace_.path();
    request.run.tty = terminal_size{24, 80};
    request.run.stdin_data = "typed early\n";
    auto typed = std::get<std::shared_ptr<job>>(jobs.start(std::move(request)));
    EXPECT_EQ(typed->wait_screen({"got:typed early", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::shown)
        << rows_of(*typed->screen());

    // A program that is not there: the job settles without running, its screen shows why and
    // every byte of its output, and nothing waits on a terminal that never comes.
    job_request missing;
    missing.run.argv = {"/nonexistent/program"};
    missing.run.mode = sandbox_mode::danger_full_access;
    missing.run.workspace_root = workspace_.path();
    missing.run.tty = terminal_size{24, 80};
    auto never = std::get<std::shared_ptr<job>>(jobs.start(std::move(missing)));
    EXPECT_EQ(never->wait_screen({"", 100ms, std::nullopt}, in(30s)), screen_wait_result::settled);
    const auto screen = never->screen();
    ASSERT_TRUE(screen);
    EXPECT_THAT(rows_of(*screen), HasSubstr("cordon: "));
    EXPECT_EQ(screen->offset, never->snapshot().output_bytes);
    const auto written = never->write("x", false);
    ASSERT_TRUE(written.error);
    EXPECT_EQ(written.error->kind, job_write_error::ended);
    EXPECT_FALSE(never->resize({30, 100}));

    job_request huge;
    huge.run.argv = {"/bin/true"};
    huge.run.workspace_root = workspace_.path();
    huge.run.tty = terminal_size{24, 80};
    huge.scrollback_lines = job_request::max_scrollback_lines + 1;
    EXPECT_THROW((void)jobs.start(std::move(huge)), std::invalid_argument);
}

TEST_F(TerminalJob, KeysFollowTheTerminalsModesAndEofIsItsEndOfFile) {
    supervisor jobs(nullptr, options());
    // Application cursor keys on (DECCKM), then three keys read raw and shown as hex; then the
    // line mode back, where Ctrl-D (eof) ends `cat`.
    auto running = start(jobs,
                         "printf '\\033[?1h'; stty raw -echo; echo ready; "
                         "x=$(dd bs=1 count=7 2>/dev/null | od -An -tx1 | tr -d ' \\n'); "
                         "stty sane; echo \"got:$x\"; cat; echo cat-done");
    ASSERT_TRUE(running);
    ASSERT_EQ(running->wait_screen({"ready", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::shown);
    const terminal_key keys[] = {key("Up"), key("F1"), key("Ctrl-C")};
    // The program may not be reading yet: the keys wait in the terminal's queue.
    ASSERT_EQ(running->press(keys).error, std::nullopt);
    ASSERT_EQ(running->wait_screen({"got:", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::shown)
        << rows_of(*running->screen());
    EXPECT_THAT(rows_of(*running->screen()), HasSubstr("got:1b4f411b4f5003"))
        << "Up is ESC O A, F1 ESC O P, Ctrl-C 0x03";
    ASSERT_EQ(running->write("typed\n", true).error, std::nullopt);
    ASSERT_TRUE(running->wait_settled(in(30s)));
    const std::string shown = rows_of(*running->screen());
    EXPECT_THAT(shown, HasSubstr("typed\ntyped\ncat-done"));
    EXPECT_EQ(running->snapshot().outcome->exit_code, 0);
}

TEST_F(TerminalJob, AResizeReachesTheProgramAndTheScreen) {
    supervisor jobs(nullptr, options());
    auto running = start(jobs,
                         "trap 'echo \"size $(stty size)\"' WINCH; echo waiting; "
                         "while :; do sleep 0.05; done",
                         sandbox_mode::danger_full_access, {24, 80});
    ASSERT_TRUE(running);
    ASSERT_EQ(running->wait_screen({"waiting", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::shown);
    ASSERT_TRUE(running->resize({30, 100}));
    EXPECT_EQ(running->wait_screen({"size 30 100", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::shown)
        << rows_of(*running->screen());
    EXPECT_EQ(running->screen()->size.rows, 30);
    EXPECT_EQ(running->screen()->size.cols, 100);
    EXPECT_FALSE(running->resize({0, 100})) << "no terminal has that size";
    EXPECT_TRUE(running->kill());
    ASSERT_TRUE(running->wait_settled(in(30s)));
    EXPECT_FALSE(running->resize({30, 100})) << "a settled job has no terminal to resize";
}

TEST_F(TerminalJob, TheTerminalAnswersWhatAProgramAsksIt) {
    supervisor jobs(nullptr, options());
    // A device status report: where is the cursor? A program that asks reads the answer from its
    // terminal, as from an xterm: ESC [ row ; col R.
    auto running = start(jobs,
                         "stty raw -echo; printf 'abc\\033[6n'; IFS= read -rs -d R answer; "
                         "stty sane; printf '\\r\\nanswer:%q\\r\\n' \"$answer\"");
    ASSERT_TRUE(running);
    ASSERT_TRUE(running->wait_settled(in(30s)));
    EXPECT_THAT(rows_of(*running->screen()), HasSubstr("answer:$'\\E[1;4'"));
    EXPECT_EQ(running->snapshot().outcome->exit_code, 0);
}

TEST_F(TerminalJob, QuietAndSettledEndAWaitAndAJobWithoutATerminalHasNone) {
    supervisor jobs(nullptr, options());
    auto running = start(jobs, "echo prompt; read -r line; echo \"line:$line\"");
    ASSERT_TRUE(running);
    const auto pressed = std::chrono::steady_clock::now();
    EXPECT_EQ(running->wait_screen({"", 200ms, pressed}, in(30s)), screen_wait_result::quiet);
    EXPECT_GE(std::chrono::steady_clock::now() - pressed, 200ms);
    EXPECT_THAT(rows_of(*running->screen()), HasSubstr("prompt"));
    EXPECT_EQ(running->wait_screen({"never shown", std::nullopt, std::nullopt}, in(50ms)),
              screen_wait_result::timed_out);
    ASSERT_EQ(running->write("x\n", false).error, std::nullopt);
    EXPECT_EQ(running->wait_screen({"never shown", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::settled);
    EXPECT_THAT(rows_of(*running->screen()), HasSubstr("line:x"));

    job_request plain;
    plain.run.argv = {"/bin/true"};
    plain.run.mode = sandbox_mode::danger_full_access;
    plain.run.workspace_root = workspace_.path();
    auto piped = std::get<std::shared_ptr<job>>(jobs.start(std::move(plain)));
    EXPECT_FALSE(piped->has_terminal());
    EXPECT_FALSE(piped->screen());
    EXPECT_EQ(piped->wait_screen({"x", std::nullopt, std::nullopt}, in(10ms)),
              screen_wait_result::no_terminal);
    const terminal_key enter[] = {key("Enter")};
    EXPECT_EQ(piped->press(enter).error->kind, job_write_error::not_open);
}

class ConfinedTerminalJob : public TerminalJob,
                            public ::testing::WithParamInterface<test::real_backend> {};

TEST_P(ConfinedTerminalJob, AnEditorEditsAWorkspaceFileWithKeys) {
    std::string why;
    auto provider = test::provider_for(test::choice_of(GetParam()), why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    supervisor_options confined = options();
    confined.executor.landlock_in_child = test::landlock_in_child(GetParam());
    supervisor jobs(provider, confined);
    test::write_file(workspace_ / "notes.txt", "first\n");
    auto running = start(jobs, "exec vim -u NONE -N -n notes.txt", sandbox_mode::workspace_write);
    ASSERT_TRUE(running);
    ASSERT_EQ(running->wait_screen({"first", std::nullopt, std::nullopt}, in(30s)),
              screen_wait_result::shown)
        << rows_of(*running->screen());
    EXPECT_TRUE(running->screen()->alternate_screen);
    ASSERT_EQ(running->write("Oadded by keys", false).error, std::nullopt);
    const terminal_key escape[] = {key("Escape")};
    ASSERT_EQ(running->press(escape).error, std::nullopt);
    ASSERT_EQ(running->write(":wq\r", false).error, std::nullopt);
    ASSERT_TRUE(running->wait_settled(in(30s))) << rows_of(*running->screen());
    EXPECT_EQ(running->snapshot().outcome->exit_code, 0);
    EXPECT_EQ(test::read_file(workspace_ / "notes.txt"), "added by keys\nfirst\n");
    ASSERT_TRUE(running->record());
    ASSERT_TRUE(running->record()->tty);
    EXPECT_EQ(running->record()->tty->rows, 24);
}

INSTANTIATE_TEST_SUITE_P(Backends, ConfinedTerminalJob, test::all_real_backends(),
                         test::real_backend_name);

}  // namespace
}  // namespace cordon::runtime
