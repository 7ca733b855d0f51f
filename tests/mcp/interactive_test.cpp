// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Interactive jobs through `cordon mcp`, as a model uses them: real programs (a python3 REPL,
// vim, less, top, git rebase -i with vim as its editor, bash traps) under a terminal in a real
// sandbox, driven by bash tty, job_write keys / wait_for / rows and cols, and read off the screen
// (structuredContent.screen). Besides: Ctrl-C through the terminal, a timeout that leaves no
// process, the program's TERM, and the argument errors of the terminal's tools. The REPL and vim
// run on every rung (bwrap, Landlock, Landlock through its launcher); the rest on the server's
// default rung (bwrap where it works).
//
// No test sleeps for a fixed time: each waits for what the screen shows (wait_for, or job_output
// until a row shows a text), and deadlines are only upper bounds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mcp/mcp_peer.hpp"
#include "real_backend.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/processes.hpp"

namespace cordon::test {
namespace {

using namespace std::chrono_literals;
using std::chrono::steady_clock;

// Whether `name` is a program on this host's PATH: a test of a program that is missing skips,
// and fails where real backends are required (scripts/setup installs every one of them).
bool installed(std::string_view name) {
    const char* path = std::getenv("PATH");
    std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
    while (!dirs.empty()) {
        const auto colon = dirs.find(':');
        const std::filesystem::path dir(std::string(dirs.substr(0, colon)));
        if (!dir.empty() && ::access((dir / std::string(name)).c_str(), X_OK) == 0) return true;
        if (colon == std::string_view::npos) break;
        dirs.remove_prefix(colon + 1);
    }
    return false;
}

#define REQUIRE_PROGRAM(name) \
    if (!installed(name)) CORDON_SKIP_OR_FAIL(std::string(name) + " is not installed")

// structuredContent of a result: an empty object for a call that timed out.
json structured(const json& result) {
    return result.value("structuredContent", json::object());
}

// The screen a result shows: an empty object without one.
json screen_of(const json& result) {
    json screen = structured(result).value("screen", json::object());
    return screen.is_object() ? screen : json::object();
}

std::vector<std::string> rows_of(const json& result) {
    return screen_of(result).value("rows", std::vector<std::string>{});
}

bool shows(const json& result, std::string_view text) {
    const auto rows = rows_of(result);
    return std::any_of(rows.begin(), rows.end(), [text](const std::string& row) {
        return row.find(text) != std::string::npos;
    });
}

// What a result says of its job, or "" (a tool error, a call that timed out).
std::string field(const json& result, const char* name) {
    const json value = structured(result).value(name, json());
    return value.is_string() ? value.get<std::string>() : std::string();
}

int exit_code(const json& result) {
    return structured(result).value("exitCode", -1);
}

// A `cordon mcp` server and the ids of the calls made to it.
class session {
public:
    explicit session(std::vector<std::string> args) : peer_(std::move(args)) { peer_.initialize(); }

    json call(const std::string& tool, json args, std::chrono::milliseconds within = 60s) {
        return peer_.call(next_id_++, tool, std::move(args), within);
    }

    // Starts `command` under a terminal; the result is its first screen. The job's id is in
    // structuredContent.job_id.
    json start(const std::string& command, json extra = json::object()) {
        json args{{"command", command}, {"tty", true}};
        args.update(extra);
        return call("bash", std::move(args));
    }

    json write(const std::string& job, json args) {
        args["job_id"] = job;
        return call("job_write", std::move(args));
    }

    // The screen once `ready` holds for it (the bash call returns when the screen has been
    // quiet, which a slow start can make before the program drew anything), or once the job
    // ended, or the last screen at the deadline: job_output waits for output past the last read,
    // so this never spins.
    json await_screen(const std::string& job, const std::function<bool(const json&)>& ready,
                      std::chrono::milliseconds within = 20s) {
        const auto until = steady_clock::now() + within;
        json shown = call("job_output", {{"job_id", job}, {"screen", true}, {"wait", "none"}});
        while (!ready(shown) && steady_clock::now() < until &&
               field(shown, "status") == "running") {
            shown =
                call("job_output",
                     {{"job_id", job}, {"screen", true}, {"wait", "output"}, {"timeout_ms", 2000}});
        }
        return shown;
    }

