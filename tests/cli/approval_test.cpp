// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run --escalate` and `cordon session`, as a person at a terminal meets them: the real
// cordon asks on a pseudo-terminal that is its controlling terminal, the test answers on the
// master side, and the real sandbox runs (or does not run) the command. Session logs live under
// /var/tmp outside the workspace, where no workspace-write run can write them, except in the test
// that proves a log inside the workspace is refused.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cordon/terminal_prompt.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view prompt_end = "Allow? [y/N/s] ";
constexpr std::string_view justification = "the test needs to write one file";

struct tty_result {
    int exit_code = -1;  // -1: killed by a signal, or not reaped in time
    std::string out;
    std::string err;
    std::string terminal;  // everything cordon wrote on the terminal
    bool prompted = false;
};

struct tty_options {
    std::optional<std::string> answer;         // written once the question is on the terminal
    std::vector<std::string> answers;          // or: one for each question, as each appears
    std::optional<std::string> answers_await;  // each of `answers` waits for this text too
    std::vector<std::string> argv;             // what runs instead of `cordon ARGS...`
    std::optional<std::string> typed;          // written before cordon starts (type-ahead)
    std::optional<fs::path> stdin_file;        // cordon's stdin; /dev/null without one
};

// Runs `cordon ARGS...` from `cwd` as a session leader whose controlling terminal is a fresh
// pseudo-terminal, answers the question when it appears, and collects stdout, stderr (to files in
// `scratch`) and the terminal's transcript.
tty_result run_on_terminal(const std::vector<std::string>& args, const fs::path& cwd,
                           const fs::path& scratch, const tty_options& options = {}) {
    int master = -1;
    int slave = -1;
    if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) {
        ADD_FAILURE() << "openpty failed";
        return {};
    }
    if (options.typed) {
        EXPECT_EQ(::write(master, options.typed->data(), options.typed->size()),
                  static_cast<ssize_t>(options.typed->size()));
    }
    const fs::path out_file = scratch / "tty-stdout";
    const fs::path err_file = scratch / "tty-stderr";
    const std::string in_file = options.stdin_file ? options.stdin_file->string() : "/dev/null";

    // Everything the child needs is built before the fork: it only calls async-signal-safe
    // functions between fork and exec.
    std::vector<std::string> argv_text{cordon_path().string()};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    if (!options.argv.empty()) argv_text = options.argv;
    std::vector<char*> argv;
    for (auto& word : argv_text)
        argv.push_back(word.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_text = child_env();
    std::vector<char*> envp;
    for (auto& entry : env_text)
        envp.push_back(entry.data());
    envp.push_back(nullptr);
    const std::string cwd_text = cwd.string();
    const std::string out_text = out_file.string();
    const std::string err_text = err_file.string();

    const pid_t child = ::fork();
    if (child == 0) {
        // --- child: async-signal-safe calls only ---
        if (::setsid() < 0 || ::ioctl(slave, TIOCSCTTY, 0) != 0) ::_exit(120);
        const int in = ::open(in_file.c_str(), O_RDONLY);
        const int out = ::open(out_text.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int err = ::open(err_text.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || err < 0) ::_exit(121);
        if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(122);
        ::close(master);
        ::close(slave);
        if (::chdir(cwd_text.c_str()) != 0) ::_exit(123);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    // The parent keeps the slave open until the end, so that reading the master never sees a
    // hang-up while cordon has not opened /dev/tty yet.
    tty_result result;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    bool answered = false;
    std::size_t answers_given = 0;
    bool exited = false;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        pollfd readable{master, POLLIN, 0};
        if (::poll(&readable, 1, 50) > 0) {
            char block[4096];
            const ssize_t n = ::read(master, block, sizeof block);
            if (n > 0) result.terminal.append(block, static_cast<std::size_t>(n));
        }
        if (!result.prompted && result.terminal.find("Allow? [") != std::string::npos) {
            result.prompted = true;
        }
        if (result.prompted && !answered && options.answer) {
            answered = true;
            EXPECT_EQ(::write(master, options.answer->data(), options.answer->size()),
                      static_cast<ssize_t>(options.answer->size()));
        }
        std::size_t questions = 0;
        for (auto at = result.terminal.find("Allow? ["); at != std::string::npos;
             at = result.terminal.find("Allow? [", at + 1)) {
            ++questions;
        }
        if (answers_given < std::min(questions, options.answers.size()) &&
            (!options.answers_await ||
             result.terminal.find(*options.answers_await) != std::string::npos)) {
            const std::string& next = options.answers[answers_given++];
            EXPECT_EQ(::write(master, next.data(), next.size()), static_cast<ssize_t>(next.size()));
        }
        if (exited) break;  // one more read after the exit: the tail of the transcript
        exited = ::waitpid(child, &status, WNOHANG) == child;
    }
    if (!exited) {
        ADD_FAILURE() << "cordon did not end; terminal:\n" << result.terminal;
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
    } else if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    }
    ::close(master);
    ::close(slave);
    result.out = read_file(out_file);
    result.err = read_file(err_file);
    return result;
}

tty_options answering(std::string answer) {
    tty_options options;
    options.answer = std::move(answer);
    return options;
}

tty_options answering_with_stdin(std::string answer, fs::path input) {
    tty_options options = answering(std::move(answer));
    options.stdin_file = std::move(input);
    return options;
}

tty_options typed_ahead(std::string typed, std::string answer) {
    tty_options options = answering(std::move(answer));
    options.typed = std::move(typed);
    return options;
}

cli_stdin stdin_bytes(std::string data) {
    cli_stdin input;
    input.data = std::move(data);
    return input;
}

// The log's events of `type`, in order.
std::vector<nlohmann::json> events_of(const fs::path& log, std::string_view type) {
    std::vector<nlohmann::json> out;
    for (const auto& line : split_lines(read_file(log))) {
        if (line.empty()) continue;
        auto event = nlohmann::json::parse(line);
        if (event.value("type", "") == type) out.push_back(std::move(event));
    }
    return out;
}

class Approval : public ::testing::Test {
protected:
    void SetUp() override { fs::create_directory(workspace_); }

