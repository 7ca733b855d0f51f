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
#include "support.hpp"

namespace cordon::sandbox::path_policy_tests {
namespace {

namespace fs = std::filesystem;
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

// Each class of protected name, existing, at the root and nested, against every way to change it:
// a write, an append, a rename over it, a removal (of it and of its parent), a symlink swap, a
// rename of the directory that holds it. bwrap keeps them all; the Landlock rung cannot and
// refuses the run.
TEST_P(PathPolicy, ExistingProtectedNamesCannotBeChangedAtAnyDepth) {
    make_repository(workspace_);
    make_repository(workspace_ / "sub" / "nested");
    const strings files = {".envrc",
                           ".bashrc",
                           ".profile",
                           ".zshrc",
                           ".npmrc",
                           ".gitmodules",
                           ".mcp.json",
                           "pip.conf",
                           ".vscode/tasks.json",
                           ".claude/settings.json",
                           ".codex/config.toml",
                           ".cursor/mcp.json",
                           ".agents/x",
                           ".idea/workspace.xml",
                           ".git/hooks/pre-commit",
                           ".git/config"};
    for (const std::string& root : {std::string(), std::string("sub/nested/")}) {
        for (const std::string& name : files) {
            const fs::path path = workspace_ / (root + name);
            fs::create_directories(path.parent_path());
            if (!fs::exists(path)) test::write_file(path, "original " + name + "\n");
        }
    }
    // The hook must not run: a planted one would make `git commit` below touch the marker.
    const auto before = snapshot(workspace_);
    std::string attack;
    for (const std::string& root : {std::string(), std::string("sub/nested/")}) {
        for (const std::string& name : files) {
            const std::string p = root + name;
            attack += "echo evil >> " + p + "; echo evil > " + p + "; mv " + p + " " + p +
                      ".moved; rm -f " + p + "; ln -sf /etc/passwd " + p +
                      "; echo x > x.$$ && mv -f x.$$ " + p + "; ";
        }
        attack += "rm -rf " + root + ".git; rm -rf " + root + ".claude " + root + ".vscode; ";
    }
    attack +=
        "mv sub sub.moved; mv sub/nested sub/nested.moved; mkdir -p sub/nested/.git/hooks; "
        "printf '#!/bin/sh\\ntouch \"$HOME/../hook-ran\"\\n' > .git/hooks/pre-commit; "
        "git config core.hooksPath /tmp; exit 0";
    auto record = run(request(attack, sandbox_mode::workspace_write));
    if (!bwrap()) {
        ASSERT_FALSE(record.has_value()) << "the Landlock rung cannot keep protected names";
        EXPECT_THAT(refused_, HasSubstr("protected names"));
        EXPECT_THAT(refused_, HasSubstr("--accept-partial"));
        EXPECT_EQ(snapshot(workspace_), before) << "nothing ran";
        return;
    }
    ASSERT_TRUE(record.has_value()) << refused_;
    ASSERT_EQ(record->outcome.exit_code, std::optional<int>(0)) << describe(*record);
    // rm -rf .git empties what is writable in it (objects, refs): the protected parts stay.
    auto after = snapshot(workspace_);
    for (const auto& [path, content] : before) {
        const bool writable_git_part = path.find(".git/") != std::string::npos &&
                                       path.find(".git/hooks") == std::string::npos &&
                                       path.find(".git/config") == std::string::npos;
        if (writable_git_part) continue;
        ASSERT_TRUE(after.contains(path)) << path << " is gone\n" << describe(*record);
        EXPECT_EQ(after.at(path), content) << path << "\n" << describe(*record);
    }
    EXPECT_TRUE(fs::is_directory(workspace_ / ".git" / "hooks"));
    EXPECT_FALSE(fs::exists(workspace_ / "sub.moved"));
    // The protected paths are in the record.
    EXPECT_THAT(record->sandbox.protected_paths,
                Contains((workspace_ / ".git" / "hooks").string()));
    EXPECT_THAT(record->sandbox.protected_paths,
                Contains((workspace_ / "sub" / "nested" / ".envrc").string()));
    EXPECT_THAT(record->sandbox.protected_paths, Contains((workspace_ / "sub").string()))
        << "the directory on the way to a protected path is kept in place";
    EXPECT_EQ(record->sandbox.enforcement, std::optional(enforcement::full));
}

// A missing protected name cannot be created at a writable root nor in a repository found there,
// and the masks that keep it leave nothing behind once the run is over.
TEST_P(PathPolicy, MissingProtectedNamesCannotBeCreatedAndLeaveNoResidue) {
    make_repository(workspace_);
    make_repository(workspace_ / "lib" / "inner");
    fs::remove_all(workspace_ / ".git" / "hooks");
    fs::remove_all(workspace_ / "lib" / "inner" / ".git" / "hooks");
    const auto before = snapshot(workspace_);
    std::string attack;
    for (const std::string& root : {std::string(), std::string("lib/inner/")}) {
        for (const std::string name : {".envrc", ".bashrc", ".mcp.json", ".npmrc", ".gitmodules"}) {
            attack += "echo evil > " + root + name + "; ";
        }
        for (const std::string dir : {".claude", ".vscode", ".codex", ".cursor", ".git/hooks"}) {
            attack += "mkdir -p " + root + dir + " && echo evil > " + root + dir + "/x; ";
        }
    }
    attack += "ls -a; exit 0";
    runtime::run_request req = request(attack, sandbox_mode::workspace_write);
    req.rules.accept_partial = !bwrap();
    auto record = run(std::move(req));
    ASSERT_TRUE(record.has_value()) << refused_;
    ASSERT_EQ(record->outcome.exit_code, std::optional<int>(0)) << describe(*record);
    if (bwrap()) {
        EXPECT_EQ(snapshot(workspace_), before) << describe(*record);
        EXPECT_THAT(record->sandbox.masked_paths, Contains((workspace_ / ".envrc").string()));
        EXPECT_THAT(record->sandbox.masked_paths,
                    Contains((workspace_ / "lib" / "inner" / ".git" / "hooks").string()));
        EXPECT_EQ(record->sandbox.enforcement, std::optional(enforcement::full));
    } else {
        // Accepted: the gap is named and the record says partial.
        EXPECT_EQ(record->sandbox.enforcement, std::optional(enforcement::partial));
        EXPECT_THAT(record->sandbox.gaps, Contains(HasSubstr("protected names are not kept")));
        EXPECT_TRUE(fs::exists(workspace_ / ".envrc")) << "the gap is real, and recorded";
    }
    // A read-only run never masks (it writes nothing) and leaves nothing either.
    const auto ro_before = snapshot(workspace_);
    auto read_only = run(request("ls -a >/dev/null", sandbox_mode::read_only));
    ASSERT_TRUE(read_only.has_value()) << refused_;
    EXPECT_EQ(snapshot(workspace_), ro_before);
}

// git works inside under workspace-write: add, commit, a new branch. A hook planted by the run
// never runs when the person commits afterwards, outside any sandbox.
TEST_P(PathPolicy, GitCommitWorksInsideAndAPlantedHookNeverRunsOutside) {
    make_repository(workspace_);
    const fs::path marker = base_.path() / "hook-ran";
    runtime::run_request req = request(
        "echo two >> f && echo new > g && git add -A && git commit -qm two && "
        "git checkout -qb feature && echo three >> f && git commit -qam three && "
        "git init -q newsub && printf '#!/bin/sh\\ntouch " +
            marker.string() +
            "\\n' > newsub/.git/hooks/pre-commit && chmod +x newsub/.git/hooks/pre-commit; "
            "printf '#!/bin/sh\\ntouch " +
            marker.string() +
            "\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; exit 0",
        sandbox_mode::workspace_write);
    req.rules.accept_partial = !bwrap();
    auto record = run(std::move(req));
    ASSERT_TRUE(record.has_value()) << refused_;
    ASSERT_EQ(record->outcome.exit_code, std::optional<int>(0)) << describe(*record);
    EXPECT_EQ(on_host(workspace_, "git log --oneline feature | wc -l | grep -qx 3"), 0)
        << describe(*record);
    if (!bwrap()) return;  // the accepted gap: the hook was planted (see the test above)
    EXPECT_FALSE(fs::exists(workspace_ / ".git" / "hooks" / "pre-commit")) << describe(*record);
    // The person commits outside the sandbox, in the repository the run worked in.
    ASSERT_EQ(on_host(workspace_, "git commit -q --allow-empty -m outside"), 0);
    EXPECT_FALSE(fs::exists(marker)) << "a hook planted by the run ran outside the sandbox";
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
            req.rules.accept_partial = !bwrap();
            auto record = run(std::move(req));
            ASSERT_TRUE(record.has_value()) << refused_;
            EXPECT_NE(record->outcome.exit_code, std::optional<int>(0)) << store;
            EXPECT_THAT(record->stdout_output.text, Not(HasSubstr("SECRET"))) << store;
            EXPECT_TRUE(record->sandbox.denied) << store << "\n" << describe(*record);
        }
        runtime::run_request listing = request(
            "cat '" + (home_ / "notes.txt").string() + "' && ls -a '" + home_.string() + "'", mode);
        listing.rules.accept_partial = !bwrap();
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
        allowed.rules.accept_partial = !bwrap();
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
        one.rules.accept_partial = !bwrap();
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
    req.rules.accept_partial = !bwrap();
    auto record = run(std::move(req));
    ASSERT_TRUE(record.has_value()) << refused_;
    EXPECT_EQ(test::read_file(extra / "a"), "in\n") << describe(*record);
    EXPECT_EQ(test::read_file(workspace_ / "ws.txt"), "ws\n");
    EXPECT_FALSE(fs::exists(beside_ / "b"));
    EXPECT_TRUE(record->sandbox.denied);
    EXPECT_THAT(record->sandbox.writable_roots, Contains(extra.string()));

