// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The `cordon` program as a user types it: exit codes, one-line usage errors that run nothing,
// live output with markers, the JSON record, and the probe/confine subcommands.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cordon/environment.hpp"
#include "real_backend.hpp"
#include "runtime/cgroup.hpp"
#include "runtime/process.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"
#include "support/processes.hpp"
#include "support/spawned_process.hpp"

extern char** environ;

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

int count_lines(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// The v2 cgroup of `pid` (the "0::" line of /proc/<pid>/cgroup), or "" when it is gone.
std::string v2_cgroup(pid_t pid) {
    for (const auto& line : split_lines(read_file("/proc/" + std::to_string(pid) + "/cgroup"))) {
        if (line.rfind("0::", 0) == 0) return line.substr(3);
    }
    return "";
}

// The cgroup host (`cordon-<pid>-<random>`) of a cordon started, directly or not, by a child of
// this process whose command line contains `marker`, once that host holds a run and its lock file
// exists in `locks`; nullopt until then. A cordon creates its host under its own cgroup and moves
// each run into <host>/run-<n> (runtime/cgroup.cpp).
std::optional<std::string> live_cordon_host(std::string_view marker, const fs::path& locks) {
    const std::vector<pid_t> pids = all_pids();
    std::set<pid_t> tree;
    for (pid_t pid : pids) {
        const auto stat = read_proc_stat(pid);
        if (stat && stat->ppid == ::getpid() &&
            read_file("/proc/" + std::to_string(pid) + "/cmdline").find(marker) !=
                std::string::npos) {
            tree.insert(pid);
        }
    }
    for (bool grew = !tree.empty(); grew;) {
        grew = false;
        for (pid_t pid : pids) {
            const auto stat = read_proc_stat(pid);
            if (!tree.contains(pid) && stat && tree.contains(stat->ppid)) {
                tree.insert(pid);
                grew = true;
            }
        }
    }
    std::string own = v2_cgroup(::getpid());
    if (!own.ends_with('/')) own += '/';
    for (pid_t pid : tree) {
        const std::string cgroup = v2_cgroup(pid);
        if (!cgroup.starts_with(own)) continue;
        const std::string host =
            cgroup.substr(own.size(), cgroup.find('/', own.size()) - own.size());
        if (host.starts_with("cordon-") && fs::exists(locks / (host + ".lock"))) return host;
    }
    return std::nullopt;
}

class CliTest : public ::testing::Test {
protected:
    void SetUp() override { fs::create_directory(workspace_); }

    temp_dir scratch_{"/var/tmp", "cordon-cli-test-"};
    fs::path root_ = scratch_.path();
    fs::path workspace_ = root_ / "ws";
};

TEST_F(CliTest, RunsAShellCommandAndStreamsItsOutput) {
    auto r = run_cordon({"run", "--mode", "danger-full-access", "-c", "echo hello; echo oops >&2"},
                        workspace_);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, "hello\n");
    EXPECT_EQ(r.err, "oops\n");
}

TEST_F(CliTest, ExitCodesFollowTheCommand) {
    EXPECT_EQ(
        run_cordon({"run", "--mode", "danger-full-access", "-c", "exit 7"}, workspace_).exit_code,
        7);
    auto killed = run_cordon(
        {"run", "--mode", "danger-full-access", "--", test_child_path().string(), "kill-self", "9"},
        workspace_);
    EXPECT_EQ(killed.exit_code, 128 + 9);
    EXPECT_NE(killed.err.find("[killed by signal: SIGKILL]"), std::string::npos);
    auto timed_out = run_cordon({"run", "--mode", "danger-full-access", "--timeout", "300ms", "--",
                                 test_child_path().string(), "sleep", "20000"},
                                workspace_);
    EXPECT_EQ(timed_out.exit_code, 124);
    EXPECT_NE(timed_out.err.find("[timed out after 300ms]"), std::string::npos);
    auto missing = run_cordon({"run", "--mode", "danger-full-access", "--", "no-such-program-xyz"},
                              workspace_);
    EXPECT_EQ(missing.exit_code, 127);
    // A missing program is the same "not found" under a sandbox, never a sandbox failure.
    for (const auto path : test::every_real_backend) {
        test::scoped_backend_path on(path);
        auto relative = run_cordon(
            {"run", "--backend", std::string(backend_flag(path)), "--", "./no-such-program"},
            workspace_);
        EXPECT_EQ(relative.exit_code, 127) << to_string(path) << relative.err;
    }
    std::ofstream(workspace_ / "not-executable") << "#!/bin/sh\n";
    auto denied = run_cordon({"run", "--", "./not-executable"}, workspace_);
    EXPECT_EQ(denied.exit_code, 126) << denied.err;
}

