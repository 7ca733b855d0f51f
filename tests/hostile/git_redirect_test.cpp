// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// git obeys more of a repository than `.git/hooks` and `.git/config`: a git directory's
// `commondir` names the directory its configuration and hooks are read from, a submodule's git
// directory (`.git/modules/NAME`) has hooks and a configuration of its own, a gitlink in the
// index makes `git status` at the top run git in the submodule's work tree, a separate git
// directory sits wherever `--separate-git-dir` put it, and a configuration includes others. A
// workspace-write command that reaches any of these plants code that git runs unconfined, outside
// the sandbox, on the user's next git command. Each test plants, then runs git on the host as the
// user would and checks that nothing the command wrote ran, and that the record names what was
// taken.
//
// Every rung: bwrap keeps the top repository's own parts read-only, the Landlock rung puts them
// back; what a run makes anywhere else is judged once it is over, the same on both.
#include "hostile_support.hpp"

namespace cordon::hostile {
namespace {

using ::testing::HasSubstr;
using namespace std::string_literals;

class GitRedirect : public BackendTest {
protected:
    // The user's home, for git on both sides: outside the workspace, without a configuration.
    [[nodiscard]] fs::path home() const { return tree_.outside(); }

    // Runs `script` with sh on the host in `dir`; its exit status.
    int host_sh(const fs::path& dir, const std::string& script) {
        const std::string command = "cd '" + dir.string() + "' && GIT_CONFIG_NOSYSTEM=1 HOME='" +
                                    home().string() + "' sh -c '" + script + "' >/dev/null 2>&1";
        return std::system(command.c_str());
    }

    // A repository at `dir` (the workspace by default) with one commit.
    void make_repository(const fs::path& dir = {}) {
        const fs::path at = dir.empty() ? tree_.workspace() : dir;
        fs::create_directories(at);
        ASSERT_EQ(host_sh(at,
                          "git init -q . && git config user.email t@t && git config user.name t && "
                          "echo one > file && git add file && git commit -qm one"),
                  0);
    }