    // `cordon run --session LOG [extra...] --escalate workspace-write --justification ... -c C`
    std::vector<std::string> escalate(const std::string& command,
                                      std::vector<std::string> extra = {}) const {
        std::vector<std::string> args{"run", "--session", log_.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        args.insert(args.end(), {"--escalate", "workspace-write", "--justification",
                                 std::string(justification), "-c", command});
        return args;
    }
    // The terminal's output as a person reads its lines: the rows cordon cut a line into joined
    // again (policy/question.hpp: each row after a line's first begins with "  \u2026 "), without
    // the row's own controls (single width, erase to its end) and with its "\r\n" (which the
    // terminal's ONLCR makes "\r\r\n") as one line break.
    tty_result on_terminal(const std::vector<std::string>& args, tty_options options = {}) {
        tty_result result = run_on_terminal(args, workspace_, scratch_.path(), options);
        const auto replace = [&result](std::string_view from, std::string_view to) {
            for (auto at = result.terminal.find(from); at != std::string::npos;
                 at = result.terminal.find(from, at + to.size())) {
                result.terminal.replace(at, from.size(), to);
            }
        };
        replace("\r\r\n", "\r\n");
        replace("\x1b[K\r\n\x1b#5  \u2026 ", "");
        replace("\x1b[K", "");
        replace("\x1b#5", "");
        return result;
    }
    cli_result without_terminal(const std::vector<std::string>& args, cli_stdin input = {}) {
        return run_cordon(args, workspace_, std::move(input));
    }
    // Skips (or fails under CI) when no backend can run a workspace-write command here.
    bool backend_usable(int exit_code, const std::string& err) {
        if (exit_code != cli::exit_sandbox_unavailable) return true;
        std::string why = "no sandbox backend usable: " + err;
        if (real_backends_required()) {
            ADD_FAILURE() << why;
        } else {
            std::cerr << why << '\n';
        }
        return false;
    }

    temp_dir scratch_{"/var/tmp", "cordon-approval-test-"};
    fs::path workspace_ = scratch_.path() / "ws";
    fs::path log_ = scratch_.path() / "session.log";
};

TEST_F(Approval, YesAtThePromptRunsTheCommandOnceUnderTheWiderMode) {
    const fs::path made = workspace_ / "f";
    const tty_result r = on_terminal(escalate("touch " + made.string()), answering("y\n"));
    if (!backend_usable(r.exit_code, r.err)) return;
    EXPECT_EQ(r.exit_code, 0) << r.err << r.terminal;
    EXPECT_TRUE(fs::exists(made));
    // What the person was shown.
    EXPECT_TRUE(r.prompted) << r.terminal;
    EXPECT_NE(r.terminal.find("touch " + made.string()), std::string::npos) << r.terminal;
    EXPECT_NE(r.terminal.find(workspace_.string()), std::string::npos) << r.terminal;
    EXPECT_NE(r.terminal.find("read-only \u2192 workspace-write"), std::string::npos) << r.terminal;
    EXPECT_NE(r.terminal.find(std::string(justification)), std::string::npos) << r.terminal;
    EXPECT_NE(r.terminal.find(prompt_end), std::string::npos) << r.terminal;

    // The audit pair, with one id.
    const auto asked = events_of(log_, "approval/asked");
    const auto decided = events_of(log_, "approval/decided");
    ASSERT_EQ(asked.size(), 1u);
    ASSERT_EQ(decided.size(), 1u);
    EXPECT_EQ(asked[0]["id"], decided[0]["id"]);
    EXPECT_EQ(asked[0]["command"], "touch " + made.string());
    EXPECT_EQ(asked[0]["mode"], "workspace-write");
    EXPECT_EQ(asked[0]["from"], "read-only");
    EXPECT_EQ(decided[0]["outcome"], "allowed-once");
    EXPECT_EQ(decided[0]["by"], "terminal");

    // The grant was for that one run: the next one stands under the session's mode again.
    const fs::path again = workspace_ / "g";
    const cli_result next =
        without_terminal({"run", "--session", log_.string(), "-c", "touch " + again.string()});
    EXPECT_EQ(next.exit_code, 1) << next.err;
    EXPECT_FALSE(fs::exists(again));
    EXPECT_NE(next.err.find("[sandbox: file access denied under read-only mode]"),
              std::string::npos)
        << next.err;
}

TEST_F(Approval, NoAtThePromptRunsNothingAndExits3) {
    const fs::path made = workspace_ / "f";
    const tty_result r = on_terminal(escalate("touch " + made.string()), answering("n\n"));
    EXPECT_TRUE(r.prompted) << r.terminal;
    EXPECT_EQ(r.exit_code, cli::exit_not_approved) << r.err;
    EXPECT_EQ(r.err,
              "cordon run: the user rejected escalating this command to \"workspace-write\"\n");
    EXPECT_FALSE(fs::exists(made));
    const auto decided = events_of(log_, "approval/decided");
    ASSERT_EQ(decided.size(), 1u);
    EXPECT_EQ(decided[0]["outcome"], "rejected");
    EXPECT_EQ(events_of(log_, "approval/asked").at(0)["id"], decided[0]["id"]);
}

// The network asked for alone, then with a mode: the question says exactly what changes, the
// refusal names the network, and the session offer names the network it would grant.
TEST_F(Approval, TheNetworkIsAskedForAndTheQuestionSaysWhatChanges) {
    const std::vector<std::string> network_only{"run",
                                                "--session",
                                                log_.string(),
                                                "--escalate-network",
                                                "allow",
                                                "--justification",
                                                std::string(justification),
                                                "--",
                                                "true"};
    const tty_result alone = on_terminal(network_only, answering("n\n"));
    EXPECT_TRUE(alone.prompted) << alone.terminal;
    EXPECT_EQ(alone.exit_code, cli::exit_not_approved) << alone.err;
    EXPECT_EQ(alone.err,
              "cordon run: the user rejected escalating this command to network \"allow\"\n");
    EXPECT_NE(alone.terminal.find("cordon run: the command asks to run with a wider network"),
              std::string::npos)
        << alone.terminal;
    EXPECT_NE(alone.terminal.find("  mode:     read-only"), std::string::npos) << alone.terminal;
    EXPECT_EQ(alone.terminal.find("read-only \u2192"), std::string::npos) << "the mode stays";
    EXPECT_NE(alone.terminal.find("  network:  deny \u2192 allow"), std::string::npos)
        << alone.terminal;

    const tty_result both =
        on_terminal(escalate("true", {"--escalate-network", "allow"}), answering("n\n"));
    EXPECT_EQ(both.err,
              "cordon run: the user rejected escalating this command to \"workspace-write\" with "
              "network \"allow\"\n");
    EXPECT_NE(both.terminal.find("  mode:     read-only \u2192 workspace-write"), std::string::npos)
        << both.terminal;
    EXPECT_NE(both.terminal.find("under workspace-write with network allow without asking again"),
              std::string::npos)
        << both.terminal;
    const auto asked = events_of(log_, "approval/asked");
    ASSERT_EQ(asked.size(), 2u);
    EXPECT_EQ(asked[1]["network"], "allow");
    EXPECT_EQ(asked[1]["reason"],
              "escalate sandbox to workspace-write, network allow: " + std::string(justification));
}

// A domain asked for: the question's network line says exactly which, and so does the session
// offer; the log records the domains beside the network.
TEST_F(Approval, ADomainIsAskedForAndTheQuestionNamesIt) {
    const tty_result asked =
        on_terminal({"run", "--session", log_.string(), "--escalate-domain", "Registry.npmjs.org",
                     "--justification", std::string(justification), "--", "true"},
                    answering("n\n"));
    EXPECT_TRUE(asked.prompted) << asked.terminal;
    EXPECT_EQ(asked.exit_code, cli::exit_not_approved) << asked.err;
    EXPECT_EQ(asked.err,
              "cordon run: the user rejected escalating this command to network \"proxy: "
              "registry.npmjs.org\"\n");
    // The whole line: nothing after the domain.
    const std::string line = "  network:  deny \u2192 proxy: registry.npmjs.org";
    const std::size_t at = asked.terminal.find(line);
    ASSERT_NE(at, std::string::npos) << asked.terminal;
    EXPECT_TRUE(asked.terminal.compare(at + line.size(), 1, "\r") == 0 ||
                asked.terminal.compare(at + line.size(), 1, "\n") == 0)
        << asked.terminal;
    EXPECT_NE(asked.terminal.find("under read-only with network proxy: registry.npmjs.org without "
                                  "asking again"),
              std::string::npos)
        << asked.terminal;
    const auto events = events_of(log_, "approval/asked");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0]["network"], "proxy");
    EXPECT_EQ(events[0]["domains"], nlohmann::json({"registry.npmjs.org"}));
    EXPECT_EQ(events[0]["network_from"], "deny");
    EXPECT_FALSE(events[0].contains("domains_from"));
}