// A reader that stops reading cordon's stdout must not stop the timeout: the command waits on its
// full pipe (it is paced by the reader, tests/cli/pipeline_test.cpp), the event loop does not, and
// what cordon had read reaches the reader once it reads again: nothing is reported missing.
TEST_F(CliTest, StalledReaderCannotHoldOffTheTimeout) {
    runtime::process_spec spec;
    // cordon writes into a FIFO that the shell holds open on fd 3 and reads only once the
    // command is gone: the timeout had to fire while the reader stalled. The command writes
    // 16 MiB, twice what cordon queues for a slow reader, before it waits for the timeout.
    spec.argv = {
        "bash", "-c",
        "mkfifo stalled && { \"$0\" run --mode danger-full-access --timeout 2s -- sh -c "
        "'echo $$ > command.pid; head -c 16777216 /dev/zero; exec sleep 60' > stalled & } && "
        "exec 3< stalled && "
        "cordon=$! && until [ -s command.pid ]; do sleep 0.01; done && "
        "while kill -0 \"$(cat command.pid)\" 2>/dev/null; do sleep 0.01; done && "
        "{ cat <&3 > /dev/null & } ; wait $cordon; echo \"cordon=$?\"",
        cordon_path().string()};
    spec.env = runtime::build_environment(environ, {});
    spec.cwd = workspace_;
    spec.timeout = std::chrono::seconds(60);
    auto outcome = runtime::run_process(std::move(spec));
    EXPECT_EQ(outcome.stdout_output.text, "cordon=124\n");
    EXPECT_EQ(outcome.stderr_output.text.find("not shown"), std::string::npos)
        << outcome.stderr_output.text;
    EXPECT_NE(outcome.stderr_output.text.find("[timed out after "), std::string::npos)
        << outcome.stderr_output.text;
}

TEST_F(CliTest, UsageErrorsAreOneLineExitTwoAndRunNothing) {
    fs::path marker = root_ / "marker";
    std::string touch = "touch " + marker.string();
    fs::path file = root_ / "plain-file";
    std::ofstream(file) << "x";
    std::vector<std::vector<std::string>> cases = {
        {"run", "--mode", "bogus", "-c", touch},
        {"run", "--workspace", (root_ / "missing").string(), "-c", touch},
        {"run", "--workspace", file.string(), "-c", touch},
        {"run", "--workdir", (root_ / "missing").string(), "-c", touch},
        {"run", "--timeout", "abc", "-c", touch},
        {"run", "--timeout", "0", "-c", touch},
        {"run", "--timeout", "1h", "-c", touch},  // beyond the cap: refused, never lowered
        {"run", "-c", "   "},
        {"run"},
        {"run", "--env", "NOEQUALS", "-c", touch},
        {"run", "--backend", "chroot", "-c", touch},
        {"run", "--max-output", "-5", "-c", touch},
        {"run", "--stdin-file", (root_ / "missing").string(), "-c", touch},
        {"run", "-c", touch, "--", "touch", marker.string()},
        {"run", "--no-such-flag", "-c", touch},
        {"confine", "--mode", "danger-full-access", "--", "true"},
        {"confine", "--mode", "read-only"},
        {"frobnicate"},
    };
    for (const auto& args : cases) {
        auto r = run_cordon(args, workspace_);
        std::string shown;
        for (const auto& a : args)
            shown += a + " ";
        EXPECT_EQ(r.exit_code, 2) << shown << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << shown << r.err;
        EXPECT_EQ(r.err.rfind("cordon", 0), 0u) << shown << r.err;
        EXPECT_FALSE(fs::exists(marker)) << shown;
    }
}

