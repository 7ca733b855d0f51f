// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The policy beyond the mode, end to end with the real runners (bwrap, and the Landlock rung on
// both of its paths): protected names in every writable root, hidden credential stores, extra
// writable roots, read-only carve-outs and /tmp. Every refusal is checked on the host too, and
// every run is checked for residue: a mask point left in the workspace is a failure.
//
// Ported and extended from the peers' suites: Codex's linux-sandbox tests (`.git` and `.codex`
// read-only inside writable roots, writable roots, denied reads), Anthropic's sandbox-runtime
// test/sandbox (the mandatory deny list: rc files, .gitconfig, .gitmodules, .git/config,
// .git/hooks, .vscode, .idea, .claude, .mcp.json; git commit still working), landrun's test.sh
// (several writable roots, a single writable file beside read-only ones).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cordon/executor.hpp"
#include "cordon/policy.hpp"
#include "cordon/sandbox_error.hpp"
#include "real_backend.hpp"
#include "run_or_throw.hpp"
#include "runtime/runtime_test_util.hpp"
#include "sandbox/judgement.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "support.hpp"
#include "support/spawned_process.hpp"

namespace cordon::sandbox::path_policy_tests {
namespace {

namespace fs = std::filesystem;
using sandbox::neutral_action;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using strings = std::vector<std::string>;

constexpr auto generous = std::chrono::milliseconds(60'000);

std::string describe(const runtime::run_record& record) {
    std::ostringstream out;
    out << "exit="
        << (record.outcome.exit_code ? std::to_string(*record.outcome.exit_code) : "none")
        << " denied=" << record.sandbox.denied << "\nstdout: " << record.stdout_output.text
        << "\nstderr: " << record.stderr_output.text;
    if (record.outcome.kind == classify::outcome_kind::not_started) {
        out << "\nnot started: " << record.outcome.message;
    }
    return out.str();
}

// Every path under `root` with its type and content: what a run may not change.
std::map<std::string, std::string> snapshot(const fs::path& root) {
    std::map<std::string, std::string> out;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        const fs::path relative = it->path().lexically_relative(root);
        if (it->is_symlink()) {
            out[relative.string()] = "-> " + fs::read_symlink(it->path()).string();
        } else if (it->is_directory()) {
            out[relative.string()] = "dir";
        } else {
            out[relative.string()] = test::read_file(it->path());
        }
    }
    return out;
}

// Runs `script` with bash in `dir` on the host, outside any sandbox; its exit code.
int on_host(const fs::path& dir, const std::string& script) {
    const std::string command = "cd '" + dir.string() + "' && " + script + " >/dev/null 2>&1";
    return std::system(command.c_str());
}

class PathPolicy : public ::testing::TestWithParam<test::real_backend> {
protected:
    void SetUp() override {
        std::string why;
        provider_ = test::provider_for(test::choice_of(GetParam()), why);
        if (!provider_) CORDON_SKIP_OR_FAIL(why);
        kind_ = provider_->selected()->kind;
        fs::create_directories(workspace_);
        fs::create_directories(home_);
        fs::create_directories(beside_);
    }

    [[nodiscard]] bool bwrap() const { return kind_ == backend_kind::bwrap; }

    // The request: the policy's defaults, but the credential stores of the test's own home.
    [[nodiscard]] runtime::run_request request(const std::string& script, sandbox_mode mode) const {
        runtime::run_request out;
        out.argv = {"/bin/bash", "-c", script};
        out.mode = mode;
        out.workspace_root = workspace_;
        out.timeout = generous;
        out.rules.deny_credential_stores = false;  // the host's: this test's home stands in
        out.rules.deny_read = default_deny_read(home_);
        out.env = {{"HOME", home_.string()}, {"GIT_CONFIG_NOSYSTEM", "1"}};
        return out;
    }

    // The run's record, or nullopt when the sandbox refused to run it (SANDBOX_UNAVAILABLE), with
    // the reason in `refused`.
    std::optional<runtime::run_record> run(runtime::run_request request) {
        runtime::executor_options options;
        options.landlock_in_child = test::landlock_in_child(GetParam());
        try {
            return test::run_or_throw(provider_, std::move(request), std::move(options));
        } catch (const sandbox_unavailable_error& error) {
            refused_ = error.what();
            return std::nullopt;
        }
    }

    // A repository at `dir` with one commit, made on the host.
    void make_repository(const fs::path& dir) const {
        fs::create_directories(dir);
        ASSERT_EQ(on_host(dir,
                          "git init -q . && git config user.email t@example.com && "
                          "git config user.name t && echo one > f && git add f && "
                          "git commit -qm one"),
                  0);
    }

