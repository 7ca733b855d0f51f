// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Protection as a new user meets it at the command line and through `cordon mcp`: many runs at
// once in one workspace, each with its protection, all succeeding and leaving nothing; a cordon
// killed in the middle of a run, whose leavings the next cordon judges; the everyday git of a
// fresh workspace; a workspace another user owns. Real processes on the real runners, every rung.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mcp/mcp_peer.hpp"
#include "real_backend.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"
#include "support/spawned_process.hpp"

namespace cordon::test::protection_tests {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int on_host(const fs::path& dir, const std::string& script) {
    const std::string command = "cd '" + dir.string() +
                                "' && GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent sh -c '" + script +
                                "' >/dev/null 2>&1";
    return std::system(command.c_str());
}

// Every entry beneath `root` whose inode changed since `since` (ctime), `.git`'s own bookkeeping
// (the index `git status` refreshes) left out: what runs left in the tree.
std::set<std::string> changed_since(const fs::path& root, const timespec& since) {
    std::set<std::string> out;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0) continue;
        const bool newer =
            st.st_ctim.tv_sec > since.tv_sec ||
            (st.st_ctim.tv_sec == since.tv_sec && st.st_ctim.tv_nsec >= since.tv_nsec);
        const std::string relative = it->path().lexically_relative(root).string();
        if (newer && !relative.starts_with(".git/") && !it->is_directory()) out.insert(relative);
    }
    return out;
}

class Protection : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(workspace_);
        fs::create_directories(home_);
        ASSERT_EQ(on_host(workspace_,
                          "git init -q . && git config user.email t@t && "
                          "git config user.name t && echo one > f && git add f && "
                          "git commit -qm one"),
                  0);
    }

    [[nodiscard]] std::map<std::string, std::optional<std::string>> env() const {
        return {{"HOME", home_.string()},
                {"GIT_CONFIG_NOSYSTEM", "1"},
                {"XDG_STATE_HOME", (scratch_ / "state").string()}};
    }

    cli_result cordon(std::vector<std::string> args, const fs::path& cwd = {}) const {
        return run_cordon(args, cwd.empty() ? workspace_ : cwd, {}, env());
    }

    temp_dir scratch_{"/var/tmp", "cordon-protection-"};
    fs::path workspace_ = scratch_ / "ws";
    fs::path home_ = scratch_ / "home";
};

// Fifty `cordon run` processes at once in one workspace, on each rung: every one succeeds with its
// protection whole, none is denied, and afterwards the tree holds nothing that a command did not
// make: `git status --ignored` is clean and no entry is newer than the runs.
TEST_F(Protection, FiftyRunsAtOnceInOneWorkspaceAllSucceedAndLeaveNothing) {
    for (const auto backend : {real_backend::bwrap, real_backend::landlock}) {
        SCOPED_TRACE(std::string(to_string(backend)));
        timespec before{};
        ::clock_gettime(CLOCK_REALTIME_COARSE, &before);
        constexpr std::size_t runs = 50;
        std::vector<cli_result> results(runs);
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < runs; ++i) {
            threads.emplace_back([&, i] {
                results[i] =
                    cordon({"run", "--json", "--backend", std::string(backend_flag(backend)),
                            "--mode", "workspace-write", "-c",
                            "ls -la >/dev/null && cat f && git log --oneline >/dev/null"});
            });
        }
        for (std::thread& thread : threads)
            thread.join();
        for (std::size_t i = 0; i < runs; ++i) {
            ASSERT_EQ(results[i].exit_code, 0) << i << ": " << results[i].err << results[i].out;
            const json record = json::parse(results[i].out);
            EXPECT_EQ(record["stdout"]["text"], "one\n");
            EXPECT_EQ(record["sandbox"]["denied"], false) << results[i].out;
        }
        EXPECT_EQ(on_host(workspace_, "test -z \"$(git status --porcelain --ignored)\""), 0);
        EXPECT_EQ(changed_since(workspace_, before), std::set<std::string>{});
    }
}

