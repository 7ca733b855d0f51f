// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The judgement of what a workspace-write run left, part by part, without a sandbox: what changed
// (fanotify and the scan must find the same), what is taken and how (quarantine, rewrite, put
// back), that no step follows a symlink out of the tree, and the record of a window owed by a
// cordon that died. The same, end to end under the real runners, is in
// tests/backends/path_policy_test.cpp and tests/hostile/git_redirect_test.cpp.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/mountinfo.hpp"
#include "cordon/policy.hpp"
#include "sandbox/change_watch.hpp"
#include "sandbox/judgement.hpp"
#include "sandbox/kept_copies.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/quarantine.hpp"
#include "sandbox/run_journal.hpp"
#include "sandbox/run_judgement.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// When a window opens after everything made so far: the coarse clock (the inodes' times) read
// once it has moved past the change time of `newest`, a file just made. A tick is a few
// milliseconds; the bound only ends a test whose clock stands still.
timespec window_after(const fs::path& newest) {
    struct stat st {};
    if (::stat(newest.c_str(), &st) != 0) return {};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    timespec t{};
    do {
        ::clock_gettime(CLOCK_REALTIME_COARSE, &t);
        if (t.tv_sec > st.st_ctim.tv_sec ||
            (t.tv_sec == st.st_ctim.tv_sec && t.tv_nsec > st.st_ctim.tv_nsec)) {
            return t;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } while (std::chrono::steady_clock::now() < deadline);
    return t;
}

timespec now() {
    timespec t{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &t);
    return t;
}

int sh(const fs::path& dir, const std::string& script) {
    return std::system(("cd '" + dir.string() + "' && GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent " +
                        "sh -c '" + script + "' >/dev/null 2>&1")
                           .c_str());
}

std::set<fs::path> as_set(const std::vector<fs::path>& paths) {
    return {paths.begin(), paths.end()};
}

class Judgement : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(root_);
        fs::create_directories(away_home_);
        fs::create_directories(outside_);
        ASSERT_EQ(sh(root_, "git init -q . && git init -q nested"), 0);
        // Files to change in place, made before the window opens.
        test::write_file(root_ / "nested" / ".envrc", "original\n");
        fs::create_directories(root_ / "stash" / "inner");
        test::write_file(root_ / "stash" / "inner" / ".envrc", "old but moved\n");
        test::write_file(root_ / "plain.txt", "plain\n");
        fs::create_directories(root_ / "node_modules" / "pkg");
        test::write_file(base_ / "stamp", "");
        since_ = window_after(base_ / "stamp");
    }

    [[nodiscard]] judgement_scope scope() const {
        judgement_scope out;
        out.roots = {root_};
        out.names = default_protected_names();
        out.since = since_;
        return out;
    }

    // The run's doings: in place, created, renamed in, deep.
    void run_changes() {
        ASSERT_EQ(sh(root_,
                     "echo evil >> nested/.envrc; "
                     "git -C nested config core.fsmonitor \"touch x\"; "
                     "printf \"#!/bin/sh\\n\" > nested/.git/hooks/pre-commit; "
                     "mkdir -p sub/.vscode && echo {} > sub/.vscode/tasks.json; "
                     "mv stash moved; "
                     "mkdir -p node_modules/pkg/.vscode && git init -q node_modules/pkg/lib && "
                     "printf \"#!/bin/sh\\n\" > node_modules/pkg/lib/.git/hooks/pre-push; "
                     "echo x > plain2.txt; chmod +x plain.txt"),
                  0);
    }

    // Opens the window after everything made so far.
    void open_window() {
        test::write_file(base_ / "stamp", "");
        since_ = window_after(base_ / "stamp");
    }

    // What the scan finds since the window opened, judged: what was done, by path.
    std::map<std::string, neutralized_path> judge_scanned(const judgement_scope& within) {
        auto scanned = scan_changes(within.roots, within.since, interest_of(within.names));
        std::map<std::string, neutralized_path> out;
        if (!std::holds_alternative<change_set>(scanned)) {
            ADD_FAILURE() << std::get<std::string>(scanned);
            return out;
        }
        quarantine away(away_home_);
        for (neutralized_path& n :
             judge_changes(within, std::get<change_set>(scanned), away).neutralized)
            out[n.path] = std::move(n);
        return out;
    }
    std::map<std::string, neutralized_path> judge_scanned() { return judge_scanned(scope()); }

    test::temp_dir base_;
    fs::path root_ = base_ / "ws";
    fs::path away_home_ = base_ / "quarantine";
    fs::path outside_ = base_ / "outside";
    timespec since_{};
};

// fanotify and the scan find the same: every path the run created, changed in place or renamed
// in, and the directory it renamed in whole.
TEST_F(Judgement, TheWatchAndTheScanSeeTheSameChanges) {
    std::vector<base::mount_entry> mounts;
    auto opened = change_watch::open(std::vector<fs::path>{root_}, mounts, since_);
    if (auto* reason = std::get_if<std::string>(&opened)) CORDON_SKIP_OR_FAIL(*reason);
    auto watch = std::move(std::get<std::unique_ptr<change_watch>>(opened));
    run_changes();
    auto watched = watch->finish();
    ASSERT_TRUE(std::holds_alternative<change_set>(watched)) << std::get<std::string>(watched);
    const auto scope_names = default_protected_names();
    auto scanned = scan_changes(std::vector<fs::path>{root_}, since_, interest_of(scope_names));
    ASSERT_TRUE(std::holds_alternative<change_set>(scanned)) << std::get<std::string>(scanned);
    const change_set& a = std::get<change_set>(watched);
    const change_set& b = std::get<change_set>(scanned);
    for (const fs::path& expected :
         {root_ / "nested" / ".envrc", root_ / "nested" / ".git" / "config",
          root_ / "nested" / ".git" / "hooks" / "pre-commit",
          root_ / "sub" / ".vscode" / "tasks.json", root_ / "moved", root_ / "plain2.txt",
          root_ / "plain.txt",
          root_ / "node_modules" / "pkg" / "lib" / ".git" / "hooks" / "pre-push"}) {
        EXPECT_THAT(as_set(a.paths), Contains(expected)) << "fanotify";
        EXPECT_THAT(as_set(b.paths), Contains(expected)) << "scan";
    }
    EXPECT_THAT(as_set(a.moved), Contains(root_ / "moved"));
    EXPECT_THAT(as_set(b.moved), Contains(root_ / "moved"));
}