    // The screen once a row shows `text`: job_output's own wait_for, in one call.
    json await_screen(const std::string& job, std::string_view text,
                      std::chrono::milliseconds within = 20s) {
        return call("job_output",
                    {{"job_id", job},
                     {"screen", true},
                     {"wait_for", std::string(text)},
                     {"timeout_ms", within.count()}},
                    within + 10s);
    }

    // The job's last screen once it ended (or the screen at the deadline, still "running").
    json await_end(const std::string& job, std::chrono::milliseconds within = 20s) {
        return call(
            "job_output",
            {{"job_id", job}, {"screen", true}, {"wait", "exit"}, {"timeout_ms", within.count()}});
    }

private:
    mcp_peer peer_;
    int next_id_ = 1;
};

std::vector<std::string> server_args(const temp_dir& workspace, bool writable,
                                     std::optional<real_backend> backend = std::nullopt) {
    std::vector<std::string> args{"--workspace", workspace.path().string()};
    if (writable) args.insert(args.end(), {"--mode", "workspace-write"});
    if (backend) args.insert(args.end(), {"--backend", std::string(backend_flag(*backend))});
    return args;
}

// Whether the server's sandbox runs a command at all: nullopt, or why not.
std::optional<std::string> sandbox_refuses(session& server) {
    const json tried = server.call("bash", {{"command", "true"}});
    if (tried.value("isError", false) || field(tried, "status") != "completed") {
        return "the sandbox does not run a command here: " + tried.dump();
    }
    return std::nullopt;
}

std::string process_marker(std::string_view what) {
    return "cordon-interactive-" + std::string(what) + "-" + std::to_string(::getpid());
}

class Interactive : public ::testing::Test {
protected:
    temp_dir workspace_;
};

// The programs a model runs most, on every rung: a REPL and an editor.
class InteractiveRungs : public ::testing::TestWithParam<real_backend> {
protected:
    void SetUp() override {
        server_.emplace(server_args(workspace_, true, GetParam()));
        if (auto why = sandbox_refuses(*server_)) CORDON_SKIP_OR_FAIL(*why);
    }