// Twenty jobs of one `cordon mcp` at work together in one workspace: all complete, none denied,
// and the tree holds what their commands made and nothing else.
TEST_F(Protection, TwentyMcpJobsAtOnceInOneWorkspace) {
    timespec before{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &before);
    const fs::path go = scratch_ / "go";
    mcp_peer peer(
        {"--mode", "workspace-write", "--workspace", workspace_.string(), "--max-jobs", "32"});
    peer.initialize();
    constexpr int jobs = 20;
    std::vector<std::string> ids;
    for (int i = 0; i < jobs; ++i) {
        const json started =
            peer.call(i + 1, "bash",
                      {{"command", "while [ ! -e '" + go.string() +
                                       "' ]; do sleep 0.01; done; "
                                       "git status --short >/dev/null; echo " +
                                       std::to_string(i) + " > out-" + std::to_string(i)},
                       {"run_in_background", true}});
        ids.push_back(started["structuredContent"]["job_id"].get<std::string>());
    }
    write_file(go, "");
    for (int i = 0; i < jobs; ++i) {
        json done;
        // Waited for in slices: a job_output call waits 30 s at most.
        for (int slice = 0; slice < 4; ++slice) {
            done = peer.call(100 + i * 10 + slice, "job_output",
                             {{"job_id", ids[static_cast<std::size_t>(i)]},
                              {"wait", "exit"},
                              {"timeout_ms", 30000}});
            if (done["structuredContent"]["status"] != "running") break;
        }
        const json& record = done["structuredContent"];
        EXPECT_EQ(record["status"], "completed") << done.dump();
        EXPECT_EQ(record["exitCode"], 0) << done.dump();
        EXPECT_FALSE(record["sandbox"].value("denied", false)) << done.dump();  // said when true
    }
    std::set<std::string> expected;
    for (int i = 0; i < jobs; ++i)
        expected.insert("out-" + std::to_string(i));
    EXPECT_EQ(changed_since(workspace_, before), expected);
    EXPECT_EQ(on_host(workspace_, "test -z \"$(git status --porcelain --ignored | grep -v out-)\""),
              0);
}

// A cordon killed in the middle of a run (SIGKILL: no chance to judge) leaves its window to the
// next cordon, which judges it before its own run: what the killed run planted is gone, and a
// `git status` on the host runs nothing.
TEST_F(Protection, ACordonKilledMidRunLeavesItsJudgementToTheNextOne) {
    if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("a /dev/shm of its own needs root (mount)");
    // The killed cordon and the next one share a /dev/shm of their own (a bind mount, each in a
    // mount namespace of its own), where the killed run's journal lies: no cordon of a suite
    // beside this one can take the window over first and report it in its own record.
    const fs::path shm = scratch_ / "shm";
    fs::create_directories(shm);
    fs::permissions(shm, fs::perms::all | fs::perms::sticky_bit);
    const auto with_own_shm = [&](std::vector<std::string> argv) {
        std::vector<std::string> out{"/usr/bin/unshare",
                                     "-m",
                                     "--propagation",
                                     "private",
                                     "/bin/sh",
                                     "-c",
                                     "mount --bind \"$0\" /dev/shm && exec \"$@\"",
                                     shm.string()};
        out.insert(out.end(), argv.begin(), argv.end());
        return out;
    };
    for (const auto backend : every_real_backend) {
        SCOPED_TRACE(std::string(to_string(backend)));
        scoped_backend_path on(backend);
        const fs::path marker = scratch_ / "ran-unconfined";
        std::map<std::string, std::string> overrides;
        for (const auto& [name, value] : env())
            overrides[name] = *value;
        spawned_process killed(
            with_own_shm(
                {cordon_path().string(), "run", "--backend", std::string(backend_flag(backend)),
                 "--mode", "workspace-write", "--workspace", workspace_.string(), "-c",
                 "git init -q sub && git -C sub config core.fsmonitor 'touch " + marker.string() +
                     "; false' && mkdir -p .vscode && echo {} > .vscode/tasks.json && "
                     "echo READY && sleep 60"}),
            overrides);
        ASSERT_TRUE(killed.wait_for_output("READY")) << killed.err();
        // The cordon itself (sh exec'd it): its run dies with it, its window unjudged.
        killed.kill(SIGKILL);
        (void)killed.wait();
        // The next cordon, whatever it runs, judges the window first and says so beside its own
        // record.
        const cli_result next =
            run_program(with_own_shm({cordon_path().string(), "run", "--json", "-c", "true"}),
                        workspace_, {}, env());
        EXPECT_EQ(next.exit_code, 0) << next.err;
        const json record = json::parse(next.out);
        EXPECT_EQ(record["sandbox"]["denied"], false) << "not this run's doing: " << next.out;
        EXPECT_NE(record["sandbox"]["policy"]["judged"]["abandoned"].dump().find(".vscode"),
                  std::string::npos)
            << next.out;
        EXPECT_FALSE(fs::exists(workspace_ / ".vscode")) << next.out;
        EXPECT_EQ(on_host(workspace_ / "sub", "git status"), 0);
        EXPECT_FALSE(fs::exists(marker)) << "the killed run's fsmonitor ran on the host";
        fs::remove_all(workspace_ / "sub");
    }
}