// What the judgement takes: the nested repository's hook and fsmonitor, the existing `.envrc`
// the run changed, the `.vscode` it made, the `.envrc` it moved into a new place; in
// node_modules only the git directory's hook. What it leaves: everything else.
TEST_F(Judgement, TakesWhatWouldRunAndLeavesTheRest) {
    run_changes();
    auto scanned =
        scan_changes(std::vector<fs::path>{root_}, since_, interest_of(default_protected_names()));
    ASSERT_TRUE(std::holds_alternative<change_set>(scanned));
    quarantine away(away_home_);
    const auto taken = judge_changes(scope(), std::get<change_set>(scanned), away).neutralized;
    std::map<std::string, neutralized_path> by_path;
    for (const auto& t : taken)
        by_path[t.path] = t;
    const auto action_of = [&](const fs::path& path) -> std::optional<neutral_action> {
        auto found = by_path.find(path.string());
        if (found == by_path.end()) return std::nullopt;
        return found->second.action;
    };
    EXPECT_EQ(action_of(root_ / "nested" / ".git" / "hooks" / "pre-commit"),
              neutral_action::quarantined);
    EXPECT_EQ(action_of(root_ / "nested" / ".git" / "config"), neutral_action::rewritten);
    EXPECT_EQ(action_of(root_ / "nested" / ".envrc"), neutral_action::quarantined);
    EXPECT_EQ(action_of(root_ / "sub" / ".vscode"), neutral_action::quarantined);
    EXPECT_EQ(action_of(root_ / "moved" / "inner" / ".envrc"), neutral_action::quarantined);
    EXPECT_EQ(action_of(root_ / "node_modules" / "pkg" / "lib" / ".git" / "hooks" / "pre-push"),
              neutral_action::quarantined);
    EXPECT_EQ(action_of(root_ / "node_modules" / "pkg" / ".vscode"), std::nullopt);
    EXPECT_EQ(taken.size(), 6U);
    // The rewritten configuration keeps what is inert, is still the file it was, and reads.
    const std::string config = test::read_file(root_ / "nested" / ".git" / "config");
    EXPECT_THAT(config, Not(HasSubstr("fsmonitor")));
    EXPECT_THAT(config, HasSubstr("repositoryformatversion"));
    EXPECT_EQ(sh(root_ / "nested", "git status"), 0);
    // Each original is in the quarantine, beneath the root's own name, and the manifest says why.
    for (const auto& t : taken) {
        ASSERT_FALSE(t.kept_at.empty()) << t.path;
        EXPECT_TRUE(fs::exists(t.kept_at)) << t.kept_at;
        EXPECT_TRUE(t.kept_at.starts_with((away_home_ / "").string())) << t.kept_at;
    }
    EXPECT_THAT(test::read_file(by_path[(root_ / "nested" / ".git" / "config").string()].kept_at),
                HasSubstr("fsmonitor"));
    EXPECT_EQ(test::read_file(root_ / "plain.txt"), "plain\n");
    EXPECT_TRUE(fs::exists(root_ / "plain2.txt"));
    EXPECT_TRUE(fs::exists(root_ / "node_modules" / "pkg" / ".vscode"));
    EXPECT_THAT(test::read_file(away.directory() / "manifest"), HasSubstr("pre-commit"));
}

// What git makes itself has nothing to take: a repository from `git init`, a clone, a submodule
// added, a linked worktree, with git's own hook samples.
TEST_F(Judgement, WhatGitMakesItselfIsLeftAlone) {
    ASSERT_EQ(sh(root_,
                 "git config user.email t@t && git config user.name t && "
                 "git commit -q --allow-empty -m one"),
              0);
    test::write_file(base_ / "stamp", "");
    since_ = window_after(base_ / "stamp");
    ASSERT_EQ(sh(root_,
                 "git init -q fresh && git clone -q . cloned && "
                 "git -c protocol.file.allow=always submodule add -q ./cloned sub && "
                 "git worktree add -q wt && git -C wt commit -q --allow-empty -m two"),
              0);
    auto scanned =
        scan_changes(std::vector<fs::path>{root_}, since_, interest_of(default_protected_names()));
    ASSERT_TRUE(std::holds_alternative<change_set>(scanned));
    quarantine away(away_home_);
    const auto taken = judge_changes(scope(), std::get<change_set>(scanned), away).neutralized;
    for (const auto& t : taken)
        ADD_FAILURE() << to_string(t.action) << " " << t.path << ": " << t.what;
}

// A git directory planted over two runs: the first leaves a configuration and a hook where there
// is no git directory yet (nothing to judge then), the second makes it one. The second's judgement
// takes what the first left, which it did not change itself.
TEST_F(Judgement, AGitDirectoryMadeOverTwoRunsIsJudgedWhenItBecomesOne) {
    ASSERT_EQ(sh(root_,
                 "mkdir -p x/hooks sub && printf \"[core]\\n\\tfsmonitor = touch y\\n\" > "
                 "x/config && printf \"#!/bin/sh\\n\" > x/hooks/pre-commit && "
                 "echo gitdir: ../x > sub/.git"),
              0);
    quarantine away(away_home_);
    auto first =
        scan_changes(std::vector<fs::path>{root_}, since_, interest_of(default_protected_names()));
    EXPECT_TRUE(judge_changes(scope(), std::get<change_set>(first), away).neutralized.empty());
    test::write_file(base_ / "stamp2", "");
    since_ = window_after(base_ / "stamp2");
    ASSERT_EQ(sh(root_, "mkdir x/objects x/refs && echo ref: refs/heads/main > x/HEAD"), 0);
    auto second =
        scan_changes(std::vector<fs::path>{root_}, since_, interest_of(default_protected_names()));
    std::set<std::string> taken;
    for (const auto& t : judge_changes(scope(), std::get<change_set>(second), away).neutralized)
        taken.insert(t.path);
    EXPECT_THAT(taken, Contains((root_ / "x" / "config").string()));
    EXPECT_THAT(taken, Contains((root_ / "x" / "hooks" / "pre-commit").string()));
    EXPECT_THAT(test::read_file(root_ / "x" / "config"), Not(HasSubstr("fsmonitor")));
}

// core.worktree sends git's checkouts to another directory: one that leads out of the writable
// roots is taken out; a submodule's, into its superproject's tree, stays.
TEST_F(Judgement, ACoreWorktreeLeadingOutOfTheRootsIsTakenOut) {
    ASSERT_EQ(sh(root_,
                 "git init -q a && git init -q b && git -C a config core.worktree /etc && "
                 "git -C b config core.worktree ../../b"),
              0);
    auto scanned =
        scan_changes(std::vector<fs::path>{root_}, since_, interest_of(default_protected_names()));
    quarantine away(away_home_);
    const auto taken = judge_changes(scope(), std::get<change_set>(scanned), away).neutralized;
    ASSERT_EQ(taken.size(), 1U);
    EXPECT_EQ(taken[0].path, (root_ / "a" / ".git" / "config").string());
    EXPECT_EQ(taken[0].action, neutral_action::rewritten);
    EXPECT_THAT(test::read_file(root_ / "a" / ".git" / "config"), Not(HasSubstr("worktree")));
    EXPECT_THAT(test::read_file(root_ / "b" / ".git" / "config"), HasSubstr("worktree"));
}

// A hook is let stay when it is the template's own; a template in a writable root, which the run
// could have written to match, vouches for nothing.
TEST_F(Judgement, ATemplateTheRunCouldWriteVouchesForNothing) {
    const fs::path home = base_ / "home";
    fs::create_directories(home);
    test::write_file(home / ".gitconfig",
                     "[init]\n\ttemplateDir = " + (root_ / "tpl").string() + "\n");
    test::scoped_env user_home("HOME", home.string());
    ASSERT_EQ(sh(root_,
                 "mkdir -p tpl/hooks && printf \"#!/bin/sh\\n\" > tpl/hooks/pre-commit && "
                 "cp tpl/hooks/pre-commit nested/.git/hooks/pre-commit"),
              0);
    auto scanned =
        scan_changes(std::vector<fs::path>{root_}, since_, interest_of(default_protected_names()));
    quarantine away(away_home_);
    const auto taken = judge_changes(scope(), std::get<change_set>(scanned), away).neutralized;
    ASSERT_EQ(taken.size(), 1U);
    EXPECT_EQ(taken[0].path, (root_ / "nested" / ".git" / "hooks" / "pre-commit").string());
}

