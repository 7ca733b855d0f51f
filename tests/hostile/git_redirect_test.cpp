// git obeys more of a repository than `.git/hooks` and `.git/config`: a git directory's
// `commondir` names the directory its configuration and hooks are read from, a submodule's git
// directory (`.git/modules/NAME`) has hooks and a configuration of its own, and a gitlink in the
// index makes `git status` at the top run git in the submodule's work tree. A workspace-write
// command that reaches any of these plants code that git runs unconfined, outside the sandbox,
// on the user's next git command. Each test plants, then runs git on the host as the user would
// and checks that nothing the command wrote ran.
//
// bwrap only: the Landlock rung cannot keep protected names at all and refuses such a run unless
// the gap is accepted (tests/backends/partial_enforcement_test.cpp).
#include "hostile_support.hpp"

namespace cordon::hostile {
namespace {

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

    // A repository in the workspace with one commit.
    void make_repository() {
        ASSERT_EQ(host_sh(tree_.workspace(),
                          "git init -q . && git config user.email t@t && git config user.name t && "
                          "echo one > file && git add file && git commit -qm one"),
                  0);
    }

    // The command's script under workspace-write: it must have run.
    runtime::run_record plant(const std::string& script) {
        runtime::run_request req = request({"bash", "-c", script}, sandbox_mode::workspace_write);
        req.env = {{"HOME", tree_.outside().string()}, {"GIT_CONFIG_NOSYSTEM", "1"}};
        runtime::run_record record = run(std::move(req));
        EXPECT_NE(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
        return record;
    }

    [[nodiscard]] fs::path marker() const { return tree_.outside() / "ran-unconfined"; }

    // The hook script that proves code ran: it creates the marker.
    [[nodiscard]] std::string marker_script() const {
        return "#!/bin/sh\\ntouch " + marker().string() + "\\n";
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
        "git -c user.email=t@t -c user.name=t commit -qm inside --allow-empty && echo COMMITTED; "
        "mkdir -p .git/evil/hooks && cp -r .git/objects .git/refs .git/HEAD .git/evil/; "
        "printf '[core]\\n\\trepositoryformatversion = 0\\n' > .git/evil/config; "
        "printf '" +
        hook +
        "' > .git/evil/hooks/pre-commit; chmod +x .git/evil/hooks/pre-commit; "
        "echo evil > .git/commondir; true");
    EXPECT_THAT(record.stdout_output.text, ::testing::HasSubstr("COMMITTED")) << describe(record);

    EXPECT_FALSE(fs::exists(tree_.workspace() / ".git" / "commondir"));
    EXPECT_EQ(host_sh(tree_.workspace(), "echo two >> file && git commit -qam two"), 0);
    EXPECT_FALSE(fs::exists(marker())) << "a hook the command planted ran outside the sandbox";
}

// A submodule's git directory lives in the superproject's `.git/modules`: its hooks and its
// configuration are obeyed by git in the submodule (a commit there, and `git status` at the top,
// which runs git in every submodule and so its core.fsmonitor).
TEST_P(GitRedirect, ASubmodulesGitDirectoryKeepsItsHooksAndConfig) {
    make_repository();
    ASSERT_EQ(host_sh(tree_.outside(),
                      "git init -q lib && cd lib && git config user.email t@t && "
                      "git config user.name t && echo lib > lib && git add lib && "
                      "git commit -qm lib"),
              0);
    ASSERT_EQ(host_sh(tree_.workspace(), "git -c protocol.file.allow=always submodule add -q " +
                                             (tree_.outside() / "lib").string() +
                                             " lib && git commit -qm lib"),
              0);
    ASSERT_TRUE(fs::is_directory(tree_.workspace() / ".git" / "modules" / "lib" / "hooks"));

    const std::string hook = marker_script();
    plant("printf '" + hook +
          "' > .git/modules/lib/hooks/pre-commit; chmod +x .git/modules/lib/hooks/pre-commit; "
          "git -C lib config core.fsmonitor 'touch " +
          marker().string() + "; false'; true");

    host_sh(tree_.workspace(), "git status --short");
    host_sh(tree_.workspace() / "lib", "git commit -q --allow-empty -m two");
    EXPECT_FALSE(fs::exists(marker())) << "code the command planted ran outside the sandbox";
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
    plant("echo 'touch " + marker().string() + "' >> .githooks/pre-commit; true");

    EXPECT_EQ(host_sh(tree_.workspace(), "echo two >> file && git commit -qam two"), 0);
    EXPECT_FALSE(fs::exists(marker())) << "a hook the command changed ran outside the sandbox";
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
TEST_P(GitRedirect, ABareRepositorysHooksAreKept) {
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

// A hook installed as a symlink into the work tree (`.git/hooks/pre-commit ->
// ../../tools/pre-commit`): the link is kept, and what it leads to must be kept as well.
TEST_P(GitRedirect, WhatASymlinkedHookLeadsToIsKept) {
    make_repository();
    ASSERT_EQ(host_sh(tree_.workspace(),
                      "mkdir tools && printf \"#!/bin/sh\\ntrue\\n\" > tools/pre-commit && "
                      "chmod +x tools/pre-commit && "
                      "ln -s ../../tools/pre-commit .git/hooks/pre-commit"),
              0);
    plant("echo 'touch " + marker().string() + "' >> tools/pre-commit; true");

    EXPECT_EQ(host_sh(tree_.workspace(), "echo two >> file && git commit -qam two"), 0);
    EXPECT_FALSE(fs::exists(marker())) << "a hook the command changed ran outside the sandbox";
}

INSTANTIATE_TEST_SUITE_P(Real, GitRedirect, ::testing::Values(test::real_backend::bwrap),
                         ::cordon::hostile::backend_name);

}  // namespace
}  // namespace cordon::hostile
