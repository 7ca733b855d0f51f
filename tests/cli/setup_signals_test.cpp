// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Signals cannot make cordon lie (cli/start_signals.hpp, cli/run_command.cpp): a parent that
// ignores SIGCHLD or blocks SIGTERM passes that down through exec, and cordon must still give the
// run the enforcement it gives it otherwise and still end on SIGTERM; a SIGTERM at any moment of a
// run's set-up (before anything is made, while a rung is probed) ends in an `aborted` record,
// exit 128+15, with nothing left in /var/tmp or /tmp.
//
// cordon is started here by a small fork/exec of the test's own, in a mount namespace of its own
// (the test runs as root, as the real-backend suites do): /var/tmp and /tmp are directories of
// the test's, so that whatever cordon leaves there is seen once it is gone, and /dev/shm is an
// empty tmpfs, so that no cached verdict exists and cordon probes. A runner can be replaced there
// by cordon-test-child started under the runner's name, which never answers (tests/helper): the
// probe of that rung is seen in progress for as long as the test needs, with no race.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cordon/environment.hpp"
#include "real_backend.hpp"
#include "runtime/unique_fd.hpp"
#include "sandbox/runner_path.hpp"
#include "support.hpp"
#include "support/files.hpp"
#include "support/processes.hpp"

extern char** environ;

namespace cordon::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// What the parent passes down to cordon through exec.
struct parent_state {
    bool ignore_sigchld = false;
    bool block_interrupts = false;  // SIGTERM and SIGINT blocked
    bool term_pending = false;      // and a SIGTERM raised while blocked: pending at exec
};

// The mount namespace cordon runs in: /var/tmp and /tmp are `var_tmp` and `tmp`, /dev/shm is
// empty, and each of `fakes` (a runner's path) is cordon-test-child.
class isolated_host {
public:
    explicit isolated_host(std::vector<fs::path> fakes = {}) : fakes_(std::move(fakes)) {
        for (const temp_dir* dir : {&var_tmp_, &tmp_}) {
            fs::permissions(dir->path(), static_cast<fs::perms>(01777));
        }
        fs::create_directory(workspace_on_host());
    }
    // The workspace, where cordon sees it and where the test does.
    [[nodiscard]] static fs::path workspace() { return "/var/tmp/workspace"; }
    [[nodiscard]] fs::path workspace_on_host() const { return var_tmp_ / "workspace"; }
    [[nodiscard]] const fs::path& var_tmp() const { return var_tmp_.path(); }
    [[nodiscard]] const fs::path& tmp() const { return tmp_.path(); }
    [[nodiscard]] const std::vector<fs::path>& fakes() const { return fakes_; }

    // What is in /var/tmp and /tmp besides the workspace (and what the run put in it) and where
    // the test programs are bound (start_cordon).
    [[nodiscard]] std::vector<std::string> left() const {
        std::vector<std::string> out;
        for (const auto& [dir, covered] :
             {std::pair{var_tmp(), fs::path("/var/tmp")}, std::pair{tmp(), fs::path("/tmp")}}) {
            const std::string programs = programs_under(covered);
            for (const auto& entry : fs::directory_iterator(dir)) {
                if (entry.path() == workspace_on_host()) continue;
                if (!programs.empty() && entry.path() == dir / programs) continue;
                out.push_back(entry.path().string());
            }
        }
        return out;
    }

private:
    temp_dir var_tmp_{"/var/tmp"};
    temp_dir tmp_{"/var/tmp"};
    std::vector<fs::path> fakes_;
};

struct cordon_process {
    pid_t pid = -1;
    unique_fd out;
    unique_fd err;
};

struct cordon_ended {
    int exit_code = -1;  // -1: killed by a signal
    int signal = 0;
    std::string out;
    std::string err;
};