// A path kept for the run (bound read-only, or put back from a copy) is never judged.
TEST_F(Judgement, KeptPathsAreNotJudged) {
    run_changes();
    auto scanned =
        scan_changes(std::vector<fs::path>{root_}, since_, interest_of(default_protected_names()));
    judgement_scope kept = scope();
    kept.kept = {root_ / "nested" / ".git" / "config", root_ / "sub"};
    quarantine away(away_home_);
    const auto taken = judge_changes(kept, std::get<change_set>(scanned), away).neutralized;
    for (const auto& t : taken) {
        EXPECT_NE(t.path, (root_ / "nested" / ".git" / "config").string());
        EXPECT_FALSE(t.path.starts_with((root_ / "sub").string())) << t.path;
    }
}

// No step follows a symlink the run left: a hooks directory that is a link to a directory outside
// goes as the link, and what it leads to stays untouched; a parent replaced by a link makes the
// step fail, never act elsewhere.
TEST_F(Judgement, NothingFollowsASymlinkOutOfTheTree) {
    test::write_file(outside_ / "victim", "keep me\n");
    ASSERT_EQ(
        sh(root_, "git init -q evil && rm -rf evil/.git/hooks && ln -s '" + outside_.string() +
                      "' evil/.git/hooks && mkdir real && printf x > real/.envrc"),
        0);
    change_set changes;
    changes.paths = {root_ / "evil" / ".git" / "hooks", root_ / "real" / ".envrc"};
    // The parent of .envrc becomes a link to outside between the finding and the taking.
    fs::rename(root_ / "real", root_ / "real.moved");
    fs::create_directory_symlink(outside_, root_ / "real");
    test::write_file(outside_ / ".envrc", "outside's own\n");
    quarantine away(away_home_);
    const auto taken = judge_changes(scope(), changes, away).neutralized;
    EXPECT_EQ(test::read_file(outside_ / "victim"), "keep me\n");
    EXPECT_EQ(test::read_file(outside_ / ".envrc"), "outside's own\n");
    EXPECT_FALSE(fs::exists(fs::symlink_status(root_ / "evil" / ".git" / "hooks")));
    ASSERT_FALSE(taken.empty());
    EXPECT_EQ(taken.front().path, (root_ / "evil" / ".git" / "hooks").string());
}

// Across filesystems (the quarantine on a tmpfs, the tree on disk) the original is copied, then
// removed; without a quarantine home it is removed.
TEST_F(Judgement, AQuarantineElsewhereCopiesAndNoneRemoves) {
    ASSERT_EQ(
        sh(root_, "mkdir -p a/.claude && echo x > a/.claude/settings.json && echo y > a/.envrc"),
        0);
    test::temp_dir shm("/dev/shm", "cordon-quarantine-test-");
    quarantine elsewhere(shm.path());
    change_set changes;
    changes.paths = {root_ / "a" / ".claude"};
    auto taken = judge_changes(scope(), changes, elsewhere).neutralized;
    ASSERT_EQ(taken.size(), 1U);
    EXPECT_EQ(taken[0].action, neutral_action::quarantined);
    EXPECT_EQ(test::read_file(fs::path(taken[0].kept_at) / "settings.json"), "x\n");
    EXPECT_FALSE(fs::exists(root_ / "a" / ".claude"));
    quarantine nowhere({});
    changes.paths = {root_ / "a" / ".envrc"};
    taken = judge_changes(scope(), changes, nowhere).neutralized;
    ASSERT_EQ(taken.size(), 1U);
    EXPECT_EQ(taken[0].action, neutral_action::removed);
    EXPECT_FALSE(fs::exists(root_ / "a" / ".envrc"));
}

// The Landlock rung's copies: put back as they were, the changed state quarantined; untouched
// copies cost nothing.
TEST_F(Judgement, KeptCopiesArePutBack) {
    ASSERT_EQ(sh(root_,
                 "mkdir -p .vscode && echo settings > .vscode/settings.json && "
                 "echo rc > .envrc && ln -s target .link"),
              0);
    const std::vector<fs::path> paths{root_ / ".vscode", root_ / ".envrc", root_ / ".link",
                                      root_ / ".git" / "hooks"};
    const kept_copies copies = kept_copies::take(paths, std::vector<fs::path>{root_});
    EXPECT_EQ(copies.covered().size(), 4U);
    quarantine away(away_home_);
    EXPECT_TRUE(copies.restore(away).empty()) << "nothing changed";
    ASSERT_EQ(sh(root_,
                 "echo evil > .vscode/tasks.json && echo evil > .envrc && rm .link && "
                 "ln -s elsewhere .link && rm -rf .git/hooks && echo x > .git/hooks"),
              0);
    const auto restored = copies.restore(away);
    EXPECT_EQ(restored.size(), 4U);
    for (const auto& r : restored)
        EXPECT_EQ(r.action, neutral_action::restored) << r.path << ": " << r.what;
    EXPECT_EQ(test::read_file(root_ / ".envrc"), "rc\n");
    EXPECT_FALSE(fs::exists(root_ / ".vscode" / "tasks.json"));
    EXPECT_EQ(test::read_file(root_ / ".vscode" / "settings.json"), "settings\n");
    EXPECT_EQ(fs::read_symlink(root_ / ".link"), "target");
    EXPECT_TRUE(fs::is_directory(root_ / ".git" / "hooks"));
    EXPECT_TRUE(copies.restore(away).empty()) << "put back: nothing left to do";
}