    temp_dir workspace_;
    scoped_backend_path path_{GetParam()};
    std::optional<session> server_;
};

// A definition typed over several lines, a call, its value read off the screen; Ctrl-D ends it.
TEST_P(InteractiveRungs, APythonReplDefinesCallsAndEndsOnCtrlD) {
    REQUIRE_PROGRAM("python3");
    session& server = *server_;
    const json started = server.start("python3 -q", {{"env", {{"PYTHONSTARTUP", nullptr}}}});
    ASSERT_EQ(field(started, "status"), "running") << started.dump();
    const std::string job = field(started, "job_id");
    ASSERT_TRUE(shows(server.await_screen(job, ">>>"), ">>>"));

    // Each line is typed once its prompt is drawn, as a person types. Typed ahead, a line can
    // reach the terminal while Python has it cooked between two reads: the line discipline echoes
    // it before readline draws the prompt and the line again ("grow(12345)>>> grow(12345)").
    const auto type_line = [&](const std::string& line, std::string_view prompt,
                               std::string_view above) {
        const json typed = server.write(job, {{"data", line + "\n"}});
        ASSERT_EQ(typed.value("isError", false), false) << typed.dump();
        const json drawn = server.await_screen(job, [&](const json& shown) {
            const auto now = rows_of(shown);
            return now.size() >= 2 && now.back() == prompt &&
                   now[now.size() - 2].starts_with(above);
        });
        const auto now = rows_of(drawn);
        ASSERT_TRUE(now.size() >= 2 && now.back() == prompt) << drawn.dump();
    };
    type_line("def grow(x):", "...", ">>> def grow(x):");
    type_line("    return 3 * x + 1", "...", "...     return 3 * x + 1");
    type_line("", ">>>", "...");
    if (HasFatalFailure()) return;
    const json called = server.write(
        job,
        {{"data", "grow(12345)"}, {"keys", {"Enter"}}, {"wait_for", "37036"}, {"wait_ms", 20000}});
    EXPECT_EQ(field(called, "waited"), "shown") << called.dump();
    const auto rows = rows_of(called);
    EXPECT_NE(std::find(rows.begin(), rows.end(), ">>> grow(12345)"), rows.end()) << called.dump();
    EXPECT_NE(std::find(rows.begin(), rows.end(), "37036"), rows.end()) << called.dump();

    // Ctrl-D once the next prompt is up: typed before it, while the terminal is still cooked, the
    // line discipline keeps it as an end-of-file that readline, going raw for the next line,
    // reads as a NUL (as it would from a person typing ahead).
    const json prompted = server.await_screen(job, [](const json& shown) {
        const auto now = rows_of(shown);
        return now.size() >= 2 && now.back() == ">>>" && now[now.size() - 2] == "37036";
    });
    ASSERT_EQ(rows_of(prompted).back(), ">>>") << prompted.dump();
    (void)server.write(job, {{"keys", {"Ctrl-D"}}});
    const json ended = server.await_end(job);
    EXPECT_EQ(field(ended, "status"), "completed") << ended.dump();
    EXPECT_EQ(exit_code(ended), 0) << ended.dump();
}

// vim edits a file of the workspace with keys and saves it; the change is on disk. Its TERM is
// the emulator's, whatever the server's own.
TEST_P(InteractiveRungs, VimEditsAFileWithKeysAndSavesIt) {
    REQUIRE_PROGRAM("vim");
    session& server = *server_;
    std::ofstream(workspace_ / "notes.txt") << "first line\n";
    const json started =
        server.start("printf 'TERM=%s\\n' \"$TERM\"; exec vim -u NONE -i NONE -N notes.txt");
    ASSERT_EQ(field(started, "status"), "running") << started.dump();
    const std::string job = field(started, "job_id");
    const json opened = server.await_screen(job, "\"notes.txt\"");
    ASSERT_TRUE(shows(opened, "first line")) << opened.dump();
    EXPECT_EQ(screen_of(opened).value("alternateScreen", false), true);

    const json typed = server.write(
        job, {{"data", "ggOadded by vim"}, {"keys", {"Escape"}}, {"wait_for", "added by vim"}});
    EXPECT_EQ(field(typed, "waited"), "shown") << typed.dump();
    const auto rows = rows_of(typed);
    ASSERT_GE(rows.size(), 2U) << typed.dump();
    EXPECT_EQ(rows[0], "added by vim");
    EXPECT_EQ(rows[1], "first line");

    (void)server.write(job, {{"data", ":wq"}, {"keys", {"Enter"}}});
    const json ended = server.await_end(job);
    EXPECT_EQ(field(ended, "status"), "completed") << ended.dump();
    EXPECT_EQ(exit_code(ended), 0) << ended.dump();
    EXPECT_EQ(read_file(workspace_ / "notes.txt"), "added by vim\nfirst line\n");
    // vim left the alternate screen: the main one shows what came before it.
    EXPECT_TRUE(shows(ended, "TERM=xterm-256color")) << ended.dump();
}

INSTANTIATE_TEST_SUITE_P(Interactive, InteractiveRungs, all_real_backends(), real_backend_name);

// TERM names what the program talks to, the job's emulator (an xterm), not the terminal the
// server was started from, nor the "dumb" a job without a terminal gets; a TERM the call sets
// wins.
TEST_F(Interactive, TheProgramIsToldItTalksToAnXterm) {
    const scoped_env servers_own("TERM", "vt52");
    session server(server_args(workspace_, false));
    const auto term_of = [&server](json extra) {
        const json started = server.start("echo \"TERM=$TERM\"", std::move(extra));
        const json shown = server.await_screen(field(started, "job_id"), "TERM=");
        const auto rows = rows_of(shown);
        return rows.empty() ? shown.dump() : rows[0];
    };
    EXPECT_EQ(term_of(json::object()), "TERM=xterm-256color");
    EXPECT_EQ(term_of({{"env", {{"TERM", "vt100"}}}}), "TERM=vt100");
    const json piped = server.call("bash", {{"command", "echo \"TERM=$TERM\""}});
    EXPECT_EQ(field(piped, "output"), "TERM=dumb\n") << piped.dump();
}

// less pages a long file: the first screen starts at line 1, PageDown and Space move on, q quits.
TEST_F(Interactive, LessPagesALongFile) {
    REQUIRE_PROGRAM("less");
    {
        std::ofstream lines(workspace_ / "numbers");
        for (int i = 1; i <= 1000; ++i)
            lines << i << '\n';
    }
    session server(server_args(workspace_, false));
    const json started = server.start("less numbers", {{"env", {{"LESS", nullptr}}}});
    const std::string job = field(started, "job_id");
    const json first = server.await_screen(job, "numbers");  // less's prompt: the file's name
    auto rows = rows_of(first);
    ASSERT_GE(rows.size(), 23U) << first.dump();
    EXPECT_EQ(rows[0], "1");
    EXPECT_EQ(rows[22], "23");
    EXPECT_EQ(screen_of(first).value("alternateScreen", false), true);

    // A row of the second page that is on no row of the first.
    const json second = server.write(job, {{"keys", {"PageDown"}}, {"wait_for", "30"}});
    EXPECT_EQ(field(second, "waited"), "shown") << second.dump();
    rows = rows_of(second);
    ASSERT_FALSE(rows.empty());
    EXPECT_GE(std::atoi(rows[0].c_str()), 24) << second.dump();
    const json third = server.write(job, {{"keys", {"Space"}}, {"wait_for", "60"}});
    EXPECT_EQ(field(third, "waited"), "shown") << third.dump();
    rows = rows_of(third);
    ASSERT_FALSE(rows.empty());
    EXPECT_GE(std::atoi(rows[0].c_str()), 47) << third.dump();

    (void)server.write(job, {{"keys", {"q"}}});
    const json ended = server.await_end(job);
    EXPECT_EQ(field(ended, "status"), "completed") << ended.dump();
    EXPECT_EQ(exit_code(ended), 0) << ended.dump();
}

// top draws its header in the first row and quits on q.
TEST_F(Interactive, TopShowsItsHeaderAndQuitsOnQ) {
    REQUIRE_PROGRAM("top");
    session server(server_args(workspace_, false));
    // A toprc of the host's would change what top draws: HOME has none.
    const json started = server.start("HOME=/nonexistent exec top");
    const std::string job = field(started, "job_id");
    const json drawn = server.await_screen(job, "top -");
    const auto rows = rows_of(drawn);
    ASSERT_FALSE(rows.empty()) << drawn.dump();
    EXPECT_EQ(rows[0].rfind("top - ", 0), 0U) << drawn.dump();
    EXPECT_TRUE(shows(drawn, "PID")) << "the task list's header: " << drawn.dump();

    (void)server.write(job, {{"keys", {"q"}}});
    const json ended = server.await_end(job);
    EXPECT_EQ(field(ended, "status"), "completed") << ended.dump();
    EXPECT_EQ(exit_code(ended), 0) << ended.dump();
}

// Ctrl-C is the terminal's: the foreground program gets SIGINT, at once.
TEST_F(Interactive, CtrlCInterruptsTheProgram) {
    session server(server_args(workspace_, false));
    const auto began = steady_clock::now();
    // Ctrl-C once the program is the terminal's foreground: typed before, it interrupts nothing.
    const json started = server.start("echo sleeping; exec sleep 30");
    ASSERT_EQ(field(started, "status"), "running") << started.dump();
    const std::string job = field(started, "job_id");
    ASSERT_TRUE(shows(server.await_screen(job, "sleeping"), "sleeping"));
    (void)server.write(job, {{"keys", {"Ctrl-C"}}});
    const json ended = server.await_end(job);
    EXPECT_LT(steady_clock::now() - began, 20s);
    EXPECT_EQ(field(ended, "status"), "killed") << ended.dump();
    EXPECT_EQ(field(ended, "signal"), "SIGINT") << ended.dump();
    EXPECT_TRUE(shows(ended, "^C")) << "the terminal echoes it: " << ended.dump();
}

// A resize is the program's SIGWINCH, and what it draws then sees the new size.
TEST_F(Interactive, AResizeReachesTheProgramAsSigwinch) {
    session server(server_args(workspace_, false));
    // The trap only takes note: bash 5.2 drops a SIGWINCH that comes while its WINCH trap runs
    // a command (stty), so the size is printed from the loop.
    const json started = server.start(
        "trap 'winched=1' WINCH; echo ready; "
        "while :; do if [ -n \"$winched\" ]; then winched=; stty size; fi; sleep 0.1; done");
    const std::string job = field(started, "job_id");
    ASSERT_TRUE(shows(server.await_screen(job, "ready"), "ready"));

    const json resized = server.write(job, {{"rows", 30}, {"cols", 100}, {"wait_for", "30 100"}});
    EXPECT_EQ(field(resized, "waited"), "shown") << resized.dump();
    EXPECT_EQ(screen_of(resized)["size"], (json{{"rows", 30}, {"cols", 100}})) << resized.dump();
    // Rows alone keep the columns.
    const json shorter = server.write(job, {{"rows", 10}, {"wait_for", "10 100"}});
    EXPECT_EQ(field(shorter, "waited"), "shown") << shorter.dump();
    EXPECT_EQ(screen_of(shorter)["size"], (json{{"rows", 10}, {"cols", 100}}));
    const json read =
        server.call("job_output", {{"job_id", job}, {"screen", true}, {"wait", "none"}});
    EXPECT_EQ(screen_of(read)["size"], (json{{"rows", 10}, {"cols", 100}}));
    (void)server.call("job_kill", {{"job_id", job}, {"signal", "KILL"}});
}

// git rebase -i in the sandbox, with vim as its editor: the todo list on the screen, a squash
// typed into it, the message editor after it, and the history on disk rewritten.
TEST_F(Interactive, GitRebaseInteractiveSquashesWithVim) {
    REQUIRE_PROGRAM("git");
    REQUIRE_PROGRAM("vim");
    session server(server_args(workspace_, true));
    // Nothing of the host's git configuration: HOME is the workspace, no system file.
    const json env{{"HOME", workspace_.path().string()},
                   {"GIT_CONFIG_NOSYSTEM", "1"},
                   {"GIT_EDITOR", "vim -u NONE -i NONE -N"}};
    const json made = server.call(
        "bash", {{"command",
                  "git init -q repo && cd repo && git config user.name cordon && "
                  "git config user.email cordon@example.invalid && "
                  "for n in 1 2 3; do echo $n > f$n && git add f$n && git commit -qm c$n; done && "
                  "git log -1 --format=%h"},
                 {"env", env}});
    ASSERT_EQ(field(made, "status"), "completed") << made.dump();
    std::string head = field(made, "output");
    head.erase(head.find_last_not_of('\n') + 1);
    ASSERT_FALSE(head.empty());

    const json started = server.start("git rebase -i HEAD~2", {{"workdir", "repo"}, {"env", env}});
    const std::string job = field(started, "job_id");
    const json todo = server.await_screen(job, "pick " + head);
    ASSERT_TRUE(shows(todo, "pick " + head)) << todo.dump();
    // The cursor is on the first line: the second becomes a squash.
    const json edited = server.write(
        job, {{"data", "jcwsquash"}, {"keys", {"Escape"}}, {"wait_for", "squash " + head}});
    EXPECT_EQ(field(edited, "waited"), "shown") << edited.dump();
    const json message = server.write(
        job, {{"data", ":wq"}, {"keys", {"Enter"}}, {"wait_for", "a combination of 2 commits"}});
    ASSERT_EQ(field(message, "waited"), "shown") << message.dump();
    (void)server.write(job, {{"data", ":wq"}, {"keys", {"Enter"}}});
    const json ended = server.await_end(job);
    EXPECT_EQ(field(ended, "status"), "completed") << ended.dump();
    EXPECT_EQ(exit_code(ended), 0) << ended.dump();
    EXPECT_TRUE(shows(ended, "Successfully rebased")) << ended.dump();

    const json log = server.call(
        "bash", {{"command", "git log --format=%s | tr '\\n' ' '; git status --porcelain"},
                 {"workdir", "repo"},
                 {"env", env}});
    EXPECT_EQ(field(log, "output"), "c2 c1 ") << log.dump();
    const json squashed = server.call(
        "bash", {{"command", "git log -1 --format=%B"}, {"workdir", "repo"}, {"env", env}});
    EXPECT_EQ(field(squashed, "output"), "c2\n\nc3\n\n") << squashed.dump();
}

// A job under a terminal that outlives its timeout ends with every process it started.
TEST_F(Interactive, ATimedOutJobLeavesNoProcess) {
    const std::string tag = process_marker("timeout");
    session server(server_args(workspace_, false));
    const auto began = steady_clock::now();
    const json started = server.start(
        "(exec -a \"$M-a\" sleep 300) & (exec -a \"$M-b\" sleep 300) & echo started; wait",
        {{"env", {{"M", tag}}}, {"timeout_ms", 1500}});
    const std::string job = field(started, "job_id");
    ASSERT_FALSE(job.empty()) << started.dump();
    EXPECT_TRUE(wait_for_processes_with_cmdline(tag, 2, 20s)) << "the children never started";
    const json ended = server.await_end(job);
    EXPECT_EQ(field(ended, "status"), "timed_out") << ended.dump();
    EXPECT_LT(steady_clock::now() - began, 20s);
    // The screen of a job that ended is its whole output: its end is said as for any job.
    EXPECT_NE(text_of(ended).find("[timed out after 1500ms]"), std::string::npos) << text_of(ended);
    EXPECT_FALSE(structured(ended).contains("complete"))
        << "said only when false: " << ended.dump();
    EXPECT_EQ(survivors_after(tag), std::vector<pid_t>{});
}

// Each misuse of the terminal's arguments is a tool error that says what is wrong, and the jobs
// and the server go on.
// A screen's text is what a command wrote, at a size the client chose: a result holds a bounded
// part of it (the scrollback first goes, then the attributes, then each row's end), and says so.
TEST_F(Interactive, AScreenLargerThanAResultHoldsIsCut) {
    session server(server_args(workspace_, false));
    if (auto refused = sandbox_refuses(server)) CORDON_SKIP_OR_FAIL(*refused);
    // 199 rows of 999 four-byte characters, bold: 800 KB of rows, and as much of attributes.
    const json started = server.start(
        "python3 -c 'import sys\n"
        "for i in range(199): sys.stdout.write(\"\\x1b[1m\" + chr(0x1D538) * 999 + \"\\r\\n\")\n"
        "sys.stdout.write(\"drawn\")\nsys.stdout.flush()\ninput()'",
        {{"rows", 200}, {"cols", 1000}});
    const std::string job = field(started, "job_id");
    ASSERT_FALSE(job.empty()) << started.dump().substr(0, 2000);
    (void)server.await_screen(job, "drawn");
    const json shown = server.call(
        "job_output",
        {{"job_id", job}, {"screen", true}, {"attributes", true}, {"scrollback", 1000}});
    EXPECT_LT(shown.dump().size(), 2'000'000U)
        << "256 KB of text, each character escaped in JSON, twice";
    EXPECT_NE(text_of(shown).find("cut to what a result holds"), std::string::npos)
        << text_of(shown).substr(text_of(shown).size() - 300);
    const auto rows = rows_of(shown);
    ASSERT_FALSE(rows.empty());
    EXPECT_LT(rows.front().size(), 999U * 4U) << "each row's end was cut, on a character";
    EXPECT_EQ(rows.front().size() % 4, 0U);
    (void)server.call("job_kill", {{"job_id", job}, {"signal", "KILL"}});
}

TEST_F(Interactive, MisusedTerminalArgumentsAreToolErrors) {
    session server(server_args(workspace_, false));
    const auto refused = [](const json& result, std::string_view says) {
        EXPECT_EQ(result.value("isError", false), true) << result.dump();
        EXPECT_NE(text_of(result).find(says), std::string::npos) << text_of(result);
    };
    refused(server.call("bash", {{"command", "true"}, {"rows", 30}}), "tty");
    refused(server.call("bash", {{"command", "true"}, {"tty", true}, {"rows", 0}}), "rows");
    refused(server.call("bash", {{"command", "true"}, {"tty", true}, {"cols", 1}}), "cols");

    const json piped = server.call(
        "bash", {{"command", "cat"}, {"keep_stdin_open", true}, {"run_in_background", true}});
    const std::string plain = field(piped, "job_id");
    ASSERT_FALSE(plain.empty()) << piped.dump();
    refused(server.write(plain, {{"keys", {"Enter"}}}), "no terminal");
    refused(server.write(plain, {{"data", "x"}, {"wait_for", "x"}}), "no terminal");
    refused(server.write(plain, {{"rows", 30}}), "no terminal");
    refused(server.call("job_output", {{"job_id", plain}, {"screen", true}}), "no terminal");
    // The job took none of it, and still takes its input.
    const json fed = server.write(plain, {{"data", "piped\n"}, {"eof", true}});
    EXPECT_EQ(fed.value("isError", false), false) << fed.dump();
    const json out =
        server.call("job_output", {{"job_id", plain}, {"offset", 0}, {"wait", "exit"}});
    EXPECT_EQ(field(out, "output"), "piped\n") << out.dump();

    const json started = server.start("cat");
    const std::string tty = field(started, "job_id");
    refused(server.write(tty, {{"keys", {"Hyper-x"}}}), "Hyper-x");
    refused(server.write(tty, {{"data", "lost"}, {"keys", {"Enter", "F13"}}}), "F13");
    refused(server.write(tty, {{"rows", 0}}), "rows");
    refused(server.write(tty, {{"cols", 100000}}), "cols");
    refused(server.call("job_output", {{"job_id", tty}, {"attributes", true}}), "screen");
    refused(server.call("job_output", {{"job_id", tty}, {"wait_for", "x"}}), "screen");
    refused(server.call("job_output", {{"job_id", tty}, {"screen", true}, {"filter", "x"}}),
            "screen");
    // Nothing of the refused calls was typed; the terminal takes what comes next, and eof is its
    // Ctrl-D.
    const json typed =
        server.write(tty, {{"data", "still here"}, {"keys", {"Enter"}}, {"eof", true}});
    EXPECT_EQ(typed.value("isError", false), false) << typed.dump();
    const json ended = server.await_end(tty);
    EXPECT_EQ(field(ended, "status"), "completed") << ended.dump();
    EXPECT_FALSE(shows(ended, "lost")) << ended.dump();
    EXPECT_EQ(rows_of(ended), (std::vector<std::string>{"still here", "still here"}))
        << "the echo and cat's copy: " << ended.dump();
}

}  // namespace
}  // namespace cordon::test