// The session's root is recorded once. A run that could write the root's parent (/tmp under the
// Landlock rung; any directory that contains another session's root) could put a symlink where the
// root was: the session's standing mode and grants must not follow it to another directory.
TEST_F(Approval, ASessionRootReplacedByASymlinkRunsNothing) {
    const fs::path victim = scratch_.path() / "victim";
    fs::create_directory(victim);
    const cli_result set =
        without_terminal({"session", "set", log_.string(), "--mode", "workspace-write"});
    ASSERT_EQ(set.exit_code, 0) << set.err;
    const cli_result first = without_terminal({"run", "--session", log_.string(), "-c", "touch a"});
    if (!backend_usable(first.exit_code, first.err)) return;
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_TRUE(fs::exists(workspace_ / "a"));

    fs::rename(workspace_, scratch_.path() / "ws.old");
    fs::create_directory_symlink(victim, workspace_);
    for (const std::string& where : {std::string("/"), victim.string()}) {
        const cli_result moved = run_cordon(
            {"run", "--session", log_.string(), "-c", "touch " + (victim / "b").string()}, where);
        EXPECT_EQ(moved.exit_code, cli::exit_usage) << moved.err;
        EXPECT_NE(moved.err.find("now resolves to " + victim.string()), std::string::npos)
            << moved.err;
    }
    const cli_result escalated =
        run_cordon({"run", "--session", log_.string(), "--escalate", "danger-full-access",
                    "--justification", "x", "-c", "touch " + (victim / "c").string()},
                   "/");
    EXPECT_EQ(escalated.exit_code, cli::exit_usage) << escalated.err;
    EXPECT_TRUE(fs::is_empty(victim));
}