// Whatever git takes for a git directory is judged as one: a linked worktree's common directory
// (no HEAD of its own), one whose objects and refs are symlinks, and a `hooks` made to look like a
// git directory inside a real one, which hides nothing from the outer one.
TEST_F(Judgement, EveryDirectoryGitTakesForAGitDirectoryIsJudgedAsOne) {
    ASSERT_EQ(sh(root_,
                 "mkdir -p store/objects store/refs/heads store/hooks store/worktrees/w wt && "
                 "printf \"[core]\\n\\tfsmonitor = touch x\\n\" > store/config && "
                 "printf \"#!/bin/sh\\n\" > store/hooks/pre-commit && "
                 "echo ref: refs/heads/main > store/worktrees/w/HEAD && "
                 "echo ../.. > store/worktrees/w/commondir && "
                 "echo gitdir: $PWD/store/worktrees/w > wt/.git && "
                 "mkdir -p linked/realobj linked/realrefs && ln -s realobj linked/objects && "
                 "ln -s realrefs linked/refs && echo ref: refs/heads/main > linked/HEAD && "
                 "printf \"[core]\\n\\tfsmonitor = touch y\\n\" > linked/config && "
                 "mkdir nested/.git/hooks/objects nested/.git/hooks/refs && "
                 "echo ref: refs/heads/main > nested/.git/hooks/HEAD && "
                 "printf \"#!/bin/sh\\n\" > nested/.git/hooks/pre-commit"),
              0);
    const auto taken = judge_scanned();
    const auto action_of = [&taken](const fs::path& path) -> std::optional<neutral_action> {
        auto found = taken.find(path.string());
        if (found == taken.end()) return std::nullopt;
        return found->second.action;
    };
    EXPECT_EQ(action_of(root_ / "store" / "config"), neutral_action::rewritten);
    EXPECT_EQ(action_of(root_ / "store" / "hooks" / "pre-commit"), neutral_action::quarantined);
    EXPECT_EQ(action_of(root_ / "linked" / "config"), neutral_action::rewritten);
    EXPECT_EQ(action_of(root_ / "nested" / ".git" / "hooks" / "pre-commit"),
              neutral_action::quarantined);
    EXPECT_THAT(test::read_file(root_ / "store" / "config"), Not(HasSubstr("fsmonitor")));
    EXPECT_EQ(sh(root_ / "wt", "git status"), 0) << "the worktree still works";
}

// What a repository obeys beyond its own git directory: where its core.hooksPath leads, what its
// symlinked hooks lead to, the files its configuration includes, and where the user's own relative
// core.hooksPath leads in a repository without one. What the run wrote there is judged; the
// user's hook that was there before stays.
TEST_F(Judgement, WhatARepositoryObeysBeyondItsGitDirectoryIsJudged) {
    const fs::path home = base_ / "home";
    fs::create_directories(home);
    test::write_file(home / ".gitconfig", "[core]\n\thooksPath = .hooks\n");
    test::scoped_env user_home("HOME", home.string());
    ASSERT_EQ(sh(root_,
                 "git -C nested config core.hooksPath .githooks && "
                 "mkdir nested/.githooks nested/scripts && "
                 "printf \"#!/bin/sh\\n\" > nested/.githooks/pre-commit && "
                 "printf \"#!/bin/sh\\n\" > nested/scripts/hook.sh && "
                 "ln -s ../scripts/hook.sh nested/.githooks/pre-push && "
                 "printf \"[user]\\n\\tname = x\\n\" > nested/shared.inc && "
                 "git -C nested config include.path ../shared.inc && git init -q other && "
                 "mkdir other/.hooks"),
              0);
    open_window();
    std::vector<base::mount_entry> mounts;
    auto watch = change_watch::open(std::vector<fs::path>{root_}, mounts, since_);
    ASSERT_EQ(sh(root_,
                 "printf \"#!/bin/sh\\n\" > nested/.githooks/post-checkout && "
                 "echo evil >> nested/scripts/hook.sh && "
                 "printf \"[core]\\n\\tfsmonitor = touch z\\n\" >> nested/shared.inc && "
                 "printf \"#!/bin/sh\\n\" > other/.hooks/pre-commit"),
              0);
    const std::vector<fs::path> written{
        root_ / "nested" / ".githooks" / "post-checkout", root_ / "nested" / "scripts" / "hook.sh",
        root_ / "nested" / "shared.inc", root_ / "other" / ".hooks" / "pre-commit"};
    if (auto* opened = std::get_if<std::unique_ptr<change_watch>>(&watch)) {
        auto seen = (*opened)->finish();
        ASSERT_TRUE(std::holds_alternative<change_set>(seen)) << std::get<std::string>(seen);
        for (const fs::path& path : written)
            EXPECT_THAT(as_set(std::get<change_set>(seen).paths), Contains(path)) << "fanotify";
    }
    const auto taken = judge_scanned();
    std::set<std::string> paths;
    for (const auto& [path, what] : taken)
        paths.insert(path);
    EXPECT_THAT(paths, Contains((root_ / "nested" / ".githooks" / "post-checkout").string()));
    EXPECT_THAT(paths, Contains((root_ / "nested" / "scripts" / "hook.sh").string()));
    EXPECT_THAT(paths, Contains((root_ / "nested" / "shared.inc").string()));
    EXPECT_THAT(paths, Contains((root_ / "other" / ".hooks" / "pre-commit").string()));
    EXPECT_THAT(paths, Not(Contains((root_ / "nested" / ".githooks" / "pre-commit").string())))
        << "the user's own hook, there before the run";
    EXPECT_THAT(test::read_file(root_ / "nested" / "shared.inc"), Not(HasSubstr("fsmonitor")));
}

// A file of several names written under one: fanotify names only that one, so the watch gives
// way to the scan, which finds the others by their change time. A configuration so linked gets a
// file of its own, and what is written through the other name later reaches it no more; a hook
// so linked is taken.
TEST_F(Judgement, AFileOfSeveralNamesIsJudgedWhereverItIsWritten) {
    ASSERT_EQ(sh(root_, "printf \"#!/bin/sh\\n\" > nested/.git/hooks/pre-commit"), 0);
    open_window();
    std::vector<base::mount_entry> mounts;
    auto opened = change_watch::open(std::vector<fs::path>{root_}, mounts, since_);
    ASSERT_EQ(sh(root_,
                 "mkdir junk && ln nested/.git/config junk/notes.txt && "
                 "ln nested/.git/hooks/pre-commit junk/hook"),
              0);
    if (auto* watch = std::get_if<std::unique_ptr<change_watch>>(&opened)) {
        auto seen = (*watch)->finish();
        ASSERT_TRUE(std::holds_alternative<std::string>(seen)) << "the watch cannot tell";
        EXPECT_THAT(std::get<std::string>(seen), HasSubstr("several names"));
    }
    const auto taken = judge_scanned();
    ASSERT_TRUE(taken.contains((root_ / "nested" / ".git" / "config").string()));
    EXPECT_EQ(taken.at((root_ / "nested" / ".git" / "config").string()).action,
              neutral_action::rewritten);
    ASSERT_TRUE(taken.contains((root_ / "nested" / ".git" / "hooks" / "pre-commit").string()));
    ASSERT_EQ(sh(root_, "printf \"[core]\\n\\tfsmonitor = touch x\\n\" >> junk/notes.txt"), 0);
    EXPECT_THAT(test::read_file(root_ / "nested" / ".git" / "config"), Not(HasSubstr("fsmonitor")));
    EXPECT_EQ(fs::hard_link_count(root_ / "nested" / ".git" / "config"), 1U);
}