// Starts `cordon args...` in `host`'s namespace with `parent`'s signal state, `env` set over
// this process's environment.
cordon_process start_cordon(const std::vector<std::string>& args, const isolated_host& host,
                            parent_state parent,
                            const std::map<std::string, std::optional<std::string>>& env = {}) {
    // Everything the child uses is made before the fork: it only makes system calls.
    std::vector<std::string> words{cordon_path().string()};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& word : words)
        argv.push_back(word.data());
    argv.push_back(nullptr);
    std::vector<std::string> entries = runtime::build_environment(environ, env);
    std::vector<char*> envp;
    for (auto& entry : entries)
        envp.push_back(entry.data());
    envp.push_back(nullptr);
    // /tmp first: both sources are under the host's /var/tmp, which the second one covers. The
    // directory of the test programs is bound into each first (and the covering bind takes it
    // along): cordon is started from it.
    std::vector<std::pair<std::string, std::string>> binds;
    for (const auto& [own, covered] : {std::pair{host.tmp(), fs::path("/tmp")},
                                       std::pair{host.var_tmp(), fs::path("/var/tmp")}}) {
        if (const std::string programs = programs_under(covered); !programs.empty()) {
            fs::create_directories(own / programs);
            binds.emplace_back((covered / programs).string(), (own / programs).string());
        }
    }
    binds.emplace_back(host.tmp().string(), "/tmp");
    binds.emplace_back(host.var_tmp().string(), "/var/tmp");
    for (const fs::path& fake : host.fakes())
        binds.emplace_back(test_child_path().string(), fake.string());
    const std::string cwd = host.workspace().string();
    int out[2];
    int err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return {};
    unique_fd dev_null(::open("/dev/null", O_RDONLY | O_CLOEXEC));

    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::unshare(CLONE_NEWNS) != 0) ::_exit(120);
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(121);
        if (::mount("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777") != 0) ::_exit(122);
        for (const auto& [from, to] : binds) {
            if (::mount(from.c_str(), to.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
                ::_exit(123);
            }
        }
        if (::chdir(cwd.c_str()) != 0) ::_exit(124);
        if (::dup2(dev_null.get(), 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(err[1], 2) < 0) {
            ::_exit(125);
        }
        if (parent.ignore_sigchld) ::signal(SIGCHLD, SIG_IGN);
        sigset_t mask;
        ::sigemptyset(&mask);
        if (parent.block_interrupts) {
            ::sigaddset(&mask, SIGTERM);
            ::sigaddset(&mask, SIGINT);
        }
        ::sigprocmask(SIG_SETMASK, &mask, nullptr);
        if (parent.term_pending) ::kill(::getpid(), SIGTERM);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    cordon_process started;
    started.pid = pid;
    started.out.reset(out[0]);
    started.err.reset(err[0]);
    return started;
}

// Reads both streams to their end, then reaps cordon (killed if it takes over a minute).
cordon_ended finish(cordon_process& cordon) {
    cordon_ended ended;
    const auto until = std::chrono::steady_clock::now() + 60s;
    pollfd fds[2] = {{cordon.out.get(), POLLIN, 0}, {cordon.err.get(), POLLIN, 0}};
    std::string* into[2] = {&ended.out, &ended.err};
    bool killed = false;
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        if (!killed && std::chrono::steady_clock::now() > until) {
            ADD_FAILURE() << "cordon did not end within a minute";
            ::kill(cordon.pid, SIGKILL);
            killed = true;
        }
        if (::poll(fds, 2, 1000) < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buffer[4096];
            const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
            if (n > 0) {
                into[i]->append(buffer, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                fds[i].fd = -1;
            }
        }
    }
    int status = 0;
    while (::waitpid(cordon.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) ended.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) ended.signal = WTERMSIG(status);
    return ended;
}

// A child of `parent` whose argv[0] is `program`, once there is one (within 30 s).
std::optional<pid_t> wait_for_child(pid_t parent, const std::string& program) {
    const auto until = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < until) {
        for (const pid_t pid : all_pids()) {
            const auto stat = read_proc_stat(pid);
            if (!stat || stat->ppid != parent) continue;
            const auto cmdline = cmdline_of(pid);
            if (cmdline && cmdline->starts_with(program + " ")) return pid;
        }
        std::this_thread::sleep_for(2ms);
    }
    return std::nullopt;
}