// Two cordons asking on one terminal share its input: the "y" typed under the question on the
// screen must approve that command and no other. Questions take turns; the second is not shown
// until the first is answered.
TEST_F(Approval, QuestionsOnOneTerminalTakeTurns) {
    const std::string cordon = cordon_path().string();
    const auto one = [&](const std::string& name) {
        return cordon + " run --escalate workspace-write --justification 'make " + name +
               "' -c 'touch " + name + "' >/dev/null 2>&1; echo " + name + "=$?";
    };
    tty_options options;
    // Both start in the terminal's foreground process group (a shell without job control).
    options.argv = {"/bin/sh", "-c", "(" + one("A") + ") & (" + one("B") + ") & wait"};
    options.answers = {"y\n", "n\n"};
    // The first answer waits until the other cordon has tried to ask and been told to wait: were
    // it not made to wait, its question would be on the terminal by then.
    options.answers_await = "another question is open on this terminal; this one waits";
    const tty_result r = on_terminal({}, options);
    EXPECT_EQ(r.exit_code, 0) << r.terminal;
    const auto first = r.terminal.find("command:  touch ");
    ASSERT_NE(first, std::string::npos) << r.terminal;
    const std::string asked_first = r.terminal.substr(first + 16, 1);
    const std::string asked_second = asked_first == "A" ? "B" : "A";
    // The first question was answered before the second was shown.
    // (the terminal echoes the answer: "y", then the newline as "\r\n")
    const auto answer = r.terminal.find("y\r\n", first);
    ASSERT_NE(answer, std::string::npos) << r.terminal;
    const auto second = r.terminal.find("command:  touch " + asked_second);
    ASSERT_NE(second, std::string::npos) << r.terminal;
    EXPECT_LT(answer, second) << r.terminal;
    EXPECT_TRUE(fs::exists(workspace_ / asked_first)) << r.terminal;
    EXPECT_FALSE(fs::exists(workspace_ / asked_second)) << r.terminal;
    EXPECT_NE(r.out.find(asked_first + "=0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(asked_second + "=3"), std::string::npos) << r.out;
}

// Padding cannot push the start of a command off the screen above the question, and a long
// command's start is shown again next to it.
TEST_F(Approval, ALongOrPaddedCommandIsShownWithItsStart) {
    const std::string padded = "touch f1;" + std::string(4000, ' ') + "ls";
    const tty_result r = on_terminal(escalate(padded), answering("n\n"));
    EXPECT_TRUE(r.prompted) << r.terminal;
    EXPECT_NE(r.terminal.find("command:  touch f1;\\x20{4000}ls"), std::string::npos) << r.terminal;
    const std::string long_one = "touch f1; echo " + std::string(1000, 'x');
    const tty_result l = on_terminal(escalate(long_one), answering("n\n"));
    EXPECT_NE(l.terminal.find("bytes long; it begins: touch f1; echo xxx"), std::string::npos)
        << l.terminal;
    EXPECT_FALSE(fs::exists(workspace_ / "f1"));
}

// Blanks other than the ASCII space are counted too: 600 no-break spaces cannot push the
// `; touch f1` between two harmless commands off the screen. Such a command is not shown as it
// is, so `s` is not offered, and answering it anyway is a refusal.
TEST_F(Approval, BlankPaddingIsCountedAndSuchACommandIsNeverGrantedForTheSession) {
    std::string padding;
    for (int i = 0; i < 600; ++i)
        padding += "\u00a0";
    const std::string padded = "echo ok" + padding + "; touch f1" + padding + "echo done";
    const tty_result r = on_terminal(escalate(padded), answering("s\n"));
    EXPECT_TRUE(r.prompted) << r.terminal;
    EXPECT_NE(
        r.terminal.find("command:  echo ok\\u{00A0}{600}; touch f1\\u{00A0}{600}echo done\r\n"),
        std::string::npos)
        << r.terminal;
    EXPECT_EQ(r.terminal.find("\u00a0"), std::string::npos) << r.terminal;
    EXPECT_EQ(r.terminal.find("s = allow"), std::string::npos) << r.terminal;
    EXPECT_NE(r.terminal.find("(no s: a command with a character shown escaped"), std::string::npos)
        << r.terminal;
    EXPECT_NE(r.terminal.find("Allow? [y/N] "), std::string::npos) << r.terminal;
    EXPECT_EQ(r.exit_code, cli::exit_not_approved) << r.err;
    EXPECT_EQ(r.err,
              "cordon run: the user rejected escalating this command to \"workspace-write\"\n");
    EXPECT_FALSE(fs::exists(workspace_ / "f1"));
    const auto decided = events_of(log_, "approval/decided");
    ASSERT_EQ(decided.size(), 1u);
    EXPECT_EQ(decided[0]["outcome"], "rejected");
    EXPECT_FALSE(decided[0].contains("grant"));
}

// A question nobody answers is withdrawn at --approval-timeout: cancelled, and nothing runs.
TEST_F(Approval, AnUnansweredQuestionIsCancelledAtTheTimeout) {
    const fs::path made = workspace_ / "f";
    const tty_result r =
        on_terminal(escalate("touch " + made.string(), {"--approval-timeout", "1s"}));
    EXPECT_TRUE(r.prompted) << r.terminal;
    EXPECT_EQ(r.exit_code, cli::exit_not_approved) << r.err;
    EXPECT_EQ(r.err, "cordon run: approval for escalating to \"workspace-write\" was cancelled\n");
    EXPECT_FALSE(fs::exists(made));
    const auto decided = events_of(log_, "approval/decided");
    ASSERT_EQ(decided.size(), 1u);
    EXPECT_EQ(decided[0]["outcome"], "cancelled");
    EXPECT_EQ(decided[0]["by"], "timeout");

    const cli_result bad = without_terminal(escalate("true", {"--approval-timeout", "soon"}));
    EXPECT_EQ(bad.exit_code, cli::exit_usage);
    EXPECT_NE(bad.err.find("invalid --approval-timeout \"soon\""), std::string::npos) << bad.err;
}

// What the person reads is what would run: a command cannot erase or redraw the question.
TEST_F(Approval, ControlCharactersInTheQuestionAreShownEscaped) {
    const std::string command = "touch f1 #\r\x1b[2Kls";
    const tty_result r = on_terminal(escalate(command), answering("n\n"));
    EXPECT_TRUE(r.prompted) << r.terminal;
    EXPECT_EQ(r.exit_code, cli::exit_not_approved) << r.err;
    // The only escape sequence on the terminal is the reset cordon writes before asking.
    std::string transcript = r.terminal;
    const auto reset = transcript.find(policy::terminal_reset);
    ASSERT_NE(reset, std::string::npos) << transcript;
    transcript.erase(reset, policy::terminal_reset.size());
    EXPECT_EQ(transcript.find('\x1b'), std::string::npos) << transcript;
    EXPECT_NE(r.terminal.find("touch f1 #\\r"), std::string::npos) << r.terminal;
    EXPECT_NE(r.terminal.find("[2Kls"), std::string::npos) << r.terminal;
    EXPECT_FALSE(fs::exists(workspace_ / "f1"));
}

TEST_F(Approval, AnythingButYesIsARejectionAndTheEndOfInputOrCtrlCACancellation) {
    const fs::path made = workspace_ / "f";
    for (const char* answer : {"\n", "maybe\n", "yess\n"}) {
        const tty_result r = on_terminal(escalate("touch " + made.string()), answering(answer));
        EXPECT_EQ(r.exit_code, cli::exit_not_approved) << answer << r.err;
        EXPECT_NE(r.err.find("the user rejected"), std::string::npos) << r.err;
    }
    // ^D at the start of a line: the end of input.
    const tty_result eof = on_terminal(escalate("touch " + made.string()), answering("\x04"));
    EXPECT_EQ(eof.exit_code, cli::exit_not_approved) << eof.err;
    EXPECT_EQ(eof.err,
              "cordon run: approval for escalating to \"workspace-write\" was cancelled\n");
    // ^C at the question: SIGINT withdraws it, and the audit pair is still complete.
    const tty_result interrupted =
        on_terminal(escalate("touch " + made.string()), answering("\x03"));
    EXPECT_EQ(interrupted.exit_code, cli::exit_not_approved) << interrupted.err;
    EXPECT_EQ(interrupted.err,
              "cordon run: approval for escalating to \"workspace-write\" was cancelled\n");
    const auto decided = events_of(log_, "approval/decided");
    EXPECT_EQ(decided.size(), events_of(log_, "approval/asked").size());
    ASSERT_FALSE(decided.empty());
    EXPECT_EQ(decided.back()["outcome"], "cancelled");
    EXPECT_FALSE(fs::exists(made));
}

TEST_F(Approval, SessionAnswerCoversExactlyTheCommandWithoutATerminalAndNothingElse) {
    const tty_result r = on_terminal(escalate("touch f1"), answering("s\n"));
    if (!backend_usable(r.exit_code, r.err)) return;
    EXPECT_EQ(r.exit_code, 0) << r.err << r.terminal;
    EXPECT_TRUE(fs::exists(workspace_ / "f1"));
    EXPECT_NE(r.terminal.find("s = allow exactly this command, in this working directory, under "
                              "workspace-write"),
              std::string::npos)
        << r.terminal;
    const auto decided = events_of(log_, "approval/decided");
    ASSERT_EQ(decided.size(), 1u);
    EXPECT_EQ(decided[0]["outcome"], "allowed-for-session");
    EXPECT_EQ(decided[0]["grant"]["prefix"], nlohmann::json::array({"touch", "f1"}));
    EXPECT_EQ(decided[0]["grant"]["workdir"], workspace_.string());
    const std::string grant_id = decided[0]["id"];

    // The same words, however quoted, with no terminal at all: allowed by the grant.
    fs::remove(workspace_ / "f1");
    const cli_result covered =
        without_terminal(escalate("touch 'f1'", {"--json"}), stdin_bytes("n\n"));
    EXPECT_EQ(covered.exit_code, 0) << covered.err << covered.out;
    EXPECT_TRUE(fs::exists(workspace_ / "f1"));
    const auto record = nlohmann::json::parse(covered.out);
    EXPECT_EQ(record["sandbox"]["mode"], "workspace-write");
    EXPECT_EQ(record["approval"]["asked"], false);  // the grant decided: nobody was asked
    EXPECT_EQ(record["approval"]["action"], "session-grant");
    EXPECT_EQ(record["approval"]["outcome"], "allowed-for-session");
    EXPECT_EQ(record["approval"]["by"], "grant");
    EXPECT_EQ(record["approval"]["grant"]["id"], grant_id);
    EXPECT_EQ(record["approval"]["mode"], "workspace-write");

    // One more operand is another command: with no terminal nobody can be asked.
    for (const char* other : {"touch f1 f3", "touch f3", "touch -r f1 f3"}) {
        const cli_result refused = without_terminal(escalate(other));
        EXPECT_EQ(refused.exit_code, cli::exit_not_approved) << other << ": " << refused.err;
        EXPECT_EQ(refused.err,
                  "cordon run: sandbox escalation to \"workspace-write\" requires approval, but "
                  "no approval channel is available\n");
    }
    EXPECT_FALSE(fs::exists(workspace_ / "f3"));

    // Revoked, the grant covers nothing any more.
    const cli_result revoked = without_terminal({"session", "revoke", log_.string(), grant_id});
    EXPECT_EQ(revoked.exit_code, 0) << revoked.err;
    EXPECT_NE(revoked.out.find("revoked " + grant_id), std::string::npos) << revoked.out;
    fs::remove(workspace_ / "f1");
    const cli_result after = without_terminal(escalate("touch f1"));
    EXPECT_EQ(after.exit_code, cli::exit_not_approved) << after.err;
    EXPECT_FALSE(fs::exists(workspace_ / "f1"));
    const cli_result twice = without_terminal({"session", "revoke", log_.string(), grant_id});
    EXPECT_EQ(twice.exit_code, cli::exit_session_failed) << twice.err;
}

// What the command inherits from cordon's own environment changes what runs as much as its
// words: an exported function `touch` runs instead of touch, BASH_ENV runs a file first,
// LD_PRELOAD loads a library into every process, PATH finds another `touch`. A grant records
// the environment the command starts with and covers no call that starts with another; what a
// shell or the loader would run is also shown with the question.
TEST_F(Approval, AGrantCoversNoCallThatInheritsAnotherEnvironment) {
    const tty_result granted = on_terminal(escalate("touch f1"), answering("s\n"));
    if (!backend_usable(granted.exit_code, granted.err)) return;
    ASSERT_EQ(granted.exit_code, 0) << granted.err << granted.terminal;
    const fs::path payload = scratch_.path() / "payload";
    const fs::path script = scratch_.path() / "evil.sh";
    write_file(script, "touch " + payload.string() + "\n");
    const fs::path bin = scratch_.path() / "bin";
    fs::create_directory(bin);
    write_file(bin / "touch", "#!/bin/sh\n/usr/bin/touch " + payload.string() + "\n",
               fs::perms::owner_all);
    const std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin";
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
             {"BASH_FUNC_touch%%", "() { /usr/bin/touch " + payload.string() + "; }"},
             {"BASH_ENV", script.string()},
             {"LD_PRELOAD", (scratch_.path() / "no-such.so").string()},
             {"PATH", bin.string() + ":" + path},
             {"NODE_OPTIONS", "--require ./x.js"}}) {
        const cli_result bent = run_cordon(escalate("touch f1"), workspace_, {}, {{name, value}});
        EXPECT_EQ(bent.exit_code, cli::exit_not_approved) << name << ": " << bent.err;
    }
    EXPECT_FALSE(fs::exists(payload));
    // The same environment: covered.
    EXPECT_EQ(without_terminal(escalate("touch f1")).exit_code, 0);

    // Asked, the question shows what a shell would run that the words do not say.
    const tty_result shown = on_terminal(escalate("touch f2"), answering("n\n"));
    EXPECT_TRUE(shown.prompted) << shown.terminal;
    const cli_result logged =
        run_cordon(escalate("touch f3"), workspace_, {}, {{"BASH_FUNC_touch%%", "() { id; }"}});
    EXPECT_EQ(logged.exit_code, cli::exit_not_approved) << logged.err;
    const auto asked = events_of(log_, "approval/asked");
    ASSERT_FALSE(asked.empty());
    EXPECT_EQ(asked.back()["inherited"], nlohmann::json::array({"BASH_FUNC_touch%%=() { id; }"}))
        << asked.back().dump();
    EXPECT_FALSE(fs::exists(workspace_ / "f3"));
}