    test::temp_dir base_{"/var/tmp", "cordon-path-policy-"};
    fs::path workspace_ = base_ / "ws";
    fs::path home_ = base_ / "home";
    fs::path beside_ = base_ / "beside";
    std::shared_ptr<local_provider> provider_;
    backend_kind kind_ = backend_kind::bwrap;
    std::string refused_;
};

// Each class of protected name, existing at the top of the workspace, against every way to change
// it: a write, an append, a rename over it, a removal (of it and of its parent), a symlink swap, a
// rename of the directory that holds it. bwrap keeps them read-only; the Landlock rung puts them
// back once the run is over. Either way they are as they were.
TEST_P(PathPolicy, ExistingProtectedNamesAtTheTopAreKept) {
    make_repository(workspace_);
    const strings files = {".envrc",
                           ".bashrc",
                           ".profile",
                           ".zshrc",
                           ".npmrc",
                           ".gitmodules",
                           ".mcp.json",
                           "pip.conf",
                           "rust-toolchain.toml",
                           ".vscode/tasks.json",
                           ".claude/settings.json",
                           ".codex/config.toml",
                           ".cursor/mcp.json",
                           ".agents/x",
                           ".idea/workspace.xml",
                           ".git/hooks/pre-commit",
                           ".git/config"};
    for (const std::string& name : files) {
        const fs::path path = workspace_ / name;
        fs::create_directories(path.parent_path());
        if (name != ".git/config") test::write_file(path, "original " + name + "\n");
    }
    const auto before = snapshot(workspace_);
    std::string attack;
    for (const std::string& p : files) {
        attack += "echo evil >> " + p + "; echo evil > " + p + "; mv " + p + " " + p +
                  ".moved; rm -f " + p + "; ln -sf /etc/passwd " + p +
                  "; echo x > x.$$ && mv -f x.$$ " + p + "; ";
    }
    attack +=
        "rm -rf .claude .vscode; mv .git .git.moved; "
        "printf '#!/bin/sh\\ntouch \"$HOME/../hook-ran\"\\n' > .git/hooks/pre-commit; "
        "git config core.hooksPath /tmp; exit 0";
    auto record = run(request(attack, sandbox_mode::workspace_write));
    ASSERT_TRUE(record.has_value()) << refused_;
    ASSERT_EQ(record->outcome.exit_code, std::optional<int>(0)) << describe(*record);
    // rm -rf and mv empty what is writable in .git (objects, refs): the protected parts stay.
    const auto after = snapshot(workspace_);
    for (const auto& [path, content] : before) {
        const bool writable_git_part = path.find(".git/") != std::string::npos &&
                                       path.find(".git/hooks") == std::string::npos &&
                                       path.find(".git/config") == std::string::npos;
        if (writable_git_part) continue;
        ASSERT_TRUE(after.contains(path)) << path << " is gone\n" << describe(*record);
        EXPECT_EQ(after.at(path), content) << path << "\n" << describe(*record);
    }
    EXPECT_FALSE(fs::exists(base_ / "hook-ran"));
    // The protected paths are in the record, and the run that tried is a denied one.
    EXPECT_THAT(record->sandbox.protected_paths,
                Contains((workspace_ / ".git" / "hooks").string()));
    EXPECT_THAT(record->sandbox.protected_paths, Contains((workspace_ / ".envrc").string()));
    // Kept on every rung: no gap names them (the Landlock rung's own gaps are its metadata's).
    EXPECT_THAT(record->sandbox.gaps, Not(Contains(HasSubstr("protected"))));
    // How: the record says, per part, prevented or put back (the rest is detected afterwards).
    ASSERT_TRUE(record->sandbox.judged);
    EXPECT_EQ(record->sandbox.judged->kept, bwrap() ? "prevented" : "restored");
    if (!bwrap()) {
        EXPECT_TRUE(record->sandbox.denied) << describe(*record);
        // Put back afterwards: the record says which.
        ASSERT_TRUE(record->sandbox.judged);
        const auto& judged = record->sandbox.judged->neutralized;
        EXPECT_TRUE(std::any_of(judged.begin(), judged.end(), [this](const auto& n) {
            return n.path == (workspace_ / ".envrc").string() &&
                   n.action == neutral_action::restored;
        })) << describe(*record);
    }
}

// A protected name at the top that is a symlink into the workspace (`.envrc` to a script kept
// under version control, `.vscode` to a shared directory): what it leads to is what the tool
// reads, and it is kept as the name would be.
TEST_P(PathPolicy, WhatASymlinkedProtectedNameLeadsToIsKept) {
    make_repository(workspace_);
    fs::create_directories(workspace_ / "scripts");
    fs::create_directories(workspace_ / "shared" / "vscode");
    test::write_file(workspace_ / "scripts" / "env.sh", "export A=1\n");
    test::write_file(workspace_ / "shared" / "vscode" / "tasks.json", "{}\n");
    fs::create_symlink("scripts/env.sh", workspace_ / ".envrc");
    fs::create_directory_symlink("shared/vscode", workspace_ / ".vscode");
    auto record = run(
        request("echo 'touch /tmp/pwned' >> scripts/env.sh; echo evil > shared/vscode/tasks.json; "
                "echo evil > shared/vscode/launch.json; exit 0",
                sandbox_mode::workspace_write));
    ASSERT_TRUE(record.has_value()) << refused_;
    EXPECT_EQ(test::read_file(workspace_ / "scripts" / "env.sh"), "export A=1\n")
        << describe(*record);
    EXPECT_EQ(test::read_file(workspace_ / "shared" / "vscode" / "tasks.json"), "{}\n");
    EXPECT_FALSE(fs::exists(workspace_ / "shared" / "vscode" / "launch.json"));
    EXPECT_THAT(record->sandbox.protected_paths,
                Contains((workspace_ / "scripts" / "env.sh").string()));
}

// Beneath the top, and where nothing existed, a run may create and change protected names: a
// nested repository's hooks and configuration, an `.envrc` in a subdirectory, `.vscode` in a new
// project. Once it is over, none of it is left to run: what it made is quarantined, a git
// configuration keeps only what is inert, and the record names each.
TEST_P(PathPolicy, WhatARunMakesAtProtectedNamesIsTakenAway) {
    make_repository(workspace_);
    make_repository(workspace_ / "lib" / "inner");
    fs::create_directories(workspace_ / "plain");
    test::write_file(workspace_ / "lib" / "inner" / ".envrc", "original\n");
    const auto before = snapshot(workspace_);
    std::string attack;
    for (const std::string& root :
         {std::string(), std::string("lib/inner/"), std::string("plain/")}) {
        for (const std::string name : {".envrc", ".bashrc", ".mcp.json", ".npmrc", "mise.toml"}) {
            attack += "echo evil > " + root + name + "; ";
        }
        for (const std::string dir : {".claude", ".vscode", ".codex", ".cursor", ".cargo"}) {
            attack += "mkdir -p " + root + dir + " && echo evil > " + root + dir + "/config.toml; ";
        }
    }
    attack +=
        "printf '#!/bin/sh\\necho ran > ran\\n' > lib/inner/.git/hooks/post-checkout; "
        "chmod +x lib/inner/.git/hooks/post-checkout; "
        "git -C lib/inner config core.fsmonitor 'echo ran > ran'; "
        "git -C lib/inner config alias.st '-c core.fsmonitor=x status'; "
        "ls -a; exit 0";
    auto record = run(request(attack, sandbox_mode::workspace_write));
    ASSERT_TRUE(record.has_value()) << refused_;
    ASSERT_EQ(record->outcome.exit_code, std::optional<int>(0)) << describe(*record);
    // `ls -a` inside showed the tree as it is: no name that does not exist.
    EXPECT_THAT(record->stdout_output.text, Not(HasSubstr(".git/")));
    EXPECT_THAT(record->stdout_output.text, Not(HasSubstr("lefthook")));
    auto after = snapshot(workspace_);
    // The nested repository's configuration, rewritten without what git would run.
    const std::string inner_config = (fs::path("lib") / "inner" / ".git" / "config").string();
    ASSERT_TRUE(after.contains(inner_config));
    EXPECT_THAT(after.at(inner_config), Not(HasSubstr("fsmonitor")));
    EXPECT_THAT(after.at(inner_config), Not(HasSubstr("status")));
    EXPECT_THAT(after.at(inner_config), HasSubstr("repositoryformatversion"));
    after.erase(inner_config);
    // Everything else is as it was: what the run made is gone, its changes with it. The index
    // and such are git's own; `git config` touched nothing else.
    for (const auto& [path, content] : after) {
        // A directory the command made and left empty (`.cargo` once its config.toml is taken)
        // holds nothing to run.
        if (content == "dir") continue;
        EXPECT_TRUE(before.contains(path)) << path << " was made by the run\n" << describe(*record);
    }
    EXPECT_FALSE(fs::exists(workspace_ / "lib" / "inner" / ".envrc"))
        << "an existing one the run changed is taken too";
    ASSERT_TRUE(record->sandbox.judged);
    EXPECT_TRUE(record->sandbox.denied);
    std::set<std::string> taken;
    for (const auto& n : record->sandbox.judged->neutralized) {
        taken.insert(n.path);
        if (n.action == neutral_action::quarantined) {
            EXPECT_TRUE(fs::exists(n.kept_at)) << n.path << " -> " << n.kept_at;
        }
    }
    EXPECT_THAT(taken, Contains((workspace_ / ".vscode").string()));
    EXPECT_THAT(taken, Contains((workspace_ / "plain" / ".envrc").string()));
    EXPECT_THAT(
        taken,
        Contains((workspace_ / "lib" / "inner" / ".git" / "hooks" / "post-checkout").string()));
    EXPECT_THAT(record->sandbox.gaps, Not(Contains(HasSubstr("protected"))));
    // The person checks out and looks at the status outside the sandbox: nothing runs.
    ASSERT_EQ(on_host(workspace_ / "lib" / "inner", "git checkout -q -b x && git status"), 0);
    EXPECT_FALSE(fs::exists(workspace_ / "lib" / "inner" / "ran"));

    // A read-only run writes nothing and leaves nothing.
    const auto ro_before = snapshot(workspace_);
    auto read_only = run(request("ls -a >/dev/null", sandbox_mode::read_only));
    ASSERT_TRUE(read_only.has_value()) << refused_;
    EXPECT_EQ(snapshot(workspace_), ro_before);
}

// git works inside under workspace-write: add, commit, a new branch, a new repository. A hook the
// run plants, at the top or in the repository it made, never runs when the person commits
// afterwards, outside any sandbox.
TEST_P(PathPolicy, GitCommitWorksInsideAndAPlantedHookNeverRunsOutside) {
    make_repository(workspace_);
    const fs::path marker = base_.path() / "hook-ran";
    auto record = run(
        request("echo two >> f && echo new > g && git add -A && git commit -qm two && "
                "git checkout -qb feature && echo three >> f && git commit -qam three && "
                "git init -q newsub && printf '#!/bin/sh\\ntouch " +
                    marker.string() +
                    "\\n' > newsub/.git/hooks/pre-commit && chmod +x newsub/.git/hooks/pre-commit; "
                    "printf '#!/bin/sh\\ntouch " +
                    marker.string() +
                    "\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; exit 0",
                sandbox_mode::workspace_write));
    ASSERT_TRUE(record.has_value()) << refused_;
    ASSERT_EQ(record->outcome.exit_code, std::optional<int>(0)) << describe(*record);
    EXPECT_EQ(on_host(workspace_, "git log --oneline feature | wc -l | grep -qx 3"), 0)
        << describe(*record);
    EXPECT_FALSE(fs::exists(workspace_ / ".git" / "hooks" / "pre-commit")) << describe(*record);
    EXPECT_FALSE(fs::exists(workspace_ / "newsub" / ".git" / "hooks" / "pre-commit"))
        << describe(*record);
    // The person commits outside the sandbox, in both repositories.
    ASSERT_EQ(on_host(workspace_, "git commit -q --allow-empty -m outside"), 0);
    ASSERT_EQ(on_host(workspace_ / "newsub",
                      "git -c user.email=t@t -c user.name=t commit -q --allow-empty -m outside"),
              0);
    EXPECT_FALSE(fs::exists(marker)) << "a hook planted by the run ran outside the sandbox";
}

// A credential store that does not exist when the run starts (a first `aws configure` on the
// host while a job runs) is as unreadable as one that did, wherever Landlock holds.
TEST_P(PathPolicy, ACredentialStoreMadeDuringTheRunIsUnreadable) {
    if (landlock::query_abi() <= 0) CORDON_SKIP_OR_FAIL("needs Landlock");
    const fs::path started = workspace_ / "started";
    const fs::path release = base_ / "release";
    const fs::path store = home_ / ".aws" / "credentials";
    fs::remove_all(home_ / ".aws");
    boost::asio::io_context io;
    runtime::executor_options options;
    options.landlock_in_child = test::landlock_in_child(GetParam());
    runtime::executor exec(io.get_executor(), provider_, options);
    std::optional<runtime::run_record> record;
    exec.async_run(request("touch started; while [ ! -e '" + release.string() +
                               "' ]; do sleep 0.01; done; cat '" + store.string() + "'",
                           sandbox_mode::workspace_write),
                   [&](runtime::run_record r) { record = std::move(r); });
    std::thread host([&] {
        // The store appears once the run is under way.
        const auto deadline = std::chrono::steady_clock::now() + generous;
        while (!fs::exists(started) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        fs::create_directories(store.parent_path());
        test::write_file(store, "SECRET\n");
        test::write_file(release, "");
    });
    io.run();
    host.join();
    ASSERT_TRUE(record);
    EXPECT_THAT(record->stdout_output.text, Not(HasSubstr("SECRET"))) << describe(*record);
    EXPECT_TRUE(record->sandbox.denied) << describe(*record);
    EXPECT_THAT(record->sandbox.hidden_paths, Contains((home_ / ".aws").string()));
}

// A denied file is denied by what it is, not by its name: another name of it beside a denied path
// (a hard link made on the host, `ln ~/.ssh/id_ed25519 ~/notes`, or in a directory of the home on
// the way to another store) is not readable either, wherever Landlock holds (the Landlock rung,
// and the launcher inside bwrap). A file of one name beside it stays readable, and on the
// Landlock rung one of several names that is no denied file's too.
TEST_P(PathPolicy, AnotherNameOfADeniedFileIsUnreadable) {
    if (landlock::query_abi() <= 0) CORDON_SKIP_OR_FAIL("needs Landlock");
    fs::create_directories(home_ / ".ssh");
    fs::create_directories(home_ / ".config" / "gh");
    test::write_file(home_ / ".ssh" / "id_ed25519", "SECRET KEY\n");
    test::write_file(home_ / ".config" / "gh" / "hosts.yml", "SECRET TOKEN\n");
    fs::create_hard_link(home_ / ".ssh" / "id_ed25519", home_ / "notes");
    fs::create_hard_link(home_ / ".config" / "gh" / "hosts.yml", home_ / ".config" / "saved");
    test::write_file(home_ / "plain", "PLAIN\n");
    // A file of several names that is no denied file's (dotfiles kept by hard links): readable.
    fs::create_directories(home_ / "dotfiles");
    test::write_file(home_ / "dotfiles" / "gitconfig", "LINKED\n");
    fs::create_hard_link(home_ / "dotfiles" / "gitconfig", home_ / ".gitconfig");
    for (const sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        auto record = run(request(
            "cat '" + (home_ / "notes").string() + "' '" + (home_ / ".config" / "saved").string() +
                "' '" + (home_ / "plain").string() + "' '" + (home_ / ".gitconfig").string() + "'",
            mode));
        ASSERT_TRUE(record.has_value()) << refused_;
        EXPECT_THAT(record->stdout_output.text, Not(HasSubstr("SECRET"))) << describe(*record);
        EXPECT_THAT(record->stdout_output.text, HasSubstr("PLAIN")) << describe(*record);
        // Inside bwrap the denied files are behind its masks, and which file another name is
        // cannot be told: every file of several names on the way goes ungranted there.
        if (!bwrap()) {
            EXPECT_THAT(record->stdout_output.text, HasSubstr("LINKED")) << describe(*record);
        }
    }
}

// What a symlink directly in a denied directory leads to (a store kept elsewhere: /run/secrets,
// a key on another disk) is hidden as the link is: not read through the link, nor by its own
// name, a file or a directory, on every rung. A link to a place that holds the system's
// directories is not followed: the command still runs.
TEST_P(PathPolicy, WhatALinkInADeniedDirectoryLeadsToIsHidden) {
    fs::create_directories(home_ / ".aws");
    fs::create_directories(home_ / ".ssh");
    fs::create_directories(beside_ / "secrets");
    fs::create_directories(beside_ / "disk" / "keys");
    test::write_file(beside_ / "secrets" / "aws", "SECRET AWS\n");
    test::write_file(beside_ / "disk" / "keys" / "id", "SECRET KEY\n");
    fs::create_symlink(beside_ / "secrets" / "aws", home_ / ".aws" / "credentials");
    fs::create_symlink(beside_ / "disk" / "keys", home_ / ".ssh" / "keys");
    fs::create_symlink("/usr", home_ / ".ssh" / "tools");
    // Nor what lies in the system's programs, libraries and configuration.
    fs::create_symlink("/usr/bin/env", home_ / ".ssh" / "env");
    fs::create_symlink("/etc/passwd", home_ / ".aws" / "passwd");
    // Nor the home, nor /opt; and links past the places a run hides for them (made by a run in a
    // store it could write) push no run past what it may deny: they are named.
    // (Those of another denied directory do not use up this one's places.)
    const test::scoped_env home("HOME", home_.string());
    fs::create_symlink(home_, home_ / ".ssh" / "home");
    fs::create_symlink("/opt", home_ / ".ssh" / "opt");
    fs::create_directories(home_ / ".gnupg");
    for (int i = 0; i < 40; ++i) {
        fs::create_symlink(beside_ / "nowhere" / std::to_string(i),
                           home_ / ".gnupg" / ("link" + std::to_string(i)));
    }
    test::write_file(home_ / "plain", "PLAIN\n");
    const std::string script =
        "cat ~/.aws/credentials ~/.ssh/keys/id '" + (beside_ / "secrets" / "aws").string() + "' '" +
        (beside_ / "disk" / "keys" / "id").string() +
        "'; test -x /usr/bin/env && test -d /opt && test -r /etc/passwd && cat ~/plain && "
        "echo runs";
    for (const sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        auto record = run(request(script, mode));
        ASSERT_TRUE(record.has_value()) << refused_;
        EXPECT_THAT(record->stdout_output.text, Not(HasSubstr("SECRET"))) << describe(*record);
        EXPECT_EQ(record->stdout_output.text, "PLAIN\nruns\n") << describe(*record);
        EXPECT_THAT(record->sandbox.gaps,
                    Contains(HasSubstr("what links in denied directories lead to beyond")))
            << describe(*record);
        EXPECT_THAT(record->sandbox.hidden_paths, Contains((beside_ / "secrets" / "aws").string()));
        EXPECT_THAT(record->sandbox.hidden_paths, Contains((beside_ / "disk" / "keys").string()));
        EXPECT_THAT(record->sandbox.hidden_paths, Not(Contains("/usr")));
    }
    // What --allow-read lets through is not hidden, through the link or by its name.
    runtime::run_request allowed =
        request("cat ~/.aws/credentials '" + (beside_ / "secrets" / "aws").string() + "'",
                sandbox_mode::read_only);
    allowed.rules.allow_read = {beside_ / "secrets"};
    auto record = run(std::move(allowed));
    ASSERT_TRUE(record.has_value()) << refused_;
    if (bwrap()) {
        // bwrap's mask over ~/.aws hides the link itself; the target reads by its name.
        EXPECT_EQ(record->stdout_output.text, "SECRET AWS\n") << describe(*record);
    } else {
        EXPECT_EQ(record->stdout_output.text, "SECRET AWS\nSECRET AWS\n") << describe(*record);
    }
    EXPECT_THAT(record->sandbox.hidden_paths,
                Not(Contains((beside_ / "secrets" / "aws").string())));
    // On the host, nothing was changed.
    EXPECT_EQ(test::read_file(beside_ / "secrets" / "aws"), "SECRET AWS\n");
}

// A denied file is hidden by its path: another name the host made elsewhere reads it, on every
// rung. The record names each such file (a denied file, or one directly in a denied directory),
// and only those: a file read through another name is one the record names, and a file of one
// name, or one an --allow-read lets through, is not named.
TEST_P(PathPolicy, ADeniedFileOfSeveralNamesIsNamedInTheRecord) {
    fs::create_directories(home_ / ".ssh");
    test::write_file(home_ / ".ssh" / "id_ed25519", "SECRET KEY\n");
    test::write_file(home_ / ".ssh" / "known_hosts", "hosts\n");
    test::write_file(home_ / ".pgpass", "SECRET PASSWORD\n");
    test::write_file(home_ / ".netrc", "SECRET NETRC\n");
    fs::create_hard_link(home_ / ".ssh" / "id_ed25519", beside_ / "id-copy");
    fs::create_hard_link(home_ / ".pgpass", beside_ / "pgpass-copy");
    const auto named_in = [](const runtime::run_record& record) {
        std::string line;
        for (const std::string& gap : record.sandbox.gaps) {
            if (gap.starts_with("denied files with other names")) line = gap;
        }
        return line;
    };
    const std::string script =
        "cat '" + (beside_ / "id-copy").string() + "' '" + (beside_ / "pgpass-copy").string() + "'";
    for (const sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        auto record = run(request(script, mode));
        ASSERT_TRUE(record.has_value()) << refused_;
        EXPECT_EQ(record->stdout_output.text, "SECRET KEY\nSECRET PASSWORD\n") << describe(*record);
        const std::string named = named_in(*record);
        EXPECT_THAT(named, HasSubstr((home_ / ".ssh" / "id_ed25519").string()))
            << describe(*record);
        EXPECT_THAT(named, HasSubstr((home_ / ".pgpass").string())) << describe(*record);
        EXPECT_THAT(named, Not(HasSubstr("known_hosts")));
        EXPECT_THAT(named, Not(HasSubstr(".netrc")));
        EXPECT_EQ(record->sandbox.enforcement, enforcement::partial);
    }
    // What an --allow-read lets through is not hidden, and not named.
    runtime::run_request allowed = request(script, sandbox_mode::read_only);
    allowed.rules.allow_read = {home_ / ".ssh"};
    auto record = run(std::move(allowed));
    ASSERT_TRUE(record.has_value()) << refused_;
    EXPECT_THAT(named_in(*record), Not(HasSubstr("id_ed25519"))) << describe(*record);
    EXPECT_THAT(named_in(*record), HasSubstr(".pgpass")) << describe(*record);
    // The other names gone, nothing is named.
    fs::remove(beside_ / "id-copy");
    fs::remove(beside_ / "pgpass-copy");
    record = run(request("cat ~/.pgpass", sandbox_mode::read_only));
    ASSERT_TRUE(record.has_value()) << refused_;
    EXPECT_EQ(named_in(*record), "") << describe(*record);
    EXPECT_TRUE(record->sandbox.denied) << describe(*record);
}

// What a host process was given in its arguments (a token on a command line) is read by a command
// exactly where the run's record says so: bwrap's pid namespace hides the host's processes and
// the record names no such gap; the Landlock rung has none, its command reads the token, and
// every record of it, in either mode, names the gap and is partial.
TEST_P(PathPolicy, AHostProcessIsSeenOnlyWhereTheRecordSaysSo) {
    const std::string token = "cordon-argv-token-" + std::to_string(::getpid());
    test::spawned_process host({test::test_child_path().string(), "sleep", "60000", token}, {});
    const std::string pid = std::to_string(host.pid());
    // Forked, it has the test's command line until its exec: wait for its own.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (test::read_file("/proc/" + pid + "/cmdline").find(token) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_NE(test::read_file("/proc/" + pid + "/cmdline").find(token), std::string::npos);
    for (const sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        auto record = run(request("tr '\\0' ' ' < /proc/" + pid + "/cmdline; echo", mode));
        ASSERT_TRUE(record.has_value()) << refused_;
        const bool seen = record->stdout_output.text.find(token) != std::string::npos;
        const bool named = std::any_of(
            record->sandbox.gaps.begin(), record->sandbox.gaps.end(), [](const std::string& gap) {
                return gap.find("/proc/PID/cmdline") != std::string::npos;
            });
        EXPECT_EQ(seen, !bwrap()) << describe(*record);
        EXPECT_EQ(named, seen) << describe(*record);
        if (named) {
            EXPECT_EQ(record->sandbox.enforcement, enforcement::partial);
        }
    }
}

// Every default credential store is unreadable in every confined mode, reading one is a denial,
// and --allow-read lets one through. The home directory itself stays listable.
TEST_P(PathPolicy, CredentialStoresAreUnreadableUntilAllowed) {
    const strings stores = {".ssh/id_ed25519",
                            ".aws/credentials",
                            ".netrc",
                            ".config/gh/hosts.yml",
                            ".docker/config.json",
                            ".kube/config",
                            ".git-credentials",
                            ".npmrc",
                            ".pypirc",
                            ".gnupg/private-keys-v1.d/k",
                            ".config/gcloud/credentials.db",
                            ".password-store/p.gpg"};
    for (const std::string& store : stores) {
        fs::create_directories((home_ / store).parent_path());
        test::write_file(home_ / store, "SECRET-" + store + "\n");
    }
    test::write_file(home_ / "notes.txt", "readable\n");
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        for (const std::string& store : stores) {
            runtime::run_request req = request("cat '" + (home_ / store).string() + "'", mode);
            auto record = run(std::move(req));
            ASSERT_TRUE(record.has_value()) << refused_;
            EXPECT_NE(record->outcome.exit_code, std::optional<int>(0)) << store;
            EXPECT_THAT(record->stdout_output.text, Not(HasSubstr("SECRET"))) << store;
            EXPECT_TRUE(record->sandbox.denied) << store << "\n" << describe(*record);
        }
        runtime::run_request listing = request(
            "cat '" + (home_ / "notes.txt").string() + "' && ls -a '" + home_.string() + "'", mode);
        auto listed = run(std::move(listing));
        ASSERT_TRUE(listed.has_value()) << refused_;
        EXPECT_EQ(listed->outcome.exit_code, std::optional<int>(0)) << describe(*listed);
        EXPECT_THAT(listed->stdout_output.text, HasSubstr("readable"));
        EXPECT_THAT(listed->sandbox.hidden_paths, Contains((home_ / ".ssh").string()));

        // Let ~/.ssh through (a `git push` over ssh), and only it.
        runtime::run_request allowed = request("cat '" + (home_ / ".ssh/id_ed25519").string() +
                                                   "'; cat '" + (home_ / ".netrc").string() + "'",
                                               mode);
        allowed.rules.allow_read = {home_ / ".ssh"};
        auto let_through = run(std::move(allowed));
        ASSERT_TRUE(let_through.has_value()) << refused_;
        EXPECT_THAT(let_through->stdout_output.text, HasSubstr("SECRET-.ssh/id_ed25519"));
        EXPECT_THAT(let_through->stdout_output.text, Not(HasSubstr("SECRET-.netrc")));

        // One file inside a hidden directory let through, the rest of it still hidden.
        runtime::run_request one = request("cat '" + (home_ / ".aws/config").string() + "'; cat '" +
                                               (home_ / ".aws/credentials").string() + "'",
                                           mode);
        test::write_file(home_ / ".aws" / "config", "REGION\n");
        one.rules.allow_read = {home_ / ".aws" / "config"};
        auto exception = run(std::move(one));
        ASSERT_TRUE(exception.has_value()) << refused_;
        EXPECT_THAT(exception->stdout_output.text, HasSubstr("REGION"));
        EXPECT_THAT(exception->stdout_output.text, Not(HasSubstr("SECRET")));
    }
}

// Extra writable roots are writable, what lies beside them is not, and a root that is a symlink
// or a pseudo filesystem is refused before anything runs.
TEST_P(PathPolicy, ExtraWritableRootsAndTheirRefusals) {
    const fs::path extra = base_ / "extra";
    fs::create_directories(extra);
    runtime::run_request req =
        request("echo in > '" + (extra / "a").string() + "' && echo ws > ws.txt; echo out > '" +
                    (beside_ / "b").string() + "'",
                sandbox_mode::workspace_write);
    req.rules.writable_roots = {extra};
    auto record = run(std::move(req));
    ASSERT_TRUE(record.has_value()) << refused_;
    EXPECT_EQ(test::read_file(extra / "a"), "in\n") << describe(*record);
    EXPECT_EQ(test::read_file(workspace_ / "ws.txt"), "ws\n");
    EXPECT_FALSE(fs::exists(beside_ / "b"));
    EXPECT_TRUE(record->sandbox.denied);
    EXPECT_THAT(record->sandbox.writable_roots, Contains(extra.string()));

    // Protected names hold in an extra root as in the workspace.
    {
        test::write_file(extra / ".envrc", "original\n");
        runtime::run_request protect =
            request("echo evil > '" + (extra / ".envrc").string() + "'; echo evil > '" +
                        (extra / ".mcp.json").string() + "'; exit 0",
                    sandbox_mode::workspace_write);
        protect.rules.writable_roots = {extra};
        auto kept = run(std::move(protect));
        ASSERT_TRUE(kept.has_value()) << refused_;
        EXPECT_EQ(test::read_file(extra / ".envrc"), "original\n") << describe(*kept);
        EXPECT_FALSE(fs::exists(extra / ".mcp.json")) << describe(*kept);
    }

    const fs::path link = base_ / "link-to-beside";
    fs::create_directory_symlink(beside_, link);
    for (const fs::path& bad : {link, fs::path("/proc/self")}) {
        SCOPED_TRACE(bad.string());
        runtime::run_request refused =
            request("echo x > '" + (bad / "c").string() + "'", sandbox_mode::workspace_write);
        refused.rules.writable_roots = {bad};
        auto never = run(std::move(refused));
        ASSERT_TRUE(never.has_value()) << refused_;
        EXPECT_EQ(never->outcome.kind, classify::outcome_kind::not_started) << describe(*never);
        EXPECT_THAT(never->outcome.message, HasSubstr("writable root"));
    }
    EXPECT_FALSE(fs::exists(beside_ / "c"));
}

// A read-only carve-out beneath a writable root: bwrap keeps it; the Landlock rung cannot, and
// runs it only with the gap accepted and named.
TEST_P(PathPolicy, ReadOnlyCarveOutsBeneathAWritableRoot) {
    fs::create_directories(workspace_ / "vendor");
    test::write_file(workspace_ / "vendor" / "lib.c", "original\n");
    test::write_file(workspace_ / "single.txt", "original\n");
    const std::string script =
        "echo evil > vendor/lib.c; echo new > vendor/new.c; echo evil > single.txt; "
        "echo ok > other.txt; exit 0";
    runtime::run_request req = request(script, sandbox_mode::workspace_write);
    req.rules.read_only = {workspace_ / "vendor", workspace_ / "single.txt"};
    auto record = run(req);
    if (!bwrap()) {
        ASSERT_FALSE(record.has_value());
        EXPECT_THAT(refused_, HasSubstr("read-only paths beneath a writable root"));
        req.rules.accept_partial = true;
        auto accepted = run(req);
        ASSERT_TRUE(accepted.has_value()) << refused_;
        EXPECT_EQ(accepted->sandbox.enforcement, std::optional(enforcement::partial));
        EXPECT_THAT(accepted->sandbox.gaps, Contains(HasSubstr("vendor")));
        return;
    }
    ASSERT_TRUE(record.has_value()) << refused_;
    EXPECT_EQ(test::read_file(workspace_ / "vendor" / "lib.c"), "original\n") << describe(*record);
    EXPECT_FALSE(fs::exists(workspace_ / "vendor" / "new.c"));
    EXPECT_EQ(test::read_file(workspace_ / "single.txt"), "original\n");
    EXPECT_EQ(test::read_file(workspace_ / "other.txt"), "ok\n");
}

// Carve-outs and hidden stores are kept by their place, not their name: a run cannot rename the
// directory that holds one and put a directory of its own under the name (the carve-out's name
// writable, the store readable where it went in the next run), and what it makes where a store
// is missing (a link, a second name of its own file, that a host tool would write the secret
// through) is taken. Only bwrap keeps paths inside a writable root; the Landlock rung refuses
// both.
TEST_P(PathPolicy, CarveOutsAndHiddenStoresAreKeptByTheirPlace) {
    const fs::path home = workspace_ / "home" / "me";
    fs::create_directories(workspace_ / "third_party" / "vendor");
    test::write_file(workspace_ / "third_party" / "vendor" / "lib.c", "original\n");
    fs::create_directories(home / ".config" / "gcloud");
    test::write_file(home / ".config" / "gcloud" / "credentials.db", "secret\n");
    const std::string script = R"(
        mv third_party third_party.old && mkdir -p third_party/vendor &&
            echo evil > third_party/vendor/lib.c
        echo mine > leak && ln leak home/me/.git-credentials
        ln -s ../../leak home/me/.netrc
        mv home/me/.config home/me/.config.old
        mv home/me home/me.old
        exit 0)";
    auto asked = request(script, sandbox_mode::workspace_write);
    asked.rules.read_only = {workspace_ / "third_party" / "vendor"};
    asked.rules.deny_read = {home / ".config" / "gcloud", home / ".git-credentials",
                             home / ".netrc"};
    if (!bwrap()) {
        EXPECT_FALSE(run(asked).has_value()) << "the Landlock rung keeps neither";
        return;
    }
    asked.rules.accept_partial = true;  // the stores that are not there: bwrap cannot keep them
    auto record = run(std::move(asked));
    ASSERT_TRUE(record.has_value()) << refused_;
    EXPECT_EQ(test::read_file(workspace_ / "third_party" / "vendor" / "lib.c"), "original\n")
        << describe(*record);
    EXPECT_FALSE(fs::exists(workspace_ / "third_party.old"));
    EXPECT_EQ(test::read_file(home / ".config" / "gcloud" / "credentials.db"), "secret\n");
    EXPECT_FALSE(fs::exists(home / ".config.old"));
    EXPECT_FALSE(fs::exists(workspace_ / "home" / "me.old"));
    EXPECT_FALSE(fs::exists(fs::symlink_status(home / ".netrc"))) << describe(*record);
    EXPECT_FALSE(fs::exists(home / ".git-credentials")) << describe(*record);
    EXPECT_EQ(test::read_file(workspace_ / "leak"), "mine\n");
}

// What is kept is kept from the outermost place the run may write: with a writable root around
// the workspace, renaming the directory that holds the workspace moved the kept paths away with
// their mounts, and what the run put under the old names was never judged. And a kept file of
// several names is written through another one, which no read-only bind covers: it is judged.
TEST_P(PathPolicy, KeptPathsStayKeptFromAnOuterRootAndThroughOtherNames) {
    const fs::path outer = base_ / "outer";
    const fs::path inner = outer / "x" / "ws";
    fs::create_directories(inner / "vendor");
    test::write_file(inner / "vendor" / "f", "orig\n");
    make_repository(inner);
    fs::create_directories(inner / "scripts");
    test::write_file(inner / "scripts" / "pc", "#!/bin/sh\n");
    fs::create_hard_link(inner / "scripts" / "pc", inner / ".git" / "hooks" / "pre-commit");
    test::write_file(inner / "scripts" / "envrc", "export A=1\n");
    fs::create_hard_link(inner / "scripts" / "envrc", inner / ".envrc");
    const std::string script = R"(
        echo 'echo PWNED' >> scripts/pc; echo 'echo PWNED' >> scripts/envrc
        cd ../..; mv x y; mkdir -p x/ws/vendor && echo PWNED > x/ws/vendor/f
        mkdir -p x/ws/.git/hooks && echo 'echo PWNED' > x/ws/.git/hooks/post-checkout
        exit 0)";
    auto asked = request(script, sandbox_mode::workspace_write);
    asked.workspace_root = inner;
    asked.rules.writable_roots = {outer};
    asked.rules.read_only = {inner / "vendor"};
    auto record = run(asked);
    if (!bwrap()) {
        EXPECT_FALSE(record.has_value()) << "the Landlock rung keeps no carve-out";
        asked.rules.read_only.clear();
        record = run(asked);
    }
    ASSERT_TRUE(record.has_value()) << refused_;
    if (bwrap()) {
        EXPECT_EQ(test::read_file(inner / "vendor" / "f"), "orig\n") << describe(*record);
        EXPECT_FALSE(fs::exists(outer / "y")) << describe(*record);
    }
    for (const fs::path& kept : {inner / ".git" / "hooks" / "pre-commit", inner / ".envrc",
                                 inner / ".git" / "hooks" / "post-checkout"}) {
        if (fs::exists(kept)) {
            EXPECT_THAT(test::read_file(kept), Not(HasSubstr("PWNED")))
                << kept << describe(*record);
        }
    }
}