nlohmann::json record_of(const cordon_ended& ended) {
    try {
        return nlohmann::json::parse(ended.out);
    } catch (const nlohmann::json::exception&) {
        ADD_FAILURE() << "no JSON record: " << ended.out << "\n" << ended.err;
        return {};
    }
}

void expect_aborted_before_start(const cordon_ended& ended) {
    EXPECT_EQ(ended.exit_code, 128 + SIGTERM) << ended.err;
    const nlohmann::json record = record_of(ended);
    EXPECT_EQ(record.value("outcome", ""), "aborted") << ended.out;
    EXPECT_EQ(record.value("aborted", false), true) << ended.out;
    EXPECT_TRUE(record["exitCode"].is_null()) << ended.out;
    EXPECT_TRUE(record["signal"].is_null()) << ended.out;
}

class SetupSignals : public ::testing::TestWithParam<real_backend> {
protected:
    void SetUp() override {
        if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("needs root for a mount namespace of its own");
    }
    [[nodiscard]] std::map<std::string, std::optional<std::string>> env() const {
        return {{"CORDON_LANDLOCK_VIA_LAUNCHER", landlock_in_child(GetParam()) ? "0" : "1"}};
    }
    [[nodiscard]] std::vector<std::string> run_args(std::vector<std::string> command) const {
        std::vector<std::string> args{"--verbose",
                                      "run",
                                      "--json",
                                      "--backend",
                                      std::string(backend_flag(GetParam())),
                                      "--mode",
                                      "workspace-write",
                                      "--"};
        args.insert(args.end(), command.begin(), command.end());
        return args;
    }
};

// A parent that ignores SIGCHLD (the kernel would reap what cordon spawns, probes included) and
// blocks SIGTERM and SIGINT: the run gets exactly the enforcement it gets from a parent that does
// neither, with its own exit status, after a real probe (no verdict was cached).
TEST_P(SetupSignals, AParentIgnoringSigchldChangesNothingOfTheRun) {
    const auto run = [&](parent_state parent) {
        isolated_host host;
        cordon_process cordon =
            start_cordon(run_args({"/bin/sh", "-c", "exit 3"}), host, parent, env());
        cordon_ended ended = finish(cordon);
        EXPECT_NE(ended.err.find("sandbox verdict: probed"), std::string::npos) << ended.err;
        EXPECT_TRUE(host.left().empty()) << testing::PrintToString(host.left());
        return ended;
    };
    const cordon_ended plain = run({});
    const cordon_ended ignoring = run({.ignore_sigchld = true, .block_interrupts = true});
    for (const cordon_ended* ended : {&plain, &ignoring}) {
        EXPECT_EQ(ended->exit_code, 3) << ended->out << ended->err;
        const nlohmann::json record = record_of(*ended);
        EXPECT_EQ(record.value("outcome", ""), "exited") << ended->out;
        EXPECT_EQ(record["sandbox"].value("backend", ""), backend_flag(GetParam())) << ended->out;
    }
    const nlohmann::json expected = record_of(plain)["sandbox"];
    const nlohmann::json got = record_of(ignoring)["sandbox"];
    EXPECT_EQ(got["enforcement"], expected["enforcement"]) << ignoring.out;
    EXPECT_EQ(got["policy"]["gaps"], expected["policy"]["gaps"]) << ignoring.out;
    // Under bwrap the Landlock wall inside is part of it: nothing is partial.
    if (GetParam() == real_backend::bwrap) EXPECT_EQ(got["enforcement"], "full") << ignoring.out;
}