// What a call does to the environment changes what runs as much as its text (BASH_ENV runs a
// file before the command; an exported BASH_FUNC_* replaces a program): the question shows it,
// and a session grant never covers a call that sets any.
TEST_F(Approval, EnvironmentOverridesAreShownAndNeverCoveredByAGrant) {
    const fs::path payload = scratch_.path() / "payload";
    const fs::path script = scratch_.path() / "evil.sh";
    {
        std::ofstream out(script);
        out << "touch " << payload.string() << "\n";
    }
    const tty_result shown = on_terminal(
        escalate("touch f1", {"--env", "BASH_ENV=" + script.string()}), answering("n\n"));
    EXPECT_TRUE(shown.prompted) << shown.terminal;
    EXPECT_NE(shown.terminal.find("env:      BASH_ENV=" + script.string()), std::string::npos)
        << shown.terminal;
    EXPECT_EQ(shown.exit_code, cli::exit_not_approved);
    EXPECT_EQ(events_of(log_, "approval/asked").at(0)["env"],
              nlohmann::json::array({"BASH_ENV=" + script.string()}));

    const tty_result granted = on_terminal(escalate("touch f2"), answering("s\n"));
    if (!backend_usable(granted.exit_code, granted.err)) return;
    ASSERT_EQ(granted.exit_code, 0) << granted.err << granted.terminal;
    fs::remove(workspace_ / "f2");
    for (const std::string& env :
         {"BASH_ENV=" + script.string(), std::string("BASH_FUNC_touch%%=() { id; }"),
          std::string("PATH=") + scratch_.path().string()}) {
        const cli_result bent = without_terminal(escalate("touch f2", {"--env", env}));
        EXPECT_EQ(bent.exit_code, cli::exit_not_approved) << env << ": " << bent.err;
    }
    EXPECT_FALSE(fs::exists(payload));
    EXPECT_FALSE(fs::exists(workspace_ / "f2"));
    // Without the override the grant still covers the command.
    EXPECT_EQ(without_terminal(escalate("touch f2")).exit_code, 0);
}