    // Protected names hold in an extra root as in the workspace.
    if (bwrap()) {
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
        refused.rules.accept_partial = !bwrap();
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
        req.rules.accept_partial = !bwrap();
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

// Runs of one process in the same workspace share their masks (the MCP server's jobs): a run that
// starts while another's mask points exist keeps them masked, the first run's end does not unmask
// them for the second, and nothing is left once both are over.
TEST_P(PathPolicy, ConcurrentRunsInOneWorkspaceShareTheirMasks) {
    if (!bwrap()) {
        // The Landlock rung makes no mask: the refusal is the test above's.
        EXPECT_FALSE(run(request("true", sandbox_mode::workspace_write)).has_value());
        return;
    }
    const auto before = snapshot(workspace_);
    const fs::path first_go = base_ / "first-go";
    const fs::path second_go = base_ / "second-go";
    const auto waiting_for = [](const fs::path& go) {
        return "while [ ! -e '" + go.string() + "' ]; do sleep 0.01; done; ";
    };
    boost::asio::io_context io;
    runtime::executor_options options;
    options.landlock_in_child = test::landlock_in_child(GetParam());
    runtime::executor exec(io.get_executor(), provider_, options);
    std::optional<runtime::run_record> first;
    std::optional<runtime::run_record> second;
    exec.async_run(request(waiting_for(first_go) + "exit 0", sandbox_mode::workspace_write),
                   [&](runtime::run_record r) {
                       first = std::move(r);
                       // The first run is over: now the second one tries.
                       test::write_file(second_go, "");
                   });
    // Started once the first run's mask points exist on the host.
    std::thread starter([&] {
        const auto deadline = std::chrono::steady_clock::now() + generous;
        while (!fs::exists(workspace_ / ".envrc") && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        boost::asio::post(io, [&] {
            exec.async_run(
                request(waiting_for(second_go) + "echo evil > .envrc; echo evil > .mcp.json; "
                                                 "mkdir -p .claude && echo x > .claude/x; exit 0",
                        sandbox_mode::workspace_write),
                [&](runtime::run_record r) { second = std::move(r); });
            test::write_file(first_go, "");
        });
    });
    io.run();
    starter.join();
    ASSERT_TRUE(first && second);
    EXPECT_EQ(first->outcome.exit_code, std::optional<int>(0)) << describe(*first);
    EXPECT_EQ(second->outcome.exit_code, std::optional<int>(0))
        << describe(*second) << second->outcome.message;
    EXPECT_THAT(second->sandbox.masked_paths, Contains((workspace_ / ".envrc").string()));
    EXPECT_EQ(snapshot(workspace_), before) << describe(*second);
}

INSTANTIATE_TEST_SUITE_P(Backends, PathPolicy, test::all_real_backends(), test::real_backend_name);

}  // namespace
}  // namespace cordon::sandbox::path_policy_tests