// /tmp under each tmp value: private is writable and never the host's (bwrap's tmpfs, or the
// Landlock rung's own directory named by $TMPDIR, gone after the run); host is the host's; none
// is not writable at all.
TEST_P(PathPolicy, TmpIsPrivateHostOrNone) {
    const std::string name = "cordon-path-policy-tmp-" + std::to_string(::getpid());
    const fs::path host_file = fs::path("/tmp") / name;
    fs::remove(host_file);
    for (auto tmp : {tmp_policy::private_tmp, tmp_policy::host, tmp_policy::none}) {
        SCOPED_TRACE(std::string(to_string(tmp)));
        // The last command decides the exit code: a write to the host's /tmp.
        runtime::run_request req = request("echo private > \"${TMPDIR:-/tmp}/" + name +
                                               "\" && echo \"$TMPDIR\"; echo host > /tmp/" + name,
                                           sandbox_mode::workspace_write);
        req.rules.tmp = tmp;
        auto record = run(std::move(req));
        ASSERT_TRUE(record.has_value()) << refused_;
        EXPECT_EQ(record->sandbox.tmp, std::optional(tmp));
        switch (tmp) {
            case tmp_policy::private_tmp:
                EXPECT_FALSE(fs::exists(host_file)) << describe(*record);
                if (bwrap()) {
                    EXPECT_EQ(record->outcome.exit_code, std::optional<int>(0))
                        << describe(*record);
                } else {
                    EXPECT_TRUE(record->sandbox.denied) << "the host's /tmp is closed";
                    const std::string out = record->stdout_output.text;
                    const std::string dir = out.substr(0, out.find('\n'));
                    EXPECT_TRUE(dir.starts_with("/tmp/cordon-tmp-")) << out;
                    EXPECT_FALSE(fs::exists(dir)) << "the private /tmp outlived the run";
                }
                break;
            case tmp_policy::host:
                EXPECT_EQ(test::read_file(host_file), "host\n") << describe(*record);
                fs::remove(host_file);
                break;
            case tmp_policy::none:
                EXPECT_FALSE(fs::exists(host_file)) << describe(*record);
                EXPECT_TRUE(record->sandbox.denied) << describe(*record);
                break;
        }
    }
}