// The watch marks a whole filesystem, and other processes share it: what they do outside the
// places the run may write is not the run's, not even a file of several names (a local `git
// clone`, a package store), which would have made the watch give way to the scan. A file given a
// second name where the run may write beside the roots (the Landlock rung's private /tmp) still
// does: it may have another beneath them.
TEST_F(Judgement, OnlyWhereTheRunMayWriteIsWatched) {
    const fs::path tmp = base_ / "private-tmp";
    fs::create_directories(tmp);
    const std::vector<fs::path> elsewhere{tmp};
    open_window();
    std::vector<base::mount_entry> mounts;
    auto opened = change_watch::open(std::vector<fs::path>{root_}, mounts, since_, elsewhere);
    if (auto* reason = std::get_if<std::string>(&opened)) CORDON_SKIP_OR_FAIL(*reason);
    ASSERT_EQ(sh(outside_,
                 "echo one > shared && ln shared linked && echo two >> linked && "
                 "mkdir -p store/pkg && ln shared store/pkg/file"),
              0);
    ASSERT_EQ(sh(root_, "echo changed >> plain.txt"), 0);
    auto seen = std::get<std::unique_ptr<change_watch>>(opened)->finish();
    ASSERT_TRUE(std::holds_alternative<change_set>(seen)) << std::get<std::string>(seen);
    const std::vector<fs::path>& paths = std::get<change_set>(seen).paths;
    EXPECT_THAT(as_set(paths), Contains(root_ / "plain.txt"));
    for (const fs::path& path : paths)
        EXPECT_TRUE(is_within(path, root_)) << path << " is another process's";

    open_window();
    opened = change_watch::open(std::vector<fs::path>{root_}, mounts, since_, elsewhere);
    if (auto* reason = std::get_if<std::string>(&opened)) CORDON_SKIP_OR_FAIL(*reason);
    ASSERT_EQ(sh(tmp, "ln " + (root_ / "nested" / ".git" / "config").string() +
                          " notes && echo '[core] fsmonitor = x' >> notes"),
              0);
    seen = std::get<std::unique_ptr<change_watch>>(opened)->finish();
    ASSERT_TRUE(std::holds_alternative<std::string>(seen)) << "the watch cannot tell";
    EXPECT_THAT(std::get<std::string>(seen), HasSubstr("several names"));
}

// A write through a shared mapping raises no FAN_MODIFY; the file was opened, and its change time
// moved. So even when its closing comes after the run (the file sent over a unix socket to
// itself and left there), the watch has it.
TEST_F(Judgement, AWriteThroughASharedMappingIsSeen) {
    std::vector<base::mount_entry> mounts;
    auto opened = change_watch::open(std::vector<fs::path>{root_}, mounts, since_);
    if (auto* reason = std::get_if<std::string>(&opened)) CORDON_SKIP_OR_FAIL(*reason);
    auto watch = std::move(std::get<std::unique_ptr<change_watch>>(opened));
    const fs::path config = root_ / "nested" / ".git" / "config";
    {
        const int fd = ::open(config.c_str(), O_RDWR | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        struct stat st {};
        ASSERT_EQ(::fstat(fd, &st), 0);
        const auto size = static_cast<std::size_t>(st.st_size);
        void* mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ASSERT_NE(mapped, MAP_FAILED);
        const std::string text = "[core]\n\tfsmonitor = x\n";
        ASSERT_LE(text.size(), size);
        std::memset(mapped, '\n', size);
        std::memcpy(mapped, text.data(), text.size());
        ::munmap(mapped, size);
        // The file stays open, unreferenced, in a loop of unix sockets: no FAN_CLOSE_WRITE until
        // the kernel collects it.
        int pair[2];
        ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
        const int sent[3] = {fd, pair[0], pair[1]};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof sent)] = {};
        char byte = 'x';
        iovec io{&byte, 1};
        msghdr message{};
        message.msg_iov = &io;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof sent);
        std::memcpy(CMSG_DATA(header), sent, sizeof sent);
        ASSERT_EQ(::sendmsg(pair[0], &message, 0), 1);
        ::close(pair[0]);
        ::close(pair[1]);
        ::close(fd);
    }
    auto seen = watch->finish();
    ASSERT_TRUE(std::holds_alternative<change_set>(seen)) << std::get<std::string>(seen);
    EXPECT_THAT(as_set(std::get<change_set>(seen).paths), Contains(config));
}

// A directory whose mode changed changes its inode's time and not its entries, as one renamed in
// does; where the scan saw it at that very place before, it was not moved, and what it holds is
// not new.
TEST_F(Judgement, ADirectoryWhoseModeChangedWasNotMoved) {
    ASSERT_EQ(sh(root_, "mkdir -p keep/.vscode && echo {} > keep/.vscode/settings.json"), 0);
    (void)scan_changes(std::vector<fs::path>{root_}, now(), interest_of(default_protected_names()));
    open_window();
    ASSERT_EQ(sh(root_, "chmod g+w keep"), 0);
    const auto taken = judge_scanned();
    for (const auto& [path, what] : taken)
        ADD_FAILURE() << to_string(what.action) << " " << path << ": " << what.what;
    EXPECT_TRUE(fs::exists(root_ / "keep" / ".vscode" / "settings.json"));
}

// A tree a thousand levels deep, renamed in, is judged to its bottom.
TEST_F(Judgement, ATreeAThousandLevelsDeepIsJudgedToItsBottom) {
    std::string deep = "stash";
    for (int i = 0; i < 1000; ++i)
        deep += "/a";
    ASSERT_EQ(sh(root_, "mkdir -p " + deep + " && git init -q " + deep +
                            "/r && printf \"#!/bin/sh\\n\" > " + deep +
                            "/r/.git/hooks/pre-commit && echo x > " + deep + "/.envrc"),
              0);
    open_window();
    ASSERT_EQ(sh(root_, "mv stash moved"), 0);
    const auto taken = judge_scanned();
    const std::string bottom = (root_ / "moved").string() + deep.substr(5);
    EXPECT_TRUE(taken.contains(bottom + "/r/.git/hooks/pre-commit"));
    EXPECT_TRUE(taken.contains(bottom + "/.envrc"));
}