TEST_F(Approval, NeverRejectsWithoutAskingEvenWithATerminal) {
    const fs::path made = workspace_ / "f";
    const tty_result r =
        on_terminal(escalate("touch " + made.string(), {"--approval", "never"}), answering("y\n"));
    EXPECT_FALSE(r.prompted) << r.terminal;
    EXPECT_EQ(r.exit_code, cli::exit_not_approved) << r.err;
    EXPECT_EQ(r.err,
              "cordon run: the user rejected escalating this command to \"workspace-write\" (the "
              "approval policy is \"never\": nobody was asked)\n");
    EXPECT_FALSE(fs::exists(made));
    const auto decided = events_of(log_, "approval/decided");
    ASSERT_EQ(decided.size(), 1u);
    EXPECT_EQ(decided[0]["by"], "policy");
}

TEST_F(Approval, WithoutAControllingTerminalNobodyCanBeAskedAndStdinIsNeverTheAnswer) {
    const fs::path made = workspace_ / "f";
    const cli_result r = without_terminal(escalate("touch " + made.string()), stdin_bytes("y\n"));
    EXPECT_EQ(r.exit_code, cli::exit_not_approved) << r.err;
    EXPECT_EQ(r.err,
              "cordon run: sandbox escalation to \"workspace-write\" requires approval, but no "
              "approval channel is available\n");
    EXPECT_FALSE(fs::exists(made));
    const auto decided = events_of(log_, "approval/decided");
    ASSERT_EQ(decided.size(), 1u);
    EXPECT_EQ(decided[0]["outcome"], "unavailable");

    // The same as a record.
    const cli_result json =
        without_terminal(escalate("touch " + made.string(), {"--json"}), stdin_bytes("y\n"));
    EXPECT_EQ(json.exit_code, cli::exit_not_approved);
    const auto record = nlohmann::json::parse(json.out);
    EXPECT_EQ(record["error"]["name"], "EscalationNotApproved");
    EXPECT_EQ(record["error"]["code"], "ESCALATION_NOT_APPROVED");
    EXPECT_EQ(record["error"]["message"],
              "sandbox escalation to \"workspace-write\" requires approval, but no approval "
              "channel is available");
    EXPECT_EQ(record["approval"]["asked"], true);
    EXPECT_EQ(record["approval"]["outcome"], "unavailable");
    EXPECT_EQ(record["approval"]["mode"], "workspace-write");
    EXPECT_TRUE(record["approval"]["id"].is_string());
    EXPECT_FALSE(fs::exists(made));
}

TEST_F(Approval, WithATerminalTheAnswerStillComesFromTheTerminalNotFromStdin) {
    const fs::path made = workspace_ / "f";
    const fs::path input = scratch_.path() / "yes";
    write_file(input, "y\nyes\ns\n", fs::perms::owner_read | fs::perms::owner_write);
    const tty_result r =
        on_terminal(escalate("touch " + made.string()), answering_with_stdin("n\n", input));
    EXPECT_TRUE(r.prompted) << r.terminal;
    EXPECT_EQ(r.exit_code, cli::exit_not_approved) << r.err;
    EXPECT_FALSE(fs::exists(made));
}

TEST_F(Approval, KeystrokesTypedBeforeTheQuestionAreNotTheAnswer) {
    const fs::path made = workspace_ / "f";
    const tty_result r = on_terminal(escalate("touch " + made.string()), typed_ahead("y\n", "n\n"));
    EXPECT_TRUE(r.prompted) << r.terminal;
    EXPECT_EQ(r.exit_code, cli::exit_not_approved) << r.err;
    EXPECT_FALSE(fs::exists(made));
    EXPECT_EQ(events_of(log_, "approval/decided").at(0)["outcome"], "rejected");
}

// The issue's "done when": a read-only run that is denied says how to retry, and the retry with
// --escalate workspace-write runs after a `y`.
TEST_F(Approval, ADeniedRunIsRetriedEscalatedAfterAYes) {
    const fs::path made = workspace_ / "f";
    const tty_result denied =
        on_terminal({"run", "--session", log_.string(), "-c", "touch " + made.string()});
    if (!backend_usable(denied.exit_code, denied.err)) return;
    EXPECT_EQ(denied.exit_code, 1) << denied.err;
    EXPECT_FALSE(denied.prompted);
    const std::string marker = "[sandbox: file access denied under read-only mode]\n";
    const auto at = denied.err.find(marker);
    ASSERT_NE(at, std::string::npos) << denied.err;
    EXPECT_EQ(denied.err.substr(at + marker.size()).rfind("[sandbox: escalation available", 0), 0u)
        << denied.err;
    EXPECT_NE(denied.err.find("--escalate MODE"), std::string::npos) << denied.err;

    const tty_result retried = on_terminal(escalate("touch " + made.string()), answering("y\n"));
    EXPECT_EQ(retried.exit_code, 0) << retried.err << retried.terminal;
    EXPECT_TRUE(fs::exists(made));

    // Without a terminal, or under `never`, nobody could say yes: no hint.
    const cli_result quiet =
        without_terminal({"run", "--session", log_.string(), "-c", "touch " + made.string() + "x"});
    EXPECT_EQ(quiet.exit_code, 1);
    EXPECT_EQ(quiet.err.find("escalation available"), std::string::npos) << quiet.err;
}