    // The command's script under workspace-write: it must have run.
    runtime::run_record plant(const std::string& script,
                              std::function<void(runtime::run_request&)> adjust = {}) {
        runtime::run_request req = request({"bash", "-c", script}, sandbox_mode::workspace_write);
        req.env = {{"HOME", home().string()},   {"GIT_CONFIG_NOSYSTEM", "1"},
                   {"GIT_AUTHOR_NAME", "t"},    {"GIT_AUTHOR_EMAIL", "t@t"},
                   {"GIT_COMMITTER_NAME", "t"}, {"GIT_COMMITTER_EMAIL", "t@t"}};
        if (adjust) adjust(req);
        runtime::run_record record = run(std::move(req));
        EXPECT_NE(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
        return record;
    }

    // The first line `command` prints, run by sh on the host in `dir` as host_sh() runs it.
    std::string host_output(const fs::path& dir, const std::string& command) {
        const std::string line = "cd '" + dir.string() + "' && GIT_CONFIG_NOSYSTEM=1 HOME='" +
                                 home().string() + "' " + command;
        FILE* pipe = ::popen(line.c_str(), "r");
        if (pipe == nullptr) return {};
        std::string out;
        char buffer[4096];
        std::size_t got = 0;
        while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
            out.append(buffer, got);
        ::pclose(pipe);
        return out.substr(0, out.find('\n'));
    }

    [[nodiscard]] fs::path marker() const { return tree_.base() / "ran-unconfined"; }

    // A command line that proves code ran: it creates the marker.
    [[nodiscard]] std::string touch_marker() const { return "touch " + marker().string(); }

    // The hook script that proves code ran.
    [[nodiscard]] std::string marker_script() const {
        return "#!/bin/sh\\n" + touch_marker() + "\\n";
    }

    // Whether the record says `path` was taken (quarantined, rewritten, restored or removed).
    static bool taken(const runtime::run_record& record, const fs::path& path) {
        if (!record.sandbox.judged) return false;
        const auto& all = record.sandbox.judged->neutralized;
        return std::any_of(all.begin(), all.end(), [&path](const sandbox::neutralized_path& n) {
            return n.path == path.string() && n.action != sandbox::neutral_action::failed;
        });
    }
};

// The command writes a git directory of its own beside the real one and points `.git/commondir`
// at it: git then reads the configuration and the hooks of that directory, and the next
// `git commit` on the host runs its pre-commit hook. `git commit` inside still works, and the run
// leaves no `commondir` behind.
TEST_P(GitRedirect, ACommondirCannotRedirectTheRepository) {
    make_repository();
    const std::string hook = marker_script();
    const runtime::run_record record = plant(
        "git commit -qm inside --allow-empty && echo COMMITTED; "
        "mkdir -p .git/evil/hooks && cp -r .git/objects .git/refs .git/HEAD .git/evil/; "
        "printf '[core]\\n\\trepositoryformatversion = 0\\n' > .git/evil/config; "
        "printf '" +
        hook +
        "' > .git/evil/hooks/pre-commit; chmod +x .git/evil/hooks/pre-commit; "
        "echo evil > .git/commondir; true");
    EXPECT_THAT(record.stdout_output.text, HasSubstr("COMMITTED")) << describe(record);

    EXPECT_FALSE(fs::exists(tree_.workspace() / ".git" / "commondir"));
    EXPECT_TRUE(taken(record, tree_.workspace() / ".git" / "commondir")) << describe(record);
    EXPECT_EQ(host_sh(tree_.workspace(), "echo two >> file && git commit -qam two"), 0);
    EXPECT_FALSE(fs::exists(marker())) << "a hook the command planted ran outside the sandbox";
}

// A submodule's git directory lives in the superproject's `.git/modules`: its hooks and its
// configuration are obeyed by git in the submodule (a commit there, and `git status` at the top,
// which runs git in every submodule and so its core.fsmonitor).
TEST_P(GitRedirect, ASubmodulesGitDirectoryKeepsItsHooksAndConfig) {
    make_repository();
    make_repository(tree_.outside() / "lib");
    ASSERT_EQ(host_sh(tree_.workspace(), "git -c protocol.file.allow=always submodule add -q " +
                                             (tree_.outside() / "lib").string() +
                                             " lib && git commit -qm lib"),
              0);
    ASSERT_TRUE(fs::is_directory(tree_.workspace() / ".git" / "modules" / "lib" / "hooks"));

    const std::string hook = marker_script();
    plant("printf '" + hook +
          "' > .git/modules/lib/hooks/pre-commit; chmod +x .git/modules/lib/hooks/pre-commit; "
          "git -C lib config core.fsmonitor '" +
          touch_marker() + "; false'; true");

    host_sh(tree_.workspace(), "git status --short");
    host_sh(tree_.workspace() / "lib", "git commit -q --allow-empty -m two");
    EXPECT_FALSE(fs::exists(marker())) << "code the command planted ran outside the sandbox";
}

// The attack the protection was blind to before: a run makes a repository of its own in a
// subdirectory, sets core.fsmonitor there, and records it as a gitlink in the top repository's
// index. The user's next plain `git status` at the top (or the IDE's) runs git in it.
TEST_P(GitRedirect, ANestedRepositoryBehindAGitlinkRunsNothing) {
    make_repository();
    const runtime::run_record record = plant(
        "git init -q sub && git -C sub commit -q --allow-empty -m x && "
        "git -C sub config core.fsmonitor '" +
        touch_marker() +
        "; false' && git add sub 2>/dev/null; "
        "git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub; "
        "git ls-files -s sub");
    EXPECT_THAT(record.stdout_output.text, HasSubstr("160000")) << describe(record);
    EXPECT_TRUE(record.sandbox.denied) << describe(record);
    EXPECT_TRUE(taken(record, tree_.workspace() / "sub" / ".git" / "config")) << describe(record);

    EXPECT_EQ(host_sh(tree_.workspace(), "git status --short && git diff --stat"), 0);
    EXPECT_EQ(host_sh(tree_.workspace() / "sub", "git status --short"), 0);
    EXPECT_FALSE(fs::exists(marker())) << "core.fsmonitor of a nested repository ran outside";
}

// Its variants: a separate git directory (`git init --separate-git-dir`), a submodule's git
// directory the run makes in `.git/modules`, a hook in the nested repository, a configuration it
// includes, an alias that carries `-c core.fsmonitor`. None of it runs afterwards.
TEST_P(GitRedirect, EveryWayToPlantInANestedRepositoryIsTaken) {
    make_repository();
    const std::string hook = marker_script();
    const runtime::run_record record = plant(
        // a separate git directory, its work tree behind a gitlink
        "git init -q --separate-git-dir=.sep sep && git -C sep commit -q --allow-empty -m x && "
        "git -C sep config core.fsmonitor '" +
        touch_marker() +
        "; false' && "
        "git update-index --add --cacheinfo 160000,$(git -C sep rev-parse HEAD),sep; "
        // a submodule's git directory made by hand in .git/modules, and its work tree
        "mkdir -p mod .git/modules && git init -q --separate-git-dir=.git/modules/mod mod && "
        "git -C mod commit -q --allow-empty -m x && "
        "printf '" +
        hook +
        "' > .git/modules/mod/hooks/post-checkout && "
        "chmod +x .git/modules/mod/hooks/post-checkout && "
        "git update-index --add --cacheinfo 160000,$(git -C mod rev-parse HEAD),mod; "
        // a nested repository's hook and included configuration
        "git init -q nested && printf '" +
        hook +
        "' > nested/.git/hooks/pre-commit && "
        "chmod +x nested/.git/hooks/pre-commit && "
        "printf '[core]\\n\\tfsmonitor = " +
        touch_marker() +
        "\\n' > nested/evil.inc && "
        "git -C nested config include.path ../evil.inc && "
        "git -C nested config alias.st \"-c core.pager=" +
        touch_marker() + " status\"; true");
    EXPECT_TRUE(record.sandbox.denied) << describe(record);

    host_sh(tree_.workspace(), "git status && git submodule status");
    host_sh(tree_.workspace() / "sep", "git status");
    host_sh(tree_.workspace() / "mod", "git checkout -q -b y && git status");
    host_sh(tree_.workspace() / "nested", "git commit -q --allow-empty -m y; git st; git status");
    EXPECT_FALSE(fs::exists(marker())) << "code the command planted ran outside the sandbox\n"
                                       << describe(record);
    EXPECT_TRUE(taken(record, tree_.workspace() / ".sep" / "config")) << describe(record);
    EXPECT_TRUE(
        taken(record, tree_.workspace() / ".git" / "modules" / "mod" / "hooks" / "post-checkout"))
        << describe(record);
    EXPECT_TRUE(taken(record, tree_.workspace() / "nested" / ".git" / "hooks" / "pre-commit"))
        << describe(record);
    EXPECT_TRUE(taken(record, tree_.workspace() / "nested" / ".git" / "config"))
        << describe(record);
}

// Where the scan before a run never looked: a repository beneath node_modules, and one in the
// host's /tmp when the run may write it (--tmp host).
TEST_P(GitRedirect, RepositoriesBeneathNodeModulesAndInTheHostsTmpAreJudged) {
    const fs::path tmp_repo = fs::path("/tmp") / ("cordon-git-redirect-" + unique_suffix());
    const std::string hook = marker_script();
    const runtime::run_record record =
        plant("git init -q node_modules/pkg && printf '" + hook +
                  "' > node_modules/pkg/.git/hooks/pre-commit && chmod +x "
                  "node_modules/pkg/.git/hooks/pre-commit && git init -q " +
                  tmp_repo.string() + " && git -C " + tmp_repo.string() +
                  " config core.fsmonitor '" + touch_marker() + "; false'; true",
              [](runtime::run_request& req) { req.rules.tmp = sandbox::tmp_policy::host; });
    host_sh(tree_.workspace() / "node_modules" / "pkg", "git commit -q --allow-empty -m y");
    EXPECT_TRUE(fs::is_directory(tmp_repo / ".git")) << describe(record);
    host_sh(tmp_repo, "git status");
    // The host's /tmp is every run's that may write it: a run of another suite that overlaps
    // this one judges the repository as well, and whichever ends first takes the setting, and
    // names it in its own record. What must hold is that the setting is gone from the disk.
    const bool still_set =
        host_sh(tmp_repo, "git config --file .git/config --get core.fsmonitor") == 0;
    std::error_code ec;
    fs::remove_all(tmp_repo, ec);
    EXPECT_FALSE(fs::exists(marker())) << describe(record);
    EXPECT_FALSE(still_set) << "the repository in the host's /tmp keeps core.fsmonitor\n"
                            << describe(record);
    EXPECT_TRUE(
        taken(record, tree_.workspace() / "node_modules" / "pkg" / ".git" / "hooks" / "pre-commit"))
        << describe(record);
}

// The repository's configuration (protected) points core.hooksPath at a directory of the work
// tree, as projects that keep their hooks under version control do: the hooks are in a writable
// place all the same, and the next commit on the host runs what the command wrote there.
TEST_P(GitRedirect, HooksWhereCoreHooksPathPointsAreKept) {
    make_repository();
    ASSERT_EQ(host_sh(tree_.workspace(),
                      "mkdir .githooks && git config core.hooksPath .githooks && "
                      "printf \"#!/bin/sh\\ntrue\\n\" > .githooks/pre-commit && "
                      "chmod +x .githooks/pre-commit"),
              0);
    plant("echo '" + touch_marker() + "' >> .githooks/pre-commit; true");

    EXPECT_EQ(host_sh(tree_.workspace(), "echo two >> file && git commit -qam two"), 0);
    EXPECT_FALSE(fs::exists(marker())) << "a hook the command changed ran outside the sandbox";
}

// The user's own configuration points core.hooksPath into the workspace, which is no repository:
// every repository of the user's runs what lies there, so it is kept whatever the root.
TEST_P(GitRedirect, WhereTheUsersHooksPathLeadsIsKeptInAnyRoot) {
    fs::create_directories(tree_.workspace() / "hooks");
    write_file(tree_.workspace() / "hooks" / "pre-commit", "#!/bin/sh\ntrue\n");
    fs::permissions(tree_.workspace() / "hooks" / "pre-commit", fs::perms::owner_all);
    write_file(home() / ".gitconfig",
               "[core]\n\thooksPath = " + (tree_.workspace() / "hooks").string() + "\n");
    // The user's configuration is cordon's user's: the plan reads it from cordon's own home.
    test::scoped_env user_home("HOME", home().string());
    const runtime::run_record record =
        plant("echo '" + touch_marker() + "' >> hooks/pre-commit; printf '" + marker_script() +
              "' > hooks/post-commit; chmod +x hooks/post-commit; true");
    make_repository(tree_.outside() / "other");
    host_sh(tree_.outside() / "other", "git commit -q --allow-empty -m two");
    fs::remove(home() / ".gitconfig");
    EXPECT_FALSE(fs::exists(marker())) << describe(record);
}

// The repository's configuration includes a file of the work tree (include.path, as projects
// that share their git settings do): what that file says, git obeys, hooksPath included.
TEST_P(GitRedirect, AConfigurationTheRepositoryIncludesIsKept) {
    make_repository();
    ASSERT_EQ(host_sh(tree_.workspace(),
                      "touch project.gitconfig && git config include.path ../project.gitconfig"),
              0);
    const std::string hook = marker_script();
    plant("mkdir evil && printf '" + hook +
          "' > evil/pre-commit && chmod +x evil/pre-commit && "
          "printf '[core]\\n\\thooksPath = evil\\n' >> project.gitconfig; true");

    EXPECT_EQ(host_sh(tree_.workspace(), "echo two >> file && git commit -qam two"), 0);
    EXPECT_FALSE(fs::exists(marker())) << "a hook the command planted ran outside the sandbox";
}

// A bare repository in the workspace (a local remote) is a git directory by another name: a push
// to it runs its hooks on the host.
TEST_P(GitRedirect, ABareRepositorysHooksAreTaken) {
    ASSERT_EQ(host_sh(tree_.workspace(),
                      "git init -q --bare origin.git && git clone -q origin.git proj && cd proj && "
                      "git config user.email t@t && git config user.name t && echo one > file && "
                      "git add file && git commit -qm one && git push -q origin HEAD"),
              0);
    const std::string hook = marker_script();
    plant("printf '" + hook +
          "' > origin.git/hooks/pre-receive; chmod +x origin.git/hooks/pre-receive; true");

    EXPECT_EQ(host_sh(tree_.workspace() / "proj",
                      "echo two >> file && git commit -qam two && git push -q origin HEAD"),
              0);
    EXPECT_FALSE(fs::exists(marker())) << "a hook the command planted ran outside the sandbox";
}

// A writable root that is a git directory itself (a local bare remote given as a writable root,
// so that a push to it can write its objects): its hooks and configuration are kept like a
// repository's.
TEST_P(GitRedirect, AWritableRootThatIsAGitDirectoryKeepsItsHooks) {
    make_repository();
    const fs::path remote = tree_.outside() / "remote.git";
    ASSERT_EQ(host_sh(tree_.outside(), "git init -q --bare remote.git"), 0);
    const fs::path hook = remote / "hooks" / "pre-receive";
    const runtime::run_record record =
        plant("git push -q '" + remote.string() + "' HEAD:main && echo PUSHED; printf '" +
                  marker_script() + "' > '" + hook.string() + "'; chmod +x '" + hook.string() +
                  "'; git --git-dir='" + remote.string() + "' config core.hooksPath /tmp; true",
              [&remote](runtime::run_request& req) { req.rules.writable_roots = {remote}; });
    EXPECT_THAT(record.stdout_output.text, HasSubstr("PUSHED")) << describe(record);
    EXPECT_EQ(host_sh(tree_.workspace(), "git push -q '" + remote.string() + "' HEAD:other"), 0);
    EXPECT_FALSE(fs::exists(marker())) << describe(record);
    EXPECT_FALSE(fs::exists(hook)) << describe(record);
}

// A hook installed as a symlink into the work tree (`.git/hooks/pre-commit ->
// ../../tools/pre-commit`): the link is kept, and what it leads to must be kept as well.
TEST_P(GitRedirect, WhatASymlinkedHookLeadsToIsKept) {
    make_repository();
    ASSERT_EQ(host_sh(tree_.workspace(),
                      "mkdir tools && printf \"#!/bin/sh\\ntrue\\n\" > tools/pre-commit && "
                      "chmod +x tools/pre-commit && "
                      "ln -s ../../tools/pre-commit .git/hooks/pre-commit"),
              0);
    plant("echo '" + touch_marker() + "' >> tools/pre-commit; true");

    EXPECT_EQ(host_sh(tree_.workspace(), "echo two >> file && git commit -qam two"), 0);
    EXPECT_FALSE(fs::exists(marker())) << "a hook the command changed ran outside the sandbox";
}

// No refusal a run can cause: a `.git` file whose `gitdir:` leads nowhere, left by one run, and
// a `.git` file at the top that does, leave every later run to go ahead.
TEST_P(GitRedirect, ABrokenGitPointerNeverMakesALaterRunRefuse) {
    make_repository();
    plant(
        "mkdir -p sub && echo 'gitdir: /nonexistent/x' > sub/.git; "
        "mkdir -p deep/er && printf 'gitdir: ../../nowhere\\n' > deep/er/.git; true");
    for (int i = 0; i < 2; ++i) {
        const runtime::run_record again = plant("echo fine > made.txt");
        EXPECT_EQ(again.outcome.exit_code, std::optional<int>(0)) << describe(again);
    }
    EXPECT_EQ(read_file(tree_.workspace() / "made.txt"), "fine\n");
    // A workspace that is itself a linked worktree whose git directory is gone.
    const fs::path worktree = tree_.base() / "wt";
    fs::create_directories(worktree);
    write_file(worktree / ".git", "gitdir: /nonexistent/worktrees/wt\n");
    runtime::run_request req =
        request({"bash", "-c", "echo fine > made.txt"}, sandbox_mode::workspace_write);
    req.workspace_root = worktree;
    const runtime::run_record record = run(std::move(req));
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
}

// Whatever git takes for a git directory: a linked worktree's common directory with no HEAD of
// its own, one whose objects and refs are symlinks (behind a gitlink, so that `git status` at the
// top runs git in it), and a nested repository's `hooks` made to look like a git directory. git
// runs nothing any of them planted.
TEST_P(GitRedirect, EveryDirectoryGitTakesForAGitDirectoryIsJudgedAsOne) {
    make_repository();
    ASSERT_EQ(host_sh(tree_.workspace(), "git init -q a"), 0);
    const std::string hook = marker_script();
    const std::string fsmonitor =
        "printf \"[core]\\n\\tfsmonitor = \\\"" + touch_marker() + "; false\\\"\\n\"";
    plant(
        // a common directory without HEAD, and a linked worktree of it
        "mkdir -p store/objects store/refs/heads store/hooks store/worktrees/w wt && " + fsmonitor +
        " > store/config && printf '" + hook +
        "' > store/hooks/pre-commit && chmod +x store/hooks/pre-commit && "
        "echo ref: refs/heads/main > store/worktrees/w/HEAD && "
        "echo ../.. > store/worktrees/w/commondir && echo $PWD/wt/.git > store/worktrees/w/gitdir "
        "&& "
        "echo gitdir: $PWD/store/worktrees/w > wt/.git; "
        // objects and refs as symlinks, behind a gitlink
        "mkdir -p sub .stash/x/realobj .stash/x/realrefs/heads && "
        "ln -s realobj .stash/x/objects && ln -s realrefs .stash/x/refs && "
        "echo ref: refs/heads/main > .stash/x/HEAD && " +
        fsmonitor +
        " > .stash/x/config && echo gitdir: ../.stash/x > sub/.git && "
        "git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub; "
        // a hooks directory that looks like a git directory
        "echo ref: refs/heads/main > a/.git/hooks/HEAD && "
        "mkdir a/.git/hooks/objects a/.git/hooks/refs && printf '" +
        hook + "' > a/.git/hooks/pre-commit && chmod +x a/.git/hooks/pre-commit; true");
    host_sh(tree_.workspace() / "wt", "git status; git commit -q --allow-empty -m x");
    host_sh(tree_.workspace(), "git status");
    host_sh(tree_.workspace() / "sub", "git status");
    host_sh(tree_.workspace() / "a", "git commit -q --allow-empty -m x");
    EXPECT_FALSE(fs::exists(marker())) << "code the command planted ran outside the sandbox";
}

// A file of several names: a run links a nested repository's configuration (and, where it may,
// the top one's) under another name, a later run writes through that name. Neither run's
// judgement leaves git anything to run.
TEST_P(GitRedirect, AFileOfSeveralNamesCarriesNothingIntoARepository) {
    make_repository();
    plant(
        "git init -q nested && mkdir junk && ln nested/.git/config junk/notes.txt; "
        "ln .git/config top-notes.txt; true");
    plant("printf \"[core]\\n\\tfsmonitor = \\\"" + touch_marker() +
          "; false\\\"\\n\" | tee -a junk/notes.txt >> top-notes.txt; true");
    host_sh(tree_.workspace() / "nested", "git status");
    host_sh(tree_.workspace(), "git status");
    EXPECT_FALSE(fs::exists(marker())) << "code the command planted ran outside the sandbox";
}

// A write through a shared mapping makes no write(2) and raises no FAN_MODIFY, and the file it was
// opened for can be kept open past the run (sent over a unix socket to itself), so that its
// closing is reported only later; the judgement sees it all the same.
TEST_P(GitRedirect, AWriteThroughASharedMappingIsJudged) {
    make_repository();
    ASSERT_EQ(host_sh(tree_.workspace(), "git init -q nested && git init -q held"), 0);
    const std::string fsmonitor =
        "\"$(printf '[core]\\n\\tfsmonitor = \\\"" + touch_marker() + "; false\\\"\\n')\"";
    const runtime::run_record record =
        plant("'" + child() + "' map-write nested/.git/config " + fsmonitor + " && '" + child() +
              "' map-write held/.git/config " + fsmonitor + " held");
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    host_sh(tree_.workspace() / "nested", "git status");
    host_sh(tree_.workspace() / "held", "git status");
    EXPECT_FALSE(fs::exists(marker())) << "code the command planted ran outside the sandbox\n"
                                       << describe(record);
    EXPECT_TRUE(taken(record, tree_.workspace() / "nested" / ".git" / "config"))
        << describe(record);
    EXPECT_TRUE(taken(record, tree_.workspace() / "held" / ".git" / "config")) << describe(record);
}

// A git directory where no path can name it (deeper than PATH_MAX: nothing can be judged there by
// its path), reached by git through a `.git` symlink and a chain of short relative symlinks, and
// recorded as a gitlink so that `git status` at the top runs git in it. It is taken whole.
TEST_P(GitRedirect, AGitDirectoryNoPathCanNameIsTakenWhole) {
    make_repository();
    const std::string hook = marker_script();
    const runtime::run_record record = plant(
        "c=$(printf 'd%.0s' $(seq 250)); half=$(printf \"$c/%.0s\" $(seq 9)); "
        "mkdir deep && cd deep && for i in $(seq 18); do mkdir $c && cd $c || exit 1; "
        "[ $i = 9 ] && ln -s ${half}G l2; done; "
        "mkdir -p G/objects G/refs/heads G/hooks && echo ref: refs/heads/main > G/HEAD && "
        "printf \"[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \\\"" +
        touch_marker() + "; false\\\"\\n\" > G/config && printf '" + hook +
        "' > G/hooks/pre-commit && chmod +x G/hooks/pre-commit && "
        "cd \"$OLDPWD\" 2>/dev/null; cd " +
        tree_.workspace().string() +
        " && ln -s deep/${half%/} l1 && mkdir sub && ln -s ../l1/l2 sub/.git && "
        "git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub");
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    host_sh(tree_.workspace(), "git status");
    host_sh(tree_.workspace() / "sub", "git status; git commit -q --allow-empty -m x");
    EXPECT_FALSE(fs::exists(marker())) << "code the command planted ran outside the sandbox\n"
                                       << describe(record);
    EXPECT_TRUE(record.sandbox.judged && std::any_of(record.sandbox.judged->neutralized.begin(),
                                                     record.sandbox.judged->neutralized.end(),
                                                     [](const sandbox::neutralized_path& n) {
                                                         return n.what.find("deeper than a path") !=
                                                                std::string::npos;
                                                     }))
        << describe(record);
}

// A rebase stopped midway keeps its instructions in the git directory, and `git rebase --continue`
// runs their `exec` lines: a run that leaves a rebase stopped with one leaves nothing to run.
TEST_P(GitRedirect, AStoppedRebaseRunsNoCommandOnContinue) {
    make_repository();
    ASSERT_EQ(host_sh(tree_.workspace(), "echo two >> file && git commit -qam two"), 0);
    const runtime::run_record record =
        plant("GIT_SEQUENCE_EDITOR='sed -i 1ibreak' git rebase -q -i --exec '" + touch_marker() +
              "' HEAD~1; test -d .git/rebase-merge");
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    host_sh(tree_.workspace(), "git rebase --continue");
    EXPECT_FALSE(fs::exists(marker())) << "code the command planted ran outside the sandbox\n"
                                       << describe(record);
    EXPECT_TRUE(taken(record, tree_.workspace() / ".git" / "rebase-merge" / "git-rebase-todo"))
        << describe(record);
}

// Two runs at once in one workspace: the first plants in the top repository and waits for the
// second to start; whatever each puts back, the top repository ends as it was before either.
TEST_P(GitRedirect, RunsAtOnceNeverPutBackWhatTheOtherPlanted) {
    make_repository();
    const std::string before = read_file(tree_.workspace() / ".git" / "config");
    // Signals between the two runs and the test, where both runs may write.
    const fs::path planted = tree_.workspace() / "planted";
    const fs::path started = tree_.workspace() / "started";
    const std::string hook = marker_script();
    std::thread first([&] {
        plant("printf \"[core]\\n\\tfsmonitor = \\\"" + touch_marker() +
              "; false\\\"\\n\" >> .git/config; printf '" + hook +
              "' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; printf '" + hook +
              "' > .envrc; touch " + planted.string() + "; i=0; while [ ! -e " + started.string() +
              " ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done; true");
    });
    for (int i = 0; i < 600 && !fs::exists(planted); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool both_at_once = fs::exists(planted);
    plant("touch " + started.string() + "; sleep 0.5");
    first.join();
    ASSERT_TRUE(both_at_once) << "the first run never planted";
    EXPECT_EQ(read_file(tree_.workspace() / ".git" / "config"), before);
    EXPECT_FALSE(fs::exists(tree_.workspace() / ".envrc"));
    host_sh(tree_.workspace(), "git status; echo two >> file && git commit -qam two");
    EXPECT_FALSE(fs::exists(marker())) << "code the command planted ran outside the sandbox";
}

// Every spelling of core.hooksPath that git honours, each asked of git itself (`rev-parse
// --git-path hooks`): the directory it names is kept, and a hook there cannot be written. The
// spellings are the corners of git's grammar (sandbox/git_config.hpp) where a reader of its own
// could read another path than git: an inline comment (issue 37: `.githooks ; comment`, which
// cordon once kept under the name `.githooks ; comment`), quotes, escapes, a continuation line,
// case, CRLF, a byte order mark, a NUL in a comment (cordon once ignored the whole file), in a
// value, and in a subsection (which ends the name git obeys), whitespace inside the value (which
// gits before 2024 read as spaces), and an included file that says it.
TEST_P(GitRedirect, EverySpellingOfHooksPathGitHonoursKeepsItsHooks) {
    make_repository();
    const fs::path config = tree_.workspace() / ".git" / "config";
    const std::string base = read_file(config);
    const std::vector<std::string> spellings = {
        "[core]\n\thooksPath = .githooks ; comment\n",
        "[core]\n\thooksPath = .githooks # comment\n",
        "[CORE]\n\tHOOKSPATH=.githooks\n",
        "[core]\n\thooksPath = \".githooks\"\n",
        "[core]\n\thooksPath = .git\"hooks\" ; c\n",
        "[core]\n\thooksPath = .git\\\nhooks\n",
        "[core]\r\n\thooksPath = .githooks\r\n",
        "[core] hooksPath = .githooks\t",
        "\xef\xbb\xbf[core]\n\thooksPath = .githooks\n",
        "# \0\n[core]\n\thooksPath = .githooks\n"s,
        "[core]\n\thooksPath = .githooks\0junk\n"s,
        "[core \"hookspath\0x\"]\n\tany = .githooks\n"s,
        "[core]\n\thooksPath = hooks\tdir\n",
        "[include]\n\tpath = ../shared.gitconfig ; c\n",
    };
    write_file(tree_.workspace() / "shared.gitconfig", "[core]\n\thooksPath = included-hooks\n");
    for (const std::string& spelling : spellings) {
        SCOPED_TRACE(::testing::PrintToString(spelling));
        // A byte order mark counts only at the file's start.
        write_file(config, spelling.starts_with("\xef") ? spelling + base : base + spelling);
        const std::string hooks = host_output(tree_.workspace(), "git rev-parse --git-path hooks");
        ASSERT_NE(hooks, ".git/hooks") << "git does not honour this spelling";
        const fs::path dir = tree_.workspace() / hooks;
        fs::create_directories(dir);
        write_file(dir / "pre-commit", "#!/bin/sh\ntrue\n");
        fs::permissions(dir / "pre-commit", fs::perms::owner_all);

        const runtime::run_record record =
            plant("printf '" + marker_script() + "' > '" + hooks +
                  "/pre-commit' && echo WRITTEN; printf x > '" + hooks +
                  "/post-commit' && "
                  "echo MADE; true");
        // bwrap keeps the hooks read-only; the Landlock rung puts them back once the run is over.
        if (kind_ == backend_kind::bwrap) {
            EXPECT_THAT(record.stdout_output.text, ::testing::Not(HasSubstr("WRITTEN")))
                << describe(record);
        }
        EXPECT_EQ(read_file(dir / "pre-commit"), "#!/bin/sh\ntrue\n");
        EXPECT_FALSE(fs::exists(dir / "post-commit")) << describe(record);
        EXPECT_EQ(host_sh(tree_.workspace(), "echo more >> file && git commit -qam more"), 0);
        EXPECT_FALSE(fs::exists(marker())) << "a hook the command wrote ran outside the sandbox";
    }
}

CORDON_HOSTILE_BACKENDS(GitRedirect);

}  // namespace
}  // namespace cordon::hostile