// A directory no path can name (deeper than PATH_MAX) that the run made: what it holds cannot be
// judged by path, so it goes whole, found by the watch and by the scan alike.
TEST_F(Judgement, ADirectoryNoPathCanNameIsTakenWhole) {
    std::vector<base::mount_entry> mounts;
    auto opened = change_watch::open(std::vector<fs::path>{root_}, mounts, since_);
    {
        fs::create_directory(root_ / "far");
        const std::string name(250, 'd');
        int at = ::open((root_ / "far").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        for (int level = 0; level < 18 && at >= 0; ++level) {
            ASSERT_EQ(::mkdirat(at, name.c_str(), 0755), 0);
            const int next = ::openat(at, name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
            ::close(at);
            at = next;
        }
        ASSERT_GE(at, 0);
        const int file = ::openat(at, ".envrc", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_GE(file, 0);
        ::close(file);
        ::close(at);
    }
    if (auto* watch = std::get_if<std::unique_ptr<change_watch>>(&opened)) {
        auto seen = (*watch)->finish();
        ASSERT_TRUE(std::holds_alternative<change_set>(seen)) << std::get<std::string>(seen);
        EXPECT_FALSE(std::get<change_set>(seen).unnameable.empty()) << "fanotify";
    }
    auto scanned =
        scan_changes(std::vector<fs::path>{root_}, since_, interest_of(default_protected_names()));
    ASSERT_TRUE(std::holds_alternative<change_set>(scanned));
    EXPECT_FALSE(std::get<change_set>(scanned).unnameable.empty()) << "scan";
    quarantine away(away_home_);
    const auto taken = judge_changes(scope(), std::get<change_set>(scanned), away).neutralized;
    ASSERT_FALSE(taken.empty());
    EXPECT_THAT(taken.front().what, HasSubstr("deeper than a path can name"));
    EXPECT_NE(taken.front().action, neutral_action::failed) << taken.front().what;
    // The first directory no path names went, from the one above it that a path names.
    const fs::path gone = taken.front().path;
    EXPECT_GE(gone.native().size(), static_cast<std::size_t>(PATH_MAX));
    const int parent = ::open(gone.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(parent, 0);
    struct stat st {};
    EXPECT_NE(::fstatat(parent, gone.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW), 0);
    ::close(parent);
}

// A configuration of a great many keys to take: taken out all, named by a few.
TEST_F(Judgement, AConfigurationOfManyKeysToTakeIsNamedByAFew) {
    std::string config = "[core]\n\trepositoryformatversion = 0\n";
    for (int i = 0; i < 20000; ++i)
        config += "[alias]\n\ta" + std::to_string(i) + " = !touch x\n";
    test::write_file(root_ / "nested" / ".git" / "config", config);
    const auto taken = judge_scanned();
    const auto found = taken.find((root_ / "nested" / ".git" / "config").string());
    ASSERT_NE(found, taken.end());
    EXPECT_EQ(found->second.action, neutral_action::rewritten);
    EXPECT_LT(found->second.what.size(), 1000U) << found->second.what;
    EXPECT_THAT(found->second.what, HasSubstr("and 19992 more"));
    EXPECT_THAT(test::read_file(root_ / "nested" / ".git" / "config"), Not(HasSubstr("touch")));
}

// A root that cannot be read is named, and the rest is still judged.
TEST_F(Judgement, AScanGoesOnPastWhatItCannotRead) {
    ASSERT_EQ(sh(root_, "echo x > .envrc2 && mkdir -p sub && echo y > sub/.envrc"), 0);
    auto scanned = scan_changes(std::vector<fs::path>{base_ / "missing", root_}, since_,
                                interest_of(default_protected_names()));
    ASSERT_TRUE(std::holds_alternative<change_set>(scanned));
    const change_set& changes = std::get<change_set>(scanned);
    ASSERT_TRUE(changes.incomplete);
    EXPECT_THAT(*changes.incomplete, HasSubstr("missing"));
    quarantine away(away_home_);
    const judged_changes judged = judge_changes(scope(), changes, away);
    EXPECT_TRUE(judged.failure);
    ASSERT_EQ(judged.neutralized.size(), 1U);
    EXPECT_EQ(judged.neutralized[0].path, (root_ / "sub" / ".envrc").string());
}

// A kept file given another name (a hard link a command could write through later) is not the
// file it was: it is put back as a file of its own.
TEST_F(Judgement, AKeptFileGivenAnotherNameIsPutBackAsItsOwn) {
    const fs::path config = root_ / ".git" / "config";
    const std::string before = test::read_file(config);
    const kept_copies copies =
        kept_copies::take(std::vector<fs::path>{config}, std::vector<fs::path>{root_});
    ASSERT_EQ(sh(root_, "ln .git/config notes.txt"), 0);
    quarantine away(away_home_);
    const auto restored = copies.restore(away);
    ASSERT_EQ(restored.size(), 1U);
    EXPECT_EQ(restored[0].action, neutral_action::restored);
    ASSERT_EQ(sh(root_, "printf \"[core]\\n\\tfsmonitor = touch x\\n\" >> notes.txt"), 0);
    EXPECT_EQ(test::read_file(config), before);
    EXPECT_EQ(fs::hard_link_count(config), 1U);
}

// Two runs at once in one workspace on the rung that puts kept paths back: the second takes the
// first's copies, not the state the first changed, and neither puts back what the other planted
// (a configuration appended to, a protected name made where there was none).
TEST_F(Judgement, RunsAtOnceInOneWorkspacePutBackWhatWasThereBeforeEither) {
    const fs::path config = root_ / ".git" / "config";
    const std::string before = test::read_file(config);
    const auto settings = [this, &config] {
        run_judgement::settings out;
        out.scope.roots = {root_};
        out.scope.names = default_protected_names();
        out.copied = {config, root_ / ".envrc"};
        out.journal = base_ / "journal";
        out.quarantine_home = away_home_;
        out.watch = false;
        return out;
    };
    const auto first = run_judgement::start(settings());
    ASSERT_EQ(sh(root_,
                 "printf \"[core]\\n\\tfsmonitor = touch x\\n\" >> .git/config && "
                 "echo planted > .envrc"),
              0);
    const auto second = run_judgement::start(settings());
    const judgement_report first_report = first->finish();
    const judgement_report second_report = second->finish();
    EXPECT_EQ(test::read_file(config), before);
    EXPECT_FALSE(fs::exists(root_ / ".envrc"));
    for (const neutralized_path& n : second_report.neutralized)
        ADD_FAILURE() << "the second run put back what the first planted: " << n.path;
    EXPECT_FALSE(first_report.neutralized.empty());
    EXPECT_TRUE(fs::is_empty(base_ / "journal") ||
                std::all_of(fs::directory_iterator(base_ / "journal"), fs::directory_iterator(),
                            [](const fs::directory_entry& e) {
                                return e.path().filename() == "copies.lock";
                            }))
        << "both windows judged and gone";
}

// The window opens a margin early (run_judgement.cpp): a protected directory the user made a
// moment before the run, holding a writable root (`--writable-root ws/.vscode/sub`), was born in
// the window and was taken whole as the run's, with the user's files in it and what the run wrote
// in its own root. The same directory found after the run is not new: only what the run made or
// changed in it goes.
TEST_F(Judgement, ADirectoryHoldingARootMadeAMomentBeforeTheRunIsNotTheRuns) {
    const fs::path vscode = root_ / ".vscode";
    fs::create_directories(vscode / "sub");
    test::write_file(vscode / "settings.json", "{}\n");
    struct statx sx {};
    ASSERT_EQ(::statx(AT_FDCWD, vscode.c_str(), 0, STATX_BTIME, &sx), 0);
    if ((sx.stx_mask & STATX_BTIME) == 0) CORDON_SKIP_OR_FAIL("no birth times on this filesystem");
    ASSERT_TRUE(sx.stx_btime.tv_sec > since_.tv_sec ||
                (sx.stx_btime.tv_sec == since_.tv_sec && sx.stx_btime.tv_nsec >= since_.tv_nsec))
        << "born in the window, as one made a moment before a run is";
    judgement_scope within = scope();
    within.roots = {root_, vscode / "sub"};
    within.existing = directories_holding_roots(within.roots);
    ASSERT_EQ(sh(root_,
                 "echo mine > .vscode/sub/out.txt && echo x > .vscode/tasks.json && "
                 "echo evil > .vscode/settings.json"),
              0);
    const auto taken = judge_scanned(within);
    EXPECT_FALSE(taken.contains(vscode.string()));
    EXPECT_FALSE(taken.contains((vscode / "sub").string()));
    EXPECT_EQ(test::read_file(vscode / "sub" / "out.txt"), "mine\n");
    EXPECT_TRUE(taken.contains((vscode / "tasks.json").string()));
    EXPECT_TRUE(taken.contains((vscode / "settings.json").string()));
    EXPECT_FALSE(fs::exists(vscode / "tasks.json"));
    EXPECT_FALSE(fs::exists(vscode / "settings.json"));
}

// Fail closed: a directory the run put in the place of one that held a root is another inode,
// and is new: taken whole, with what the run planted in it.
TEST_F(Judgement, ADirectoryHoldingARootThatTheRunReplacedIsNew) {
    const fs::path vscode = root_ / ".vscode";
    fs::create_directories(vscode / "sub");
    test::write_file(vscode / "settings.json", "{}\n");
    judgement_scope within = scope();
    within.roots = {root_, vscode / "sub"};
    within.existing = directories_holding_roots(within.roots);
    ASSERT_EQ(within.existing.size(), 3U);  // the workspace, .vscode, .vscode/sub
    ASSERT_EQ(sh(root_,
                 "mv .vscode before && mkdir .vscode && mv before/sub .vscode/sub && "
                 "echo evil > .vscode/settings.json"),
              0);
    const auto taken = judge_scanned(within);
    ASSERT_TRUE(taken.contains(vscode.string()));
    EXPECT_EQ(taken.at(vscode.string()).action, neutral_action::quarantined);
    EXPECT_FALSE(fs::exists(vscode / "settings.json"));
}

// The same through a run's judgement, by its scan: what holds the roots is taken as it is when
// the window opens, before the command starts.
TEST_F(Judgement, ARunsJudgementKeepsTheDirectoriesHoldingItsRoots) {
    const fs::path vscode = root_ / ".vscode";
    fs::create_directories(vscode / "sub");
    test::write_file(vscode / "settings.json", "{}\n");
    run_judgement::settings settings;
    settings.scope.roots = {root_, vscode / "sub"};
    settings.scope.names = default_protected_names();
    settings.journal = base_ / "journal";
    settings.quarantine_home = away_home_;
    settings.watch = false;
    const auto judgement = run_judgement::start(std::move(settings));
    ASSERT_EQ(sh(root_, "echo mine > .vscode/sub/out.txt && echo x > .vscode/tasks.json"), 0);
    const judgement_report report = judgement->finish();
    std::set<std::string> taken;
    for (const neutralized_path& n : report.neutralized)
        taken.insert(n.path);
    // (The scan takes a file written in the margin for a change: settings.json may go too.)
    EXPECT_THAT(taken, Contains((vscode / "tasks.json").string()));
    EXPECT_THAT(taken, Not(Contains(vscode.string())));
    EXPECT_THAT(taken, Not(Contains((vscode / "sub").string())));
    EXPECT_EQ(test::read_file(vscode / "sub" / "out.txt"), "mine\n");
    EXPECT_FALSE(fs::exists(vscode / "tasks.json"));
}

// The record of a window: read back as written, nothing else accepted.
TEST(RunJournal, AWindowReadsBackAsWritten) {
    judgement_scope window;
    window.roots = {"/w/one", "/w/two with\nnewline"};
    window.names = {".envrc", ".git/hooks"};
    window.kept = {"/w/one/.git/config"};
    window.hook_directories = {"/w/one/.githooks"};
    window.configurations = {"/w/one/project.gitconfig"};
    window.places = {{"/w/one/home/.ssh", "~/.ssh"}, {"/w/one/bin", "$PATH"}};
    window.since = {1234567890, 123456789};
    const auto back = parse_window(window_text(window, std::string("copies\0with NUL", 15)));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->window.roots, window.roots);
    EXPECT_EQ(back->window.names, window.names);
    EXPECT_EQ(back->window.kept, window.kept);
    EXPECT_EQ(back->window.hook_directories, window.hook_directories);
    EXPECT_EQ(back->window.configurations, window.configurations);
    ASSERT_EQ(back->window.places.size(), 2U);
    EXPECT_EQ(back->window.places[0].path, "/w/one/home/.ssh");
    EXPECT_EQ(back->window.places[0].name, "~/.ssh");
    EXPECT_EQ(back->window.places[1].path, "/w/one/bin");
    EXPECT_EQ(back->window.places[1].name, "$PATH");
    EXPECT_EQ(back->window.since.tv_sec, window.since.tv_sec);
    EXPECT_EQ(back->window.since.tv_nsec, window.since.tv_nsec);
    EXPECT_EQ(back->copies, std::string("copies\0with NUL", 15));
    EXPECT_EQ(back->attempts, 0);
    const auto field = [](std::string_view tag, std::string_view value) {
        std::string out;
        append_field(out, tag, value);
        return out;
    };
    const std::string format = field("format", "cordon-judgement-3");
    const std::string since = field("since", "1.0");
    // A record of the format before is judged all the same.
    EXPECT_TRUE(parse_window(field("format", "cordon-judgement-2") + since + field("root", "/x")));
    EXPECT_EQ(parse_window(format + since + field("root", "/x") + field("attempt", "") +
                           field("attempt", ""))
                  ->attempts,
              2);
    for (const std::string& bad :
         {std::string(), format, since + field("root", "/x"),
          field("format", "cordon-judgement-1") + since + field("root", "/x"),
          format + since + field("root", "rel"),
          format + since + field("name", "../x") + field("root", "/x"),
          format + since + field("root", "/x") + field("what", "/y"),
          field("format", "cordon-judgement-1") + since + field("root", "/x") +
              field("place-name", "~/bin") + field("place", "/x/bin"),
          format + since + field("root", "/x") + field("place", "/x/bin"),
          format + since + field("root", "/x") + field("place-name", "~/bin"),
          format + since + field("root", "/x") + field("place-name", "~/bin") +
              field("root", "/y") + field("place", "/x/bin"),
          format + since + field("root", "/x") + field("place-name", "~/../bin") +
              field("place", "/x/bin"),
          format + since + field("root", "/x").substr(0, 8),
          format + since + "root\0" + "99\0/x\0"}) {
        EXPECT_FALSE(parse_window(bad)) << ::testing::PrintToString(bad);
    }
}

// The window records in `journal`, finished or not (the copies' lock file is no record).
std::size_t records_in(const fs::path& journal) {
    std::size_t found = 0;
    for (const auto& entry : fs::directory_iterator(journal)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("window-", 0) == 0 || name.rfind(".new-window-", 0) == 0) ++found;
    }
    return found;
}

// A window over `root` with the default protected names, opened now.
judgement_scope window_over(const fs::path& root) {
    judgement_scope window;
    window.roots = {root};
    window.names = default_protected_names();
    window.since = now();
    return window;
}

// Records a window in `journal` as a cordon that is killed before it judges it does.
void record_and_die(const fs::path& journal, const judgement_scope& window) {
    const pid_t child = ::fork();
    if (child == 0) {
        auto owed = owed_judgement::record(journal, window);
        if (!std::holds_alternative<std::unique_ptr<owed_judgement>>(owed)) ::_exit(1);
        (void)std::get<std::unique_ptr<owed_judgement>>(owed).release();
        ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_EQ(status, 0);
}

// A window whose cordon is alive is not taken; one whose cordon died is, once, and judged.
TEST(RunJournal, AnAbandonedWindowIsJudgedByTheNextCordon) {
    test::temp_dir base;
    const fs::path journal = base / "journal";
    const fs::path root = base / "ws";
    fs::create_directories(root);
    const judgement_scope window = window_over(root);
    {
        auto alive = owed_judgement::record(journal, window);
        ASSERT_TRUE(std::holds_alternative<std::unique_ptr<owed_judgement>>(alive));
        EXPECT_TRUE(owed_judgement::claim_abandoned(journal).empty()) << "its cordon lives";
    }
    EXPECT_EQ(records_in(journal), 0U) << "judged: the record went";
    ASSERT_NO_FATAL_FAILURE(record_and_die(journal, window));
    test::write_file(root / ".envrc", "planted\n");
    const auto found = judge_abandoned_windows(journal, base / "quarantine");
    ASSERT_EQ(found.size(), 1U);
    EXPECT_EQ(found[0].path, (root / ".envrc").string());
    EXPECT_THAT(found[0].what, HasSubstr("a protected name (.envrc)"));
    EXPECT_FALSE(fs::exists(root / ".envrc"));
    EXPECT_EQ(records_in(journal), 0U);
    EXPECT_TRUE(judge_abandoned_windows(journal, base / "quarantine").empty());
}

// Whether `thread` of this process waits in flock(2) now (/proc/self/task/TID/syscall).
bool waits_in_flock(pid_t thread) {
    if (thread == 0) return false;
    std::ifstream now("/proc/self/task/" + std::to_string(thread) + "/syscall");
    long number = -1;
    return static_cast<bool>(now >> number) && number == SYS_flock;
}

// Runs claim_abandoned() on a thread of its own until it is over or waits for a lock: what the
// claim took once it is over.
class claim_on_a_thread {
public:
    explicit claim_on_a_thread(const fs::path& journal)
        : thread_([this, journal] {
              tid_ = ::gettid();
              claimed_ = owed_judgement::claim_abandoned(journal).size();
              done_ = true;
          }) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!done_ && !waits_in_flock(tid_) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~claim_on_a_thread() {
        if (thread_.joinable()) thread_.join();
    }
    claim_on_a_thread(const claim_on_a_thread&) = delete;
    claim_on_a_thread& operator=(const claim_on_a_thread&) = delete;

    std::size_t claimed() {
        thread_.join();
        return claimed_;
    }

private:
    std::atomic<pid_t> tid_{0};
    std::atomic<bool> done_{false};
    std::size_t claimed_ = 0;
    std::thread thread_;
};

// A record is made a moment before its writer locks it. A cordon that looks for dead cordons'
// windows in that moment must not take it for one that died writing and remove it: the window
// would be owed by nobody and seen by no run that starts while it lasts (two runs in one
// workspace, the second then putting back what the first planted).
TEST(RunJournal, ARecordBeingWrittenIsNeverTakenForADeadCordons) {
    test::temp_dir base;
    const fs::path journal = base / "journal";
    unique_fd holding = owed_judgement::hold_copies(journal);
    ASSERT_TRUE(holding);
    // The writer's moment: its record made, not locked yet.
    const fs::path being_written = journal / ".new-window-1-1";
    unique_fd file(::open(being_written.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    ASSERT_TRUE(file);
    claim_on_a_thread claim(journal);
    EXPECT_TRUE(fs::exists(being_written)) << "a record being written was removed";
    ASSERT_EQ(::flock(file.get(), LOCK_EX | LOCK_NB), 0);
    holding.reset();
    EXPECT_EQ(claim.claimed(), 0U);
    EXPECT_TRUE(fs::exists(being_written)) << "a locked record was removed";
}

// A run that starts reads the live windows, testing each record's lock (shared, for a moment).
// A dead cordon's record whose lock such a reader holds in that moment is still claimed by the
// cordon that looks for it then, not left unjudged as a live one.
TEST(RunJournal, ADeadWindowAReaderLooksAtIsStillClaimed) {
    test::temp_dir base;
    const fs::path journal = base / "journal";
    const fs::path root = base / "ws";
    fs::create_directories(root);
    const judgement_scope window = window_over(root);
    ASSERT_NO_FATAL_FAILURE(record_and_die(journal, window));
    // The reader's moment, under the copies' lock as live_windows() is read.
    unique_fd holding = owed_judgement::hold_copies(journal);
    ASSERT_TRUE(holding);
    std::vector<unique_fd> looked_at;
    for (const auto& entry : fs::directory_iterator(journal)) {
        if (entry.path().filename().string().rfind("window-", 0) != 0) continue;
        looked_at.emplace_back(::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC));
        ASSERT_TRUE(looked_at.back());
        ASSERT_EQ(::flock(looked_at.back().get(), LOCK_SH | LOCK_NB), 0);
    }
    ASSERT_EQ(looked_at.size(), 1U);
    claim_on_a_thread claim(journal);
    looked_at.clear();
    holding.reset();
    EXPECT_EQ(claim.claimed(), 1U) << "a dead window was taken for a live one";
}

// A window whose judgement kills every cordon that claims it is dropped after a few, reported:
// one that cannot be judged must not stop every later cordon.
TEST(RunJournal, AWindowThatKillsItsJudgesIsDroppedAfterAFew) {
    test::temp_dir base;
    const fs::path journal = base / "journal";
    const fs::path root = base / "ws";
    fs::create_directories(root);
    const judgement_scope window = window_over(root);
    // Cordons that claim the window a dead one left, and die judging it.
    const auto in_child = [](const std::function<void()>& body) {
        const pid_t child = ::fork();
        if (child == 0) {
            body();
            ::_exit(0);
        }
        int status = 0;
        return ::waitpid(child, &status, 0) == child && WIFEXITED(status) &&
               WEXITSTATUS(status) == 0;
    };
    ASSERT_NO_FATAL_FAILURE(record_and_die(journal, window));
    for (int attempt = 1; attempt <= owed_judgement::most_attempts; ++attempt) {
        ASSERT_TRUE(in_child([attempt, &journal] {
            auto claimed = owed_judgement::claim_abandoned(journal);
            if (claimed.size() != 1 || claimed[0]->attempts() != attempt) ::_exit(1);
            (void)claimed[0].release();
        }));
    }
    test::write_file(root / ".envrc", "planted\n");
    const auto found = judge_abandoned_windows(journal, base / "quarantine");
    ASSERT_EQ(found.size(), 1U);
    EXPECT_EQ(found[0].action, neutral_action::failed);
    EXPECT_THAT(found[0].what, HasSubstr("dropped unjudged"));
    EXPECT_TRUE(judge_abandoned_windows(journal, base / "quarantine").empty());
}

// The journal's directory must be this user's own: one others could write is not used.
TEST(RunJournal, AJournalOthersMayWriteIsRefused) {
    test::temp_dir base;
    const fs::path journal = base / "journal";
    fs::create_directories(journal);
    fs::permissions(journal, fs::perms::all);
    judgement_scope window;
    window.roots = {base.path()};
    window.since = now();
    auto refused = owed_judgement::record(journal, window);
    EXPECT_TRUE(std::holds_alternative<std::string>(refused));
}

}  // namespace
}  // namespace cordon::sandbox