TEST_F(Approval, EscalationFieldsArePairedAndMustWiden) {
    const fs::path made = workspace_ / "f";
    const std::string touch = "touch " + made.string();
    const cli_result alone =
        without_terminal({"run", "--escalate", "workspace-write", "-c", touch});
    EXPECT_EQ(alone.exit_code, cli::exit_usage);
    EXPECT_EQ(alone.err, "cordon run: invalid escalation: --escalate requires a justification\n");
    const cli_result reason = without_terminal({"run", "--justification", "why", "-c", touch});
    EXPECT_EQ(reason.exit_code, cli::exit_usage);
    EXPECT_EQ(reason.err,
              "cordon run: invalid escalation: justification is only valid together with "
              "--escalate\n");
    const cli_result blank = without_terminal(
        {"run", "--escalate", "workspace-write", "--justification", "  ", "-c", touch});
    EXPECT_EQ(blank.exit_code, cli::exit_usage);
    EXPECT_EQ(blank.err, "cordon run: invalid justification: expected a non-empty sentence\n");
    const cli_result unknown =
        without_terminal({"run", "--escalate", "host-root", "--justification", "why", "-c", touch});
    EXPECT_EQ(unknown.exit_code, cli::exit_usage);

    // Not wider than the standing mode: refused without asking.
    const tty_result same = on_terminal({"run", "--mode", "workspace-write", "--escalate",
                                         "workspace-write", "--justification", "why", "-c", touch},
                                        answering("y\n"));
    EXPECT_FALSE(same.prompted) << same.terminal;
    EXPECT_EQ(same.exit_code, cli::exit_not_approved);
    EXPECT_EQ(same.err,
              "cordon run: sandbox escalation to \"workspace-write\" is not strictly wider than "
              "this call's current \"workspace-write\" mode\n");
    EXPECT_FALSE(fs::exists(made));
}

TEST_F(Approval, ALogTheRunCouldWriteIsRefusedBeforeAnyoneIsAsked) {
    const fs::path inside = workspace_ / "session.log";
    const fs::path made = workspace_ / "f";
    const tty_result r =
        on_terminal({"run", "--session", inside.string(), "--escalate", "workspace-write",
                     "--justification", "why", "-c", "touch " + made.string()},
                    answering("y\n"));
    if (!backend_usable(r.exit_code, r.err)) return;
    EXPECT_FALSE(r.prompted) << r.terminal;
    EXPECT_EQ(r.exit_code, cli::exit_usage) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(inside.string()), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(made));
    EXPECT_TRUE(events_of(inside, "approval/asked").empty());

    // A session standing at workspace-write is refused the same way, by the run itself.
    ASSERT_EQ(without_terminal({"session", "set", inside.string(), "--mode", "workspace-write"})
                  .exit_code,
              0);
    const cli_result standing =
        without_terminal({"run", "--session", inside.string(), "-c", "touch " + made.string()});
    EXPECT_EQ(standing.exit_code, cli::exit_usage) << standing.err;
    EXPECT_FALSE(fs::exists(made));
}

TEST_F(Approval, OptionsThatContradictTheSessionAreUsageErrors) {
    const fs::path made = workspace_ / "f";
    const std::string touch = "touch " + made.string();
    ASSERT_EQ(
        without_terminal({"session", "set", log_.string(), "--mode", "workspace-write"}).exit_code,
        0);
    const cli_result mode =
        without_terminal({"run", "--session", log_.string(), "--mode", "read-only", "-c", touch});
    EXPECT_EQ(mode.exit_code, cli::exit_usage);
    EXPECT_NE(mode.err.find("cordon session set " + log_.string() + " --mode read-only"),
              std::string::npos)
        << mode.err;
    EXPECT_EQ(std::count(mode.err.begin(), mode.err.end(), '\n'), 1) << mode.err;

    ASSERT_EQ(without_terminal({"session", "set", log_.string(), "--approval", "never"}).exit_code,
              0);
    const cli_result approval =
        without_terminal({"run", "--session", log_.string(), "--approval", "ask", "-c", touch});
    EXPECT_EQ(approval.exit_code, cli::exit_usage);
    EXPECT_NE(approval.err.find("--approval ask"), std::string::npos) << approval.err;

    const fs::path elsewhere = scratch_.path() / "elsewhere";
    fs::create_directory(elsewhere);
    const cli_result root = without_terminal(
        {"run", "--session", log_.string(), "--workspace", elsewhere.string(), "-c", touch});
    EXPECT_EQ(root.exit_code, cli::exit_usage);
    EXPECT_NE(root.err.find(workspace_.string()), std::string::npos) << root.err;
    EXPECT_FALSE(fs::exists(made));

    // The same values as the session's are no contradiction, and the session's root wins over
    // the current directory.
    const cli_result agreed = run_cordon(
        {"run", "--session", log_.string(), "--mode", "workspace-write", "-c", "touch f"},
        elsewhere);
    if (!backend_usable(agreed.exit_code, agreed.err)) return;
    EXPECT_EQ(agreed.exit_code, 0) << agreed.err;
}

// `session set` compacts: a log whose trail is longer than the part kept (a quarter of the
// 1 MiB bound) keeps its state and its latest events, and says what it dropped.
TEST_F(Approval, SessionSetCompactsALongLog) {
    ASSERT_EQ(
        without_terminal({"session", "set", log_.string(), "--mode", "workspace-write"}).exit_code,
        0);
    {
        std::ofstream out(log_, std::ios::app | std::ios::binary);
        const std::string name(1000, 'p');
        for (int i = 0; i < 700; ++i) {
            out << R"({"at":"2026-12-07T12:00:00.000Z","preset":")" << name << i
                << R"(","type":"permission/preset"})" << '\n';
        }
    }
    const auto before = fs::file_size(log_);
    const cli_result set =
        without_terminal({"session", "set", log_.string(), "--approval", "never"});
    EXPECT_EQ(set.exit_code, 0) << set.err;
    EXPECT_NE(set.out.find("approval: ask \u2192 never\n"), std::string::npos) << set.out;
    EXPECT_NE(set.out.find("compacted: "), std::string::npos) << set.out;
    EXPECT_LT(fs::file_size(log_), before / 2);

    // The kept trail is 256 KiB: read from the file, the first lines and the knobs.
    const std::string text = read_file(log_);
    std::vector<nlohmann::json> lines;
    for (std::size_t at = 0; lines.size() < 3 && at < text.size(); at = text.find('\n', at) + 1)
        lines.push_back(nlohmann::json::parse(text.substr(at, text.find('\n', at) - at)));
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0]["type"], "session/compacted");
    EXPECT_GT(lines[0]["dropped"].get<int>(), 0);
    EXPECT_EQ(lines[1]["type"], "session/start");
    EXPECT_EQ(lines[2]["type"], "sandbox/mode");
    EXPECT_EQ(lines[2]["mode"], "workspace-write");
    EXPECT_NE(text.find(R"("policy":"never","type":"approval/policy"})"), std::string::npos);
    const cli_result shown = without_terminal({"session", "show", log_.string(), "--json"});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
}