// A mistyped command or option is named with the nearest valid name and where the help is, at
// every level; a word nothing is near gets no guess.
TEST_F(CliTest, TyposAreNamedWithTheNearestNameAndWhereTheHelpIs) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"rn"}, "cordon: unknown command \"rn\" (did you mean \"run\"?); try 'cordon --help'"},
        {{"--verison"},
         "cordon: unknown option \"--verison\" (did you mean \"--version\"?); try 'cordon "
         "--help'"},
        {{"run", "--tiemout", "5s", "-c", "true"},
         "cordon run: unknown option \"--tiemout\" (did you mean \"--timeout\"?); try 'cordon "
         "run --help'"},
        {{"session", "shw", "x"},
         "cordon session: unknown command \"shw\" (did you mean \"show\"?); try 'cordon "
         "session --help'"},
        {{"frobnicate"}, "cordon: unknown command \"frobnicate\"; try 'cordon --help'"},
        {{},
         "cordon: a command is required (probe, confine, run, mcp, session, config); try "
         "'cordon --help'"},
        {{"help", "rn"},
         "cordon help: unknown command \"rn\" (did you mean \"run\"?); try 'cordon --help'"},
    };
    for (const auto& [args, expected] : cases) {
        const auto r = run_cordon(args, workspace_);
        EXPECT_EQ(r.exit_code, 2) << expected;
        EXPECT_EQ(r.err, expected + "\n");
        EXPECT_EQ(r.out, "");
    }
}

// `cordon help [COMMAND...]` prints what `cordon COMMAND --help` prints; cordon's own options are
// taken after a command too.
TEST_F(CliTest, HelpAndCordonsOwnOptionsAsPeopleTypeThem) {
    for (const std::vector<std::string>& path :
         {std::vector<std::string>{}, std::vector<std::string>{"run"},
          std::vector<std::string>{"session", "set"}}) {
        std::vector<std::string> help = {"help"};
        help.insert(help.end(), path.begin(), path.end());
        std::vector<std::string> flag = path;
        flag.push_back("--help");
        const auto asked = run_cordon(help, workspace_);
        const auto flagged = run_cordon(flag, workspace_);
        EXPECT_EQ(asked.exit_code, 0) << asked.err;
        EXPECT_EQ(asked.out, flagged.out);
        EXPECT_NE(asked.out.find("Usage: cordon"), std::string::npos) << asked.out;
    }
    const auto verbose =
        run_cordon({"run", "--mode", "read-only", "--verbose", "-c", "echo ran"}, workspace_);
    EXPECT_EQ(verbose.exit_code, 0) << verbose.err;
    EXPECT_EQ(verbose.out, "ran\n");
    EXPECT_NE(verbose.err.find("cordon: [debug]"), std::string::npos) << verbose.err;
}

// `cordon --version` (or -V) prints the project's version and exits 0, before any subcommand is
// looked at: with one, nothing runs.
TEST_F(CliTest, VersionIsPrintedAndNothingRuns) {
    const fs::path marker = root_ / "marker";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--version"}, std::vector<std::string>{"-V"},
          std::vector<std::string>{"--version", "run", "-c", "touch " + marker.string()},
          std::vector<std::string>{"--verbose", "--version"}}) {
        const auto r = run_cordon(args, workspace_);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, std::string("cordon ") + CORDON_VERSION + "\n");
        EXPECT_EQ(r.err, "");
    }
    EXPECT_FALSE(fs::exists(marker));
}

// Everything after "--" belongs to the command, even after an option that takes many values:
// the command's own "--mode danger-full-access" must never widen cordon's policy.
TEST_F(CliTest, WordsAfterDashesNeverBecomeCordonOptions) {
    fs::path marker = root_ / "escaped";
    auto r = run_cordon({"run", "--env", "A=1", "--", "touch", marker.string(), "--mode",
                         "danger-full-access", "--workspace", "/"},
                        workspace_);
    EXPECT_NE(r.exit_code, 0) << r.err;
    EXPECT_FALSE(fs::exists(marker)) << "ran outside the read-only sandbox";
    auto json = run_cordon(
        {"run", "--json", "--env=A=1", "--env", "B=2", "--", "printenv", "A", "B"}, workspace_);
    ASSERT_EQ(json.exit_code, 0) << json.err << json.out;
    auto doc = nlohmann::json::parse(json.out);
    EXPECT_EQ(doc["stdout"]["text"], "1\n2\n");
    EXPECT_EQ(doc["sandbox"]["mode"], "read-only");
    // Words before "--" are not a command.
    auto loose = run_cordon({"run", "--env", "A=1", "echo", "hi"}, workspace_);
    EXPECT_EQ(loose.exit_code, 2) << loose.err;
    EXPECT_EQ(count_lines(loose.err), 1) << loose.err;
}