// SIGTERM while the selected rung is being probed (its runner never answers here): the record
// says aborted, cordon exits 143, and the probe's workspace is gone with everything else.
TEST_P(SetupSignals, TermWhileProbingEndsInAnAbortedRecordAndLeavesNothing) {
    const bool bwrap = GetParam() == real_backend::bwrap;
    const fs::path runner = bwrap ? sandbox::find_trusted_executable("bwrap") : launcher_path();
    if (runner.empty()) CORDON_SKIP_OR_FAIL("no bwrap in a trusted directory");
    isolated_host host({runner});
    cordon_process cordon = start_cordon(run_args({"/bin/sh", "-c", "echo ran > ran"}), host,
                                         {.ignore_sigchld = true, .block_interrupts = true}, env());
    const std::optional<pid_t> probe = wait_for_child(cordon.pid, runner.string());
    if (!probe) {
        ::kill(cordon.pid, SIGKILL);
        const cordon_ended ended = finish(cordon);
        FAIL() << "no probe of " << runner << " seen: " << ended.err;
    }
    if (bwrap) {
        // bwrap's probe runs the profiles: the probe's workspace exists while it waits.
        bool workspace_seen = false;
        for (const auto& entry : fs::directory_iterator(host.var_tmp())) {
            if (entry.path().filename().string().starts_with("cordon-probe-")) {
                workspace_seen = true;
            }
        }
        EXPECT_TRUE(workspace_seen);
    }
    ASSERT_EQ(::kill(cordon.pid, SIGTERM), 0);
    // The probe's answer comes after the signal: the runner dies, cordon ends the run.
    ::kill(*probe, SIGKILL);
    const cordon_ended ended = finish(cordon);
    expect_aborted_before_start(ended);
    EXPECT_FALSE(fs::exists(host.workspace_on_host() / "ran")) << "the command ran";
    EXPECT_TRUE(host.left().empty()) << testing::PrintToString(host.left());
}

// A SIGTERM that is already pending when cordon starts (its parent blocked it and it came):
// cordon unblocks it and ends before it makes anything.
TEST_P(SetupSignals, TermPendingAtStartEndsTheRunBeforeAnythingIsMade) {
    isolated_host host;
    cordon_process cordon = start_cordon(
        run_args({"/bin/sh", "-c", "echo ran > ran"}), host,
        {.ignore_sigchld = true, .block_interrupts = true, .term_pending = true}, env());
    const cordon_ended ended = finish(cordon);
    expect_aborted_before_start(ended);
    EXPECT_EQ(ended.err.find("probe "), std::string::npos) << "it probed first: " << ended.err;
    EXPECT_FALSE(fs::exists(host.workspace_on_host() / "ran")) << "the command ran";
    EXPECT_TRUE(host.left().empty()) << testing::PrintToString(host.left());
}

// Started with SIGTERM blocked and SIGCHLD ignored, cordon still ends a running command on
// SIGTERM, and reports it as every cancelled run.
TEST_P(SetupSignals, ACordonStartedWithTermBlockedEndsItsRunOnTerm) {
    isolated_host host;
    cordon_process cordon =
        start_cordon(run_args({"/bin/sh", "-c", "echo ran > ran; exec sleep 60"}), host,
                     {.ignore_sigchld = true, .block_interrupts = true}, env());
    const fs::path ran = host.workspace_on_host() / "ran";
    const auto until = std::chrono::steady_clock::now() + 30s;
    while (!fs::exists(ran) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(5ms);
    ASSERT_TRUE(fs::exists(ran));
    ASSERT_EQ(::kill(cordon.pid, SIGTERM), 0);
    const cordon_ended ended = finish(cordon);
    EXPECT_EQ(ended.exit_code, 128 + SIGTERM) << ended.err;
    const nlohmann::json record = record_of(ended);
    EXPECT_EQ(record.value("outcome", ""), "aborted") << ended.out;
    EXPECT_LT(record.value("durationMs", 1e9), 30'000) << ended.out;
    EXPECT_TRUE(host.left().empty()) << testing::PrintToString(host.left());
}

INSTANTIATE_TEST_SUITE_P(Backends, SetupSignals, all_real_backends(), real_backend_name);

}  // namespace
}  // namespace cordon::test