// Many runs of one process in one workspace at once (the MCP server's jobs): every one runs with
// its protection and succeeds, each one's judgement sees the others' work as harmless, and once
// they are over the tree holds what their commands made and nothing else.
TEST_P(PathPolicy, ConcurrentRunsInOneWorkspaceAllSucceedAndLeaveNothing) {
    make_repository(workspace_);
    const auto before = snapshot(workspace_);
    constexpr std::size_t runs = 8;
    const fs::path go = base_ / "go";
    boost::asio::io_context io;
    runtime::executor_options options;
    options.landlock_in_child = test::landlock_in_child(GetParam());
    runtime::executor exec(io.get_executor(), provider_, options);
    std::vector<std::optional<runtime::run_record>> records(runs);
    for (std::size_t i = 0; i < runs; ++i) {
        // All at work together: each waits for the go before it writes.
        exec.async_run(request("while [ ! -e '" + go.string() +
                                   "' ]; do sleep 0.01; done; "
                                   "git status --short >/dev/null; ls -la >/dev/null; echo " +
                                   std::to_string(i) + " > out-" + std::to_string(i) + ".txt",
                               sandbox_mode::workspace_write),
                       [&records, i](runtime::run_record r) { records[i] = std::move(r); });
    }
    std::thread starter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        test::write_file(go, "");
    });
    io.run();
    starter.join();
    auto after = snapshot(workspace_);
    for (std::size_t i = 0; i < runs; ++i) {
        ASSERT_TRUE(records[i]);
        EXPECT_EQ(records[i]->outcome.exit_code, std::optional<int>(0)) << describe(*records[i]);
        EXPECT_FALSE(records[i]->sandbox.denied) << describe(*records[i]);
        const std::string out = "out-" + std::to_string(i) + ".txt";
        EXPECT_EQ(after[out], std::to_string(i) + "\n");
        after.erase(out);
    }
    for (const auto& [path, content] : after) {
        if (path.starts_with(".git/")) continue;  // git status may refresh the index
        EXPECT_TRUE(before.contains(path)) << path << " was left behind";
    }
    EXPECT_EQ(on_host(workspace_,
                      "git status --porcelain --ignored | grep -v '^?? out-' | "
                      "grep -q . && exit 1 || exit 0"),
              0);
}