TEST_F(CliTest, SandboxUnavailableExits125WithTheExactMessage) {
    // No sandbox-exec on Linux: the Seatbelt rung is unusable, and nothing may run unconfined.
    fs::path marker = workspace_ / "marker";
    auto r = run_cordon({"run", "--backend", "seatbelt", "--mode", "workspace-write", "-c",
                         "touch " + marker.string()},
                        workspace_);
    EXPECT_EQ(r.exit_code, 125);
    EXPECT_EQ(r.err,
              "sandbox mode \"workspace-write\" is requested but no sandbox backend is usable on "
              "this host; refusing to run the command unconfined. Install bubblewrap or run a "
              "Landlock-enforcing kernel (Linux), ensure sandbox-exec is usable (macOS) \u2014 "
              "Windows has no confinement backend yet \u2014 or switch the consumer to "
              "danger-full-access. Unusable backends: seatbelt: /usr/bin/sandbox-exec: No such "
              "file or directory.\n");
    EXPECT_FALSE(fs::exists(marker));

    auto json = run_cordon({"run", "--json", "--backend", "seatbelt", "-c", "true"}, workspace_);
    EXPECT_EQ(json.exit_code, 125);
    auto doc = nlohmann::json::parse(json.out);
    EXPECT_EQ(doc["outcome"], "runner-failed");
    EXPECT_EQ(doc["error"]["code"], "SANDBOX_UNAVAILABLE");
    EXPECT_EQ(doc["error"]["name"], "SandboxUnavailableError");
    EXPECT_EQ(doc["error"]["backends"], nlohmann::json::parse(R"([{"backend": "seatbelt",
                                         "reason": "/usr/bin/sandbox-exec: No such file or directory"}])"));
}