TEST_F(Approval, SessionShowSetAndACorruptLine) {
    const cli_result created =
        without_terminal({"session", "set", log_.string(), "--preset", "workspace-write"});
    EXPECT_EQ(created.exit_code, 0) << created.err;
    EXPECT_NE(created.out.find("mode: read-only \u2192 workspace-write"), std::string::npos)
        << created.out;
    EXPECT_EQ((fs::status(log_).permissions() & fs::perms::all),
              fs::perms::owner_read | fs::perms::owner_write);

    const cli_result shown = without_terminal({"session", "show", log_.string()});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_NE(shown.out.find("mode      workspace-write\n"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("approval  ask"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("preset    workspace-write\n"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("root      " + workspace_.string() + "\n"), std::string::npos)
        << shown.out;

    const cli_result json = without_terminal({"session", "show", log_.string(), "--json"});
    EXPECT_EQ(json.exit_code, 0) << json.err;
    const auto doc = nlohmann::json::parse(json.out);
    EXPECT_EQ(doc["mode"], "workspace-write");
    EXPECT_EQ(doc["approval"], "ask");
    EXPECT_EQ(doc["preset"], "workspace-write");
    EXPECT_EQ(doc["root"], workspace_.string());
    EXPECT_TRUE(doc["grants"].empty());
    ASSERT_FALSE(doc["events"].empty());
    EXPECT_EQ(doc["events"][0]["type"], "session/start");

    // Nothing changes: nothing is written.
    const std::string before = read_file(log_);
    const cli_result same =
        without_terminal({"session", "set", log_.string(), "--preset", "workspace-write"});
    EXPECT_EQ(same.exit_code, 0) << same.err;
    EXPECT_EQ(same.out, "unchanged: nothing written\n");
    const cli_result same_mode =
        without_terminal({"session", "set", log_.string(), "--mode", "workspace-write"});
    EXPECT_EQ(same_mode.out, "unchanged: nothing written\n");
    EXPECT_EQ(read_file(log_), before);

    const cli_result unknown =
        without_terminal({"session", "set", log_.string(), "--preset", "everything"});
    EXPECT_EQ(unknown.exit_code, cli::exit_usage);
    EXPECT_EQ(unknown.err,
              "cordon session set: unknown preset \"everything\" (available: workspace-write, "
              "danger-full-access)\n");
    const cli_result two = without_terminal(
        {"session", "set", log_.string(), "--mode", "read-only", "--approval", "never"});
    EXPECT_EQ(two.exit_code, cli::exit_usage);
    const cli_result none = without_terminal({"session", "set", log_.string()});
    EXPECT_EQ(none.exit_code, cli::exit_usage);
    EXPECT_EQ(read_file(log_), before);

    // A custom combination, shown as such.
    EXPECT_EQ(without_terminal({"session", "set", log_.string(), "--approval", "never"}).out,
              "approval: ask \u2192 never\npreset: workspace-write \u2192 custom\n");

    // A corrupt line is reported with its number, by show and by run, and nothing runs.
    const std::size_t lines = split_lines(read_file(log_)).size();
    {
        const int fd = ::open(log_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        const std::string garbage = "{\"type\":\"sandbox/mode\",\"mode\":\"host-root\"}\n";
        ASSERT_EQ(::write(fd, garbage.data(), garbage.size()),
                  static_cast<ssize_t>(garbage.size()));
        ::close(fd);
    }
    const std::string where = log_.string() + ":" + std::to_string(lines + 1) + ": ";
    const cli_result corrupt = without_terminal({"session", "show", log_.string()});
    EXPECT_EQ(corrupt.exit_code, cli::exit_session_failed);
    EXPECT_EQ(corrupt.err.rfind("cordon session: " + where, 0), 0u) << corrupt.err;
    EXPECT_EQ(std::count(corrupt.err.begin(), corrupt.err.end(), '\n'), 1) << corrupt.err;
    const fs::path made = workspace_ / "f";
    const cli_result run = without_terminal({"run", "--session", log_.string(), "--mode",
                                             "danger-full-access", "-c", "touch " + made.string()});
    EXPECT_EQ(run.exit_code, cli::exit_usage);
    EXPECT_EQ(run.err.rfind("cordon run: " + where, 0), 0u) << run.err;
    EXPECT_FALSE(fs::exists(made));

    const cli_result missing =
        without_terminal({"session", "show", (scratch_.path() / "no-such.log").string()});
    EXPECT_EQ(missing.exit_code, cli::exit_session_failed);
    EXPECT_FALSE(fs::exists(scratch_.path() / "no-such.log"));
}

TEST_F(Approval, TheTrailShowsEachQuestionAndItsAnswer) {
    const tty_result r = on_terminal(escalate("touch f1"), answering("s\n"));
    if (!backend_usable(r.exit_code, r.err)) return;
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string id = events_of(log_, "approval/decided").at(0)["id"];
    const cli_result shown = without_terminal({"session", "show", log_.string()});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_NE(shown.out.find(id + "  exactly `touch f1` in " + workspace_.string() +
                             " under workspace-write"),
              std::string::npos)
        << shown.out;
    EXPECT_NE(shown.out.find(id + " asked by cordon run: escalate sandbox to workspace-write: " +
                             std::string(justification)),
              std::string::npos)
        << shown.out;
    EXPECT_NE(shown.out.find(id + " decided: allowed-for-session by terminal"), std::string::npos)
        << shown.out;
}

}  // namespace
}  // namespace cordon::test