// Every name of every class, made by a run where it is looked for: a name of every depth in a
// subdirectory of the workspace, a name anchored to the homes in a home that lies in the
// workspace, and a command in a directory on PATH there (one that exists, one that does not yet).
// Each is taken away once the run is over; the names anchored to the homes, made where no home
// is (a project's own `bin`, `.ssh`), stay.
TEST_P(PathPolicy, EveryProtectedNameARunMakesWhereItIsLookedForIsTakenAway) {
    const fs::path home = workspace_ / "home" / "me";
    const fs::path tools = home / "opt" / "bin";
    const fs::path later = home / "later" / "bin";
    const fs::path venv = workspace_ / ".venv" / "bin";
    fs::create_directories(tools);
    fs::create_directories(venv);
    test::write_file(tools / "mytool", "real\n");
    test::scoped_env user_home("HOME", home.string());
    test::scoped_env path(
        "PATH", tools.string() + ":" + later.string() + ":" + venv.string() + ":/usr/bin:/bin");
    std::vector<fs::path> planted{tools / "ls", later / "git"};
    // A project's own directory on PATH, outside a home: its package managers write it.
    std::vector<fs::path> beside{venv / "pytest"};
    for (const protected_class& c : protected_classes()) {
        for (std::string_view name : c.names) {
            // git's own parts are judged by their content (GitCommitWorksInside... and the
            // judgement's suite).
            if (name == path_directories || name.starts_with(".git") || judged_by_content(name)) {
                continue;
            }
            if (auto rest = home_anchored(name)) {
                planted.push_back(home / std::string(*rest));
                beside.push_back(workspace_ / "proj" / std::string(*rest));
            } else {
                planted.push_back(workspace_ / "proj" / "sub" / std::string(name));
            }
        }
    }
    // One mkdir for every directory, then the shell's own writes: a process per file would
    // cost the suite seconds.
    std::string directories;
    std::string writes;
    for (const auto* list : {&planted, &beside}) {
        for (const fs::path& file : *list) {
            directories += " '" + file.parent_path().string() + "'";
            writes += "echo evil > '" + file.string() + "'; ";
        }
    }
    auto record = run(request("mkdir -p" + directories + "; " + writes + "exit 0",
                              sandbox_mode::workspace_write));
    ASSERT_TRUE(record.has_value()) << refused_;
    ASSERT_EQ(record->outcome.exit_code, std::optional<int>(0)) << describe(*record);
    for (const fs::path& file : planted)
        EXPECT_FALSE(fs::exists(file)) << file << " was left\n" << describe(*record);
    for (const fs::path& file : beside)
        EXPECT_EQ(test::read_file(file), "evil\n") << file << " is no home's and stays";
    EXPECT_EQ(test::read_file(tools / "mytool"), "real\n");
    EXPECT_TRUE(record->sandbox.denied);
}