// A rung that is usable but cannot enforce a part of the policy (Landlock and read-only paths
// beneath the workspace): exit 125, nothing runs, and the message says which backend and what of
// the policy, never "no sandbox backend is usable ... install bubblewrap".
TEST_F(CliTest, APolicyARungCannotEnforceIsNamedInTheRefusal) {
    const fs::path kept = workspace_ / "kept";
    fs::create_directory(kept);
    const fs::path marker = workspace_ / "marker";
    auto r = run_cordon({"run", "--backend", "landlock", "--mode", "workspace-write",
                         "--read-only-path", kept.string(), "-c", "touch " + marker.string()},
                        workspace_);
    EXPECT_EQ(r.exit_code, 125) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("sandbox mode \"workspace-write\" is requested with a policy that the "
                         "usable sandbox backend (landlock) cannot wholly enforce; refusing to "
                         "run the command. landlock cannot enforce: read-only paths beneath a "
                         "writable root are writable: " +
                         kept.string()),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("Accept the gap (--accept-partial"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("no sandbox backend is usable"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(marker));

    auto json = run_cordon({"run", "--json", "--backend", "landlock", "--mode", "workspace-write",
                            "--read-only-path", kept.string(), "-c", "true"},
                           workspace_);
    EXPECT_EQ(json.exit_code, 125);
    auto doc = nlohmann::json::parse(json.out);
    EXPECT_EQ(doc["error"]["code"], "SANDBOX_UNAVAILABLE");
    EXPECT_EQ(doc["error"]["unenforced"]["backend"], "landlock");
    EXPECT_NE(doc["error"]["unenforced"]["parts"].get<std::string>().find("read-only paths"),
              std::string::npos);
}

// Under --tmp host the Landlock rung makes the host's /tmp writable, and a denied path there would
// stay readable and writable: refused as a gap (it was run, the secret read).
TEST_F(CliTest, ADeniedPathInTheHostsTmpIsAGapOnTheLandlockRung) {
    test::temp_dir host_tmp{"/tmp", "cli-hosttmp-"};
    const fs::path secret = host_tmp.path() / "secret";
    test::write_file(secret, "SECRET\n");
    auto r = run_cordon({"run", "--backend", "landlock", "--mode", "workspace-write", "--tmp",
                         "host", "--deny-read", host_tmp.path().string(), "-c",
                         "cat " + secret.string() + "; echo x > " + secret.string()},
                        workspace_);
    EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
    EXPECT_EQ(r.out.find("SECRET"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("denied reads inside a writable root stay readable: " +
                         host_tmp.path().string()),
              std::string::npos)
        << r.err;
    EXPECT_EQ(test::read_file(secret), "SECRET\n");
}

// A workspace the command must not be able to write is the request's fault: a usage error that
// names the reason, never "no sandbox backend is usable ... switch to danger-full-access".
TEST_F(CliTest, UnsafeWorkspacesAreRefusedAsUsageErrors) {
    fs::create_directory_symlink(workspace_, root_ / "link");
    fs::path marker = root_ / "marker";
    const std::string touch = "touch " + marker.string();
    struct refused {
        std::string workspace;
        std::string says;
    };
    const refused cases[] = {
        {"/proc", "lies in /proc"},
        {"/sys/fs/cgroup", "lies in /sys"},
        {"/dev/shm", "lies in /dev"},
        {"/", "holds /dev"},
        {"/usr/local/bin", "where cordon takes its runners from"},
        // The spill files, or (when the build tree lies under /var/tmp) cordon itself.
        {"/var/tmp", "refusing a workspace-write workspace: "},
        {(root_ / "link").string(), "resolves through a symlink"},
        {cordon_path().parent_path().string(), "runs unconfined in later runs"},
        // Each cordon's uid is its own while it holds its slot's lock there (identity.hpp).
        {"/run", "holds the locks that give each cordon its own uid"},
    };
    for (const auto& c : cases) {
        for (const char* backend : {"bwrap", "landlock"}) {
            SCOPED_TRACE(c.workspace + " " + backend);
            auto r = run_cordon({"run", "--backend", backend, "--mode", "workspace-write",
                                 "--workspace", c.workspace, "-c", touch},
                                workspace_);
            EXPECT_EQ(r.exit_code, 2) << r.err;
            EXPECT_EQ(count_lines(r.err), 1) << r.err;
            EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
            EXPECT_EQ(r.err.find("no sandbox backend is usable"), std::string::npos) << r.err;
            EXPECT_FALSE(fs::exists(marker));
        }
    }
    auto json = run_cordon(
        {"run", "--json", "--mode", "workspace-write", "--workspace", "/proc", "-c", touch},
        workspace_);
    EXPECT_EQ(json.exit_code, 2);
    auto doc = nlohmann::json::parse(json.out);
    EXPECT_EQ(doc["error"]["code"], "REQUEST_REFUSED");
    EXPECT_EQ(doc["error"]["stage"], "policy");
    // A confined run's working directory in /proc is refused the same way.
    auto workdir = run_cordon({"run", "--workdir", "/proc/self", "-c", touch}, workspace_);
    EXPECT_EQ(workdir.exit_code, 2) << workdir.err;
    EXPECT_NE(workdir.err.find("refusing the working directory"), std::string::npos);
    EXPECT_FALSE(fs::exists(marker));
}

TEST_F(CliTest, ConfinedRunShowsARefusedAndAPermittedWrite) {
    for (const auto path : test::every_real_backend) {
        test::scoped_backend_path on(path);
        const std::string backend(backend_flag(path));
        SCOPED_TRACE(to_string(path));
        fs::path inside = workspace_ / ("inside-" + std::string(to_string(path)));
        fs::path beside = root_ / ("beside-" + std::string(to_string(path)));
        auto r = run_cordon({"run", "--backend", backend, "--mode", "workspace-write", "-c",
                             "echo ok > " + inside.string() + " && echo x > " + beside.string()},
                            workspace_);
        if (r.exit_code == 125) CORDON_SKIP_OR_FAIL(backend + " unusable: " + r.err);
        EXPECT_EQ(r.exit_code, 1) << backend << r.err;
        EXPECT_TRUE(fs::exists(inside)) << backend;
        EXPECT_FALSE(fs::exists(beside)) << backend;
        EXPECT_NE(r.err.find("[sandbox: file access denied under workspace-write mode]"),
                  std::string::npos)
            << backend << r.err;
        EXPECT_NE(r.err.find("[exit code: 1]"), std::string::npos) << r.err;
    }
}

TEST_F(CliTest, JsonRecordHasEveryField) {
    auto r = run_cordon(
        {"run", "--json", "--backend", "bwrap", "-c", "echo x > /etc/cordon-cli-test"}, workspace_);
    if (r.exit_code == 125) CORDON_SKIP_OR_FAIL("bwrap unusable: " + r.out);
    EXPECT_EQ(r.exit_code, 1);
    auto doc = nlohmann::json::parse(r.out);
    for (const char* key : {"exitCode", "signal", "timedOut", "aborted", "timeoutMs", "durationMs",
                            "stdout", "stderr", "sandbox", "limits"}) {
        EXPECT_TRUE(doc.contains(key)) << key;
    }
    EXPECT_EQ(doc["exitCode"], 1);
    EXPECT_TRUE(doc["signal"].is_null());
    EXPECT_EQ(doc["timeoutMs"], 120000);
    EXPECT_EQ(doc["sandbox"]["mode"], "read-only");
    EXPECT_EQ(doc["sandbox"]["enforcement"], "full");
    EXPECT_EQ(doc["sandbox"]["backend"], "bwrap");
    EXPECT_EQ(doc["sandbox"]["denied"], true);
    EXPECT_NE(doc["stderr"]["text"].get<std::string>().find("Read-only file system"),
              std::string::npos);
    EXPECT_EQ(doc["stderr"]["bytes"], doc["stderr"]["text"].get<std::string>().size());
    EXPECT_FALSE(fs::exists("/etc/cordon-cli-test"));
}

TEST_F(CliTest, WorkspaceIsCanonicalisedWithSymlinksResolvedBeforeDotDot) {
    // link -> ws/inner, so link/.. is ws (where chdir lands), not root_ (the lexical parent).
    fs::create_directory(workspace_ / "inner");
    fs::create_directory_symlink(workspace_ / "inner", root_ / "link");
    auto r = run_cordon({"run", "--json", "--mode", "danger-full-access", "--workspace",
                         (root_ / "link" / "..").string(), "-c", "pwd"},
                        root_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["stdout"]["text"], workspace_.string() + "\n");
}

TEST_F(CliTest, StdinFileEnvAndWorkdirReachTheCommand) {
    fs::path input = root_ / "input";
    std::ofstream(input) << "from a file";
    fs::create_directory(workspace_ / "sub");
    auto r =
        run_cordon({"run", "--mode", "danger-full-access", "--stdin-file", input.string(), "--env",
                    "CORDON_TEST_VAR=hello world", "--workdir", (workspace_ / "sub").string(), "-c",
                    "cat; echo; echo $CORDON_TEST_VAR; pwd"},
                   workspace_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "from a file\nhello world\n" + (workspace_ / "sub").string() + "\n");
    auto piped =
        run_cordon({"run", "--mode", "danger-full-access", "--stdin-file", "-", "--", "cat"},
                   workspace_, cli_stdin{std::string("piped\n"), nullptr});
    EXPECT_EQ(piped.out, "piped\n");
}

// `kill -9` of `cordon run`: the whole tree of its run goes with it, a grandchild that ignores
// SIGHUP and left the session included (cordon's cgroup watchdog, runtime/cgroup_watchdog.hpp),
// on the Landlock rung's two paths and unconfined; bwrap's pid namespace does the same
// (--die-with-parent). The Landlock rung's private /tmp, which the killed cordon could not
// remove, goes at the next cordon's first private /tmp. Waited for by events: each process's
// pidfd becomes readable when it exits.
TEST_F(CliTest, TheTreeOfAKilledCordonDiesWithIt) {
    std::string why;
    if (!cgroup_host_or(why)) CORDON_SKIP_OR_FAIL(why);
    struct path_case {
        std::vector<std::string> mode;
        const char* via_launcher;
    };
    const std::vector<std::string> landlock = {"--mode", "workspace-write", "--backend", "landlock",
                                               "--accept-partial"};
    for (const path_case& each : {path_case{{"--mode", "danger-full-access"}, "0"},
                                  path_case{landlock, "0"}, path_case{landlock, "1"}}) {
        SCOPED_TRACE(each.mode[1] + " via launcher " + each.via_launcher);
        std::vector<std::string> argv{cordon_path().string(), "run"};
        argv.insert(argv.end(), each.mode.begin(), each.mode.end());
        argv.insert(argv.end(), {"--workspace", workspace_.string(), "--",
                                 test_child_path().string(), "detached-tree", "60000"});
        spawned_process cordon(argv, {{"CORDON_LANDLOCK_VIA_LAUNCHER", each.via_launcher}});
        const bool started = cordon.wait_for_output("\n");
        std::istringstream said(cordon.out());
        std::string word;
        pid_t leader = 0;
        pid_t grandchild = 0;
        std::string tmpdir;
        said >> word >> leader >> grandchild >> tmpdir;
        ASSERT_TRUE(started && word == "PIDS") << cordon.out() << cordon.err();
        unique_fd leader_fd(static_cast<int>(::syscall(SYS_pidfd_open, leader, 0)));
        unique_fd grandchild_fd(static_cast<int>(::syscall(SYS_pidfd_open, grandchild, 0)));
        ASSERT_TRUE(leader_fd && grandchild_fd) << std::strerror(errno);
        // While its run lives the private /tmp is locked, and no other cordon sweeps it. (Once
        // this one is killed, any cordon making a private /tmp may: a concurrent test's too.)
        if (each.mode[1] == "workspace-write") {
            ASSERT_EQ(tmpdir.rfind("/tmp/cordon-tmp-", 0), 0U) << tmpdir;
            EXPECT_TRUE(fs::exists(tmpdir)) << "nothing left to sweep: the test proves nothing";
        }

        cordon.kill(SIGKILL);
        (void)cordon.wait();
        // A pidfd turns readable when its process exits (a generous bound: a failure, not a
        // wait, ends it).
        const auto exits = [](const unique_fd& fd) {
            pollfd exit{fd.get(), POLLIN, 0};
            return ::poll(&exit, 1, 20'000) == 1;
        };
        const bool leader_gone = exits(leader_fd);
        const bool grandchild_gone = exits(grandchild_fd);
        test::kill_if_alive(leader);
        test::kill_if_alive(grandchild);
        EXPECT_TRUE(leader_gone) << "the leader outlived the killed cordon";
        EXPECT_TRUE(grandchild_gone) << "the setsid() grandchild outlived the killed cordon";

        if (each.mode[1] == "workspace-write") {
            auto next =
                run_cordon({"run", "--mode", "workspace-write", "--backend", "landlock",
                            "--accept-partial", "--workspace", workspace_.string(), "--", "true"},
                           workspace_);
            EXPECT_EQ(next.exit_code, 0) << next.err;
            EXPECT_FALSE(fs::exists(tmpdir)) << "the killed cordon's private /tmp was left";
        }
    }
}

// A live cordon in another pid namespace shares the cgroup tree; its pid means nothing here, and
// its runs must not be taken for a dead cordon's leftovers.
TEST_F(CliTest, ALiveCordonInAnotherPidNamespaceIsLeftAlone) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create a pid namespace";
    std::string why;
    if (!cgroup_host_or(why)) CORDON_SKIP_OR_FAIL(why);
    const fs::path record = root_ / "record.json";
    // The inner run lasts until the test has run the reaper and creates this file.
    const fs::path release = root_ / "release";
    runtime::process_spec spec;
    // ns_last_pid makes the inner cordon's pid one that does not exist out here.
    spec.argv = {"unshare",
                 "-p",
                 "-f",
                 "--mount-proc",
                 "sh",
                 "-c",
                 "echo 99990 > /proc/sys/kernel/ns_last_pid; "
                 "\"$0\" run --json --mode danger-full-access -- sh -c "
                 "'for i in $(seq 600); do [ -e \"$0\" ] && exit 0; sleep 0.1; done; exit 1' "
                 "\"$2\" > \"$1\"",
                 cordon_path().string(),
                 record.string(),
                 release.string()};
    spec.env = runtime::build_environment(environ, {});
    spec.cwd = workspace_;
    spec.timeout = std::chrono::seconds(90);
    std::thread inner([&spec] { (void)runtime::run_process(std::move(spec)); });

    // The reaper must find the inner cordon's host, lock file included, or the test proves
    // nothing: wait for both (runtime/cgroup.cpp keeps the locks in this directory).
    const fs::path locks = "/dev/shm/cordon-cgroup-locks-" + std::to_string(::geteuid());
    std::optional<std::string> host;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!(host = live_cordon_host(record.string(), locks)) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::shared_ptr<runtime::cgroup_host> reaper;
    bool host_survived = false;
    if (host) {
        reaper = cgroup_host_or(why);  // reaps only what is provably dead
        if (reaper) host_survived = fs::exists(reaper->directory().parent_path() / *host);
    }
    std::ofstream(release).flush();
    inner.join();

    ASSERT_TRUE(host) << "the inner cordon's cgroup host and lock file never appeared";
    ASSERT_TRUE(reaper) << why;
    EXPECT_TRUE(host_survived) << "the reaper removed the live cordon's host " << *host;
    std::ifstream in(record);
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(in));
    EXPECT_EQ(doc["exitCode"], 0) << doc.dump();
    EXPECT_TRUE(doc["signal"].is_null()) << doc.dump();
}

TEST_F(CliTest, ConfinePrintsTheWrappedArgv) {
    auto r = run_cordon({"confine", "--mode", "workspace-write", "--workspace", workspace_.string(),
                         "--backend", "landlock", "--accept-partial", "--json", "--", "bash", "-c",
                         "echo 'a b'"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto argv = nlohmann::json::parse(r.out);
    ASSERT_TRUE(argv.is_array());
    EXPECT_EQ(argv[0], launcher_path().string());
    EXPECT_EQ(argv.back(), "echo 'a b'");
    auto text = run_cordon({"confine", "--mode", "read-only", "--backend", "landlock", "--", "bash",
                            "-c", "echo 'a b'"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("-- bash -c 'echo '\\''a b'\\'''"), std::string::npos) << text.out;
    // The argv names cordon's descriptors: stderr says it is not runnable as printed, which of
    // them it needs, and that cordon run runs it.
    for (const cli_result* printed : {&r, &text}) {
        EXPECT_NE(printed->err.find("cordon confine: not runnable as printed: it names descriptor"),
                  std::string::npos)
            << printed->err;
        EXPECT_NE(printed->err.find("`cordon run` with the same options runs it"),
                  std::string::npos)
            << printed->err;
        EXPECT_EQ(printed->err.find("not runnable as printed"),
                  printed->err.rfind("not runnable as printed"))
            << printed->err;
    }
}

TEST_F(CliTest, ProbeReportsEveryRung) {
    auto r = run_cordon({"probe", "--json"});
    auto doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["rungs"].size(), 2u);
    EXPECT_EQ(doc["rungs"][0]["backend"], "bwrap");
    EXPECT_EQ(doc["rungs"][1]["backend"], "landlock");
    if (real_backends_required()) {
        EXPECT_EQ(r.exit_code, 0);
        for (const auto& rung : doc["rungs"]) {
            EXPECT_EQ(rung["state"], "usable") << rung.dump();
        }
        // bwrap enforces fully; the Landlock rung names its one gap, the host's processes.
        EXPECT_EQ(doc["rungs"][0]["enforcement"], "full") << r.out;
        EXPECT_EQ(doc["rungs"][1]["enforcement"], "partial") << r.out;
        const auto& gaps = doc["rungs"][1]["modes"]["read-only"]["gaps"];
        ASSERT_EQ(gaps.size(), 1U) << r.out;
        EXPECT_NE(gaps[0].get<std::string>().find("no pid namespace"), std::string::npos);
        EXPECT_EQ(doc["selected"], "bwrap");
    }
    auto text = run_cordon({"probe"});
    EXPECT_NE(text.out.find("selected: "), std::string::npos);
    EXPECT_NE(text.out.find("verdict: probed ("), std::string::npos) << "probe always probes";
}

// `cordon probe` stores its verdict; the cordon after it runs without probing. The verdict file is
// shared with every other cordon on the host (other tests run in parallel, and a runner failure
// in one of them makes the next cordon probe again), so a few rounds are allowed.
TEST_F(CliTest, ARunAfterAProbeDoesNotProbeAgain) {
    for (const std::string& backend : {std::string("auto"), std::string("landlock")}) {
        SCOPED_TRACE(backend);
        bool cached = false;
        for (int round = 0; round < 5 && !cached; ++round) {
            auto probe = run_cordon({"probe", "--json", "--backend", backend});
            auto doc = nlohmann::json::parse(probe.out);
            EXPECT_EQ(doc["verdict"].get<std::string>().rfind("probed (", 0), 0u) << probe.out;
            auto run = run_cordon({"--verbose", "run", "--backend", backend, "-c", "echo ran"},
                                  workspace_);
            EXPECT_EQ(run.exit_code, 0) << run.err;
            EXPECT_EQ(run.out, "ran\n");
            cached = run.err.find("sandbox verdict: cached") != std::string::npos;
            if (cached) {
                EXPECT_EQ(run.err.find("probe "), std::string::npos) << run.err;
            }
        }
        EXPECT_TRUE(cached) << "every run probed again";
    }
}

}  // namespace
}  // namespace cordon::test