// The everyday git of a new project works inside, on every rung, and nothing is taken from what
// git and npm make: `git init`, a commit, a branch, a submodule, a linked worktree, a clone into
// the empty workspace, `npm init`. `ls -a` shows what is there, and nothing else.
TEST_F(Protection, EverydayWorkInAFreshWorkspaceTakesNothing) {
    const fs::path library = scratch_ / "library";
    ASSERT_EQ(on_host(scratch_.path(),
                      "git init -q library && cd library && git config user.email t@t "
                      "&& git config user.name t && echo lib > lib && git add lib && "
                      "git commit -qm lib"),
              0);
    for (const auto backend : every_real_backend) {
        SCOPED_TRACE(std::string(to_string(backend)));
        scoped_backend_path on(backend);
        const fs::path fresh = scratch_ / ("fresh-" + std::string(to_string(backend)));
        const fs::path cloned = scratch_ / ("cloned-" + std::string(to_string(backend)));
        fs::create_directories(fresh);
        fs::create_directories(cloned);
        const std::string identity =
            "export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t "
            "GIT_COMMITTER_EMAIL=t@t; ";
        cli_result made = cordon(
            {"run", "--json", "--backend", std::string(backend_flag(backend)), "--mode",
             "workspace-write", "-c",
             identity +
                 "set -e; ls -a; git init -q . && echo a > a && git add a && "
                 "git commit -qm one && git checkout -qb feature && "
                 "git -c protocol.file.allow=always submodule add -q " +
                 library.string() +
                 " lib && git commit -qm lib && git worktree add -q wt && "
                 "git -C wt commit -q --allow-empty -m in-worktree && npm init -y >/dev/null && "
                 "git status --short"},
            fresh);
        ASSERT_EQ(made.exit_code, 0) << made.err << made.out;
        json record = json::parse(made.out);
        EXPECT_EQ(record["stdout"]["text"].get<std::string>().substr(0, 5), ".\n..\n")
            << "ls -a in an empty workspace shows no phantom name: " << made.out;
        EXPECT_EQ(record["sandbox"]["denied"], false) << made.out;
        EXPECT_TRUE(record["sandbox"]["policy"]["judged"]["neutralized"].empty()) << made.out;
        EXPECT_EQ(on_host(fresh,
                          "git log --oneline feature | wc -l | grep -qx 2 && "
                          "git submodule status lib && git worktree list | grep -q wt"),
                  0);

        cli_result clone = cordon({"run", "--json", "--backend", std::string(backend_flag(backend)),
                                   "--mode", "workspace-write", "-c",
                                   "git clone -q " + library.string() + " . && git status --short"},
                                  cloned);
        ASSERT_EQ(clone.exit_code, 0) << clone.err << clone.out;
        record = json::parse(clone.out);
        EXPECT_TRUE(record["sandbox"]["policy"]["judged"]["neutralized"].empty()) << clone.out;
        EXPECT_EQ(read_file(cloned / "lib"), "lib\n");
    }
}

// A workspace another user owns (cordon as root, a user's checkout): the run starts, with the
// sandbox's own file permissions as the only bound, where it used to fail to make its masks.
TEST_F(Protection, AWorkspaceAnotherUserOwnsCanBeUsed) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: a workspace owned by another uid";
    const fs::path theirs = scratch_ / "theirs";
    fs::create_directories(theirs);
    write_file(theirs / "readme", "theirs\n");
    ASSERT_EQ(::chown(theirs.c_str(), 4242, 4242), 0);
    ASSERT_EQ(::chown((theirs / "readme").c_str(), 4242, 4242), 0);
    for (const auto backend : {real_backend::bwrap, real_backend::landlock}) {
        SCOPED_TRACE(std::string(to_string(backend)));
        const cli_result read = cordon({"run", "--backend", std::string(backend_flag(backend)),
                                        "--mode", "workspace-write", "-c", "cat readme"},
                                       theirs);
        EXPECT_EQ(read.exit_code, 0) << read.err;
        EXPECT_EQ(read.out, "theirs\n");
        fs::permissions(theirs, fs::perms::all);
        const cli_result wrote = cordon({"run", "--backend", std::string(backend_flag(backend)),
                                         "--mode", "workspace-write", "-c", "echo mine > made"},
                                        theirs);
        EXPECT_EQ(wrote.exit_code, 0) << wrote.err;
        EXPECT_EQ(read_file(theirs / "made"), "mine\n");
        fs::remove(theirs / "made");
        fs::permissions(theirs, fs::perms::owner_all | fs::perms::group_read |
                                    fs::perms::group_exec | fs::perms::others_read |
                                    fs::perms::others_exec);
    }
}

}  // namespace
}  // namespace cordon::test::protection_tests