// What exists of a home that lies in the workspace, and a directory on PATH there, is kept
// against every way to change it: a write, an append, a new entry, a rename of the directory
// that holds it, a symlink swap. bwrap keeps it read-only; the Landlock rung puts it back and
// takes what is new.
TEST_P(PathPolicy, WhatExistsOfAHomeInARootAndOfPathIsKept) {
    const fs::path home = workspace_ / "home" / "me";
    const fs::path tools = home / "tools" / "bin";
    fs::create_directories(home / ".config" / "systemd" / "user");
    fs::create_directories(home / ".local" / "bin");
    fs::create_directories(home / ".ssh");
    fs::create_directories(tools);
    test::write_file(home / ".ssh" / "authorized_keys", "ssh-ed25519 AAAA mine\n");
    test::write_file(home / ".local" / "bin" / "tool", "real\n");
    test::write_file(home / ".config" / "systemd" / "user" / "mine.service", "[Unit]\n");
    test::write_file(tools / "mytool", "real\n");
    test::write_file(home / ".config" / "other.conf", "mine\n");
    test::scoped_env user_home("HOME", home.string());
    test::scoped_env path("PATH", tools.string() + ":/usr/bin:/bin");
    const auto before = snapshot(workspace_);
    // $H is the home; the run's own directory `evil` is linked in on the way to ~/.cargo/bin.
    const std::string script = R"(
        echo 'ssh-ed25519 AAAA evil' >> "$H/.ssh/authorized_keys"
        echo evil > "$H/.local/bin/tool"
        echo evil > "$H/.config/systemd/user/evil.service"
        echo evil > "$H/tools/bin/mytool"
        mv "$H/.local" "$H/.local.old" && mkdir -p "$H/.local/bin" &&
            echo evil > "$H/.local/bin/tool"
        rm -rf "$H/.ssh"; ln -s /tmp "$H/.ssh"
        mkdir -p evil/bin && echo evil > evil/bin/cargo && ln -s ../../../evil "$H/.cargo"
        cd "$H" && mv tools tools.old && mkdir -p tools/bin && echo evil > tools/bin/mytool
        exit 0)";
    auto record =
        run(request("H='" + home.string() + "'; " + script, sandbox_mode::workspace_write));
    ASSERT_TRUE(record.has_value()) << refused_;
    ASSERT_EQ(record->outcome.exit_code, std::optional<int>(0)) << describe(*record);
    auto after = snapshot(workspace_);
    for (const auto& [p, content] : before)
        EXPECT_EQ(after[p], content) << p << "\n" << describe(*record);
    // Nothing new where it would run. The Landlock rung puts back what a rename took away; the
    // renamed directory (`.local.old`) is the run's to keep, as any other file it wrote.
    for (const auto& [p, content] : after) {
        if (before.contains(p)) continue;
        for (const std::string place :
             {"home/me/.local/", "home/me/.ssh", "home/me/.config/systemd", "home/me/tools/bin/",
              "home/me/.cargo"}) {
            EXPECT_FALSE(p.starts_with(place)) << p << " was left\n" << describe(*record);
        }
    }
}

// A home in the workspace whose credential stores are hidden: a store that is also a protected
// place (`~/.ssh`, `~/.aws`) stays unreadable where bwrap keeps it read-only, and stays as it was.
// The Landlock rung cannot hide a path inside a writable root: it refuses the run.
TEST_P(PathPolicy, AHiddenStoreThatIsAlsoAProtectedPlaceStaysUnreadable) {
    const fs::path home = workspace_ / "home" / "me";
    fs::create_directories(home / ".ssh");
    fs::create_directories(home / ".aws");
    test::write_file(home / ".ssh" / "id_ed25519", "PRIVATE KEY\n");
    test::write_file(home / ".aws" / "credentials", "aws_secret_access_key = x\n");
    test::scoped_env user_home("HOME", home.string());
    auto asked = request("cat '" + (home / ".ssh" / "id_ed25519").string() + "' '" +
                             (home / ".aws" / "credentials").string() + "'; echo evil >> '" +
                             (home / ".ssh" / "id_ed25519").string() + "'; exit 0",
                         sandbox_mode::workspace_write);
    asked.rules.deny_read = default_deny_read(home);
    // bwrap cannot keep the stores that are not there from being made: a gap accepted here.
    asked.rules.accept_partial = bwrap();
    auto record = run(std::move(asked));
    if (!bwrap()) {
        EXPECT_FALSE(record.has_value()) << "the Landlock rung cannot hide in a writable root";
        return;
    }
    ASSERT_TRUE(record.has_value()) << refused_;
    EXPECT_THAT(record->stdout_output.text, Not(HasSubstr("PRIVATE KEY")));
    EXPECT_THAT(record->stdout_output.text, Not(HasSubstr("aws_secret")));
    EXPECT_EQ(test::read_file(home / ".ssh" / "id_ed25519"), "PRIVATE KEY\n");
}

INSTANTIATE_TEST_SUITE_P(Backends, PathPolicy, test::all_real_backends(), test::real_backend_name);

}  // namespace
}  // namespace cordon::sandbox::path_policy_tests
