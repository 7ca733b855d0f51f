// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run`'s policy flags as a new user meets them: the default protections of a
// workspace-write run in a repository (the issue's own scenario), the flags that change them, and
// one line with exit 2 for every bad value.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cordon/policy.hpp"
#include "real_backend.hpp"
#include "runtime/runtime_test_util.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test::policy_flags_tests {
namespace {

namespace fs = std::filesystem;

int on_host(const fs::path& dir, const std::string& script) {
    const std::string command = "cd '" + dir.string() + "' && " + script + " >/dev/null 2>&1";
    return std::system(command.c_str());
}

class PolicyFlags : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(workspace_);
        fs::create_directories(home_ / ".ssh");
        write_file(home_ / ".ssh" / "id_ed25519", "PRIVATE-KEY\n");
        ASSERT_EQ(on_host(workspace_,
                          "git init -q . && git config user.email t@example.com && "
                          "git config user.name t && echo one > f && git add f && "
                          "git commit -qm one"),
                  0);
    }

    // cordon with this test's home: its credential stores are the ones hidden.
    cli_result cordon(std::vector<std::string> args) const {
        return run_cordon(args, workspace_, {},
                          {{"HOME", home_.string()}, {"GIT_CONFIG_NOSYSTEM", "1"}});
    }

    temp_dir scratch_{"/var/tmp", "cordon-policy-flags-"};
    fs::path workspace_ = scratch_ / "ws";
    fs::path home_ = scratch_ / "home";
};

// The scenario: a planted hook, an rc file and a key read leave nothing and read nothing,
// and record a denial, while `git commit -am` in the same workspace succeeds. bwrap keeps the
// hook's directory read-only; the Landlock rung puts it back once the run is over, and takes the
// rc file the run made away: the record names both.
TEST_F(PolicyFlags, AHookAnRcFileAndAKeyAreOutOfReachWhileGitCommitWorks) {
    const std::string attack = "echo evil >> .git/hooks/pre-commit; echo x >> .bashrc; cat " +
                               (home_ / ".ssh" / "id_ed25519").string();
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const std::string backend(backend_flag(path));
        const cli_result r = cordon(
            {"run", "--json", "--backend", backend, "--mode", "workspace-write", "-c", attack});
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_FALSE(fs::exists(workspace_ / ".git" / "hooks" / "pre-commit"));
        EXPECT_FALSE(fs::exists(workspace_ / ".bashrc"));
        EXPECT_EQ(record["stdout"]["text"].get<std::string>().find("PRIVATE-KEY"),
                  std::string::npos);
        EXPECT_EQ(record["sandbox"]["denied"], true) << r.out;
        std::set<std::string> taken;
        for (const auto& n : record["sandbox"]["policy"]["judged"]["neutralized"]) {
            taken.insert(n["path"].get<std::string>());
        }
        EXPECT_TRUE(taken.contains((workspace_ / ".bashrc").string())) << r.out;
        if (path == real_backend::bwrap) {
            EXPECT_EQ(record["sandbox"]["enforcement"], "full") << r.out;
        } else {
            EXPECT_TRUE(taken.contains((workspace_ / ".git" / "hooks").string())) << r.out;
        }
        // The text says so too, on stderr: one marker per path taken.
        const cli_result shown = cordon(
            {"run", "--backend", backend, "--mode", "workspace-write", "-c", "echo x > .envrc"});
        EXPECT_NE(shown.err.find("[sandbox: quarantined " + (workspace_ / ".envrc").string() +
                                 " after the run: a protected name (.envrc)"),
                  std::string::npos)
            << shown.err;
        const cli_result commit = cordon({"run", "--backend", backend, "--mode", "workspace-write",
                                          "-c", "echo two >> f && git commit -qam msg"});
        EXPECT_EQ(commit.exit_code, 0) << commit.err;
        EXPECT_EQ(on_host(workspace_, "git log --oneline | wc -l | grep -qx 2"), 0);
        EXPECT_FALSE(fs::exists(workspace_ / ".git" / "hooks" / "pre-commit"));
        ASSERT_EQ(on_host(workspace_, "git reset -q --hard HEAD~1"), 0);
    }
}

// The flags change the defaults: --allow-read lets the key through, --unprotect all turns the
// protected names off (nothing is judged), --accept-partial lets a run through the Landlock
// rung's carve-out gap, with the gap in the record.
TEST_F(PolicyFlags, TheFlagsLetAPathThroughOrAcceptTheGap) {
    const cli_result key = cordon({"run", "--allow-read", (home_ / ".ssh").string(), "-c",
                                   "cat " + (home_ / ".ssh" / "id_ed25519").string()});
    EXPECT_EQ(key.exit_code, 0) << key.err;
    EXPECT_EQ(key.out, "PRIVATE-KEY\n");
    write_file(workspace_ / "vendor.txt", "vendor\n");
    for (const auto path : {real_backend::landlock, real_backend::landlock_via_launcher}) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const std::vector<std::string> carve{"run",
                                             "--json",
                                             "--backend",
                                             "landlock",
                                             "--mode",
                                             "workspace-write",
                                             "--read-only-path",
                                             (workspace_ / "vendor.txt").string(),
                                             "-c",
                                             "true"};
        const cli_result refused = cordon(carve);
        EXPECT_EQ(refused.exit_code, 125) << refused.out << refused.err;
        std::vector<std::string> accepting = carve;
        accepting.insert(accepting.end() - 2, "--accept-partial");
        const cli_result accepted = cordon(accepting);
        EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;
        const nlohmann::json record = nlohmann::json::parse(accepted.out);
        EXPECT_EQ(record["sandbox"]["enforcement"], "partial");
        bool named = false;
        for (const auto& gap : record["sandbox"]["policy"]["gaps"]) {
            named = named || gap.get<std::string>().find("read-only paths") != std::string::npos;
        }
        EXPECT_TRUE(named) << accepted.out;
        const cli_result unprotected =
            cordon({"run", "--json", "--backend", "landlock", "--mode", "workspace-write",
                    "--unprotect", "all", "-c", "echo ok > .envrc"});
        EXPECT_EQ(unprotected.exit_code, 0) << unprotected.err;
        EXPECT_TRUE(fs::exists(workspace_ / ".envrc"));
        // Nothing of this run's was judged. A killed cordon's window that this one took over (a
        // suite beside this one kills one mid-run) is reported too, as "abandoned": not its own.
        const nlohmann::json judged =
            nlohmann::json::parse(unprotected.out)["sandbox"]["policy"]["judged"];
        EXPECT_TRUE(judged.is_null() ||
                    (judged.at("by").is_null() && judged.at("failure").is_null() &&
                     judged.at("kept").is_null() && judged.at("neutralized").empty()))
            << unprotected.out;
        fs::remove(workspace_ / ".envrc");
    }
}

TEST_F(PolicyFlags, BadValuesAreOneLineAndExitTwo) {
    const std::vector<std::vector<std::string>> bad = {
        {"--tmp", "shared"},
        {"--protect", "../outside"},
        {"--protect", "/etc/passwd"},
        {"--unprotect", ".not-protected"},
        {"--read-only-path", (workspace_ / "missing").string()},
        {"--read-only-path", (scratch_ / "home").string()},
        {"--writable-root", (workspace_ / "missing").string()},
        {"--writable-root", "/"},
    };
    for (const auto& flags : bad) {
        std::vector<std::string> args{"run", "--mode", "workspace-write"};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"-c", "touch ran"});
        const cli_result r = cordon(args);
        SCOPED_TRACE(flags[0] + " " + flags[1]);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_FALSE(fs::exists(workspace_ / "ran"));
    }
}

// Every store a home can hold, a long --deny-read list and many writable roots are each a mount
// (bwrap: a hidden file is copied from a descriptor of its own) or a rule: none of them may make
// a run fail, or a long list a shorter wall. Every store of the home is there, each a file (the
// directories among them are hidden the same way), with 40 listed files and as many writable
// roots as a run may have beside the workspace (sandbox/backends.hpp, max_writable_fds).
TEST_F(PolicyFlags, EveryStoreOfAHomeAndLongListsAreKeptOnEveryRung) {
    for (const fs::path& store : sandbox::default_deny_read(home_)) {
        if (fs::exists(store)) continue;
        fs::create_directories(store.parent_path());
        write_file(store, "STORE-SECRET\n");
    }
    std::vector<std::string> flags;
    std::string script;
    for (const fs::path& store : sandbox::default_deny_read(home_))
        script += "cat " + store.string() + " 2>/dev/null; ";
    script += "cat " + (home_ / ".ssh" / "id_ed25519").string() + " 2>/dev/null; ";
    for (int i = 0; i < 40; ++i) {
        const fs::path listed = scratch_ / "listed" / ("secret-" + std::to_string(i));
        fs::create_directories(listed.parent_path());
        write_file(listed, "LISTED-SECRET\n");
        flags.insert(flags.end(), {"--deny-read", listed.string()});
        script += "cat " + listed.string() + " 2>/dev/null; ";
    }
    std::vector<fs::path> roots;
    for (int i = 0; i < 15; ++i) {
        roots.push_back(scratch_ / "roots" / std::to_string(i));
        fs::create_directories(roots.back());
        flags.insert(flags.end(), {"--writable-root", roots.back().string()});
        script += "echo made > " + (roots.back() / "made").string() + "; ";
    }
    script += "echo done";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        std::vector<std::string> args{"run", "--backend", std::string(backend_flag(path)), "--mode",
                                      "workspace-write"};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"-c", script});
        const cli_result r = cordon(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, "done\n") << r.err;
        for (const fs::path& root : roots) {
            EXPECT_EQ(read_file(root / "made"), "made\n") << root;
            fs::remove(root / "made");
        }
    }
}

// What no fixed list of a home's stores can name, on every rung: the coding agents' own tokens
// and a database's password file in the home, a cluster's configuration KUBECONFIG names outside
// it, a key ssh's configuration names and git's credential store where `store --file` put it.
TEST_F(PolicyFlags, StoresTheToolsAndTheirConfigsPutElsewhereAreUnreadable) {
    const fs::path elsewhere = scratch_ / "elsewhere";
    const std::vector<fs::path> stores{home_ / ".claude" / ".credentials.json",
                                       home_ / ".codex" / "auth.json",
                                       home_ / ".pgpass",
                                       elsewhere / "kube.yml",
                                       elsewhere / "keys" / "deploy",
                                       elsewhere / "git-store"};
    std::string script;
    for (std::size_t i = 0; i < stores.size(); ++i) {
        fs::create_directories(stores[i].parent_path());
        write_file(stores[i], "STORE-SECRET-" + std::to_string(i) + "\n");
        script += (i == 0 ? "cat " : "; cat ") + stores[i].string();
    }
    write_file(home_ / ".ssh" / "config",
               "Host deploy\n  IdentityFile " + (elsewhere / "keys" / "deploy").string() + "\n");
    write_file(home_ / ".gitconfig", "[credential]\n\thelper = store --file " +
                                         (elsewhere / "git-store").string() + "\n");
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r =
            run_cordon({"run", "--json", "--backend", std::string(backend_flag(path)), "--mode",
                        "workspace-write", "-c", script},
                       workspace_, {},
                       {{"HOME", home_.string()},
                        {"GIT_CONFIG_NOSYSTEM", "1"},
                        {"KUBECONFIG", (elsewhere / "kube.yml").string()}});
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_EQ(record["stdout"]["text"], "") << r.out;
        const std::string errors = record["stderr"]["text"];
        for (const fs::path& store : stores) {
            EXPECT_NE(errors.find(store.string() + ": Permission denied"), std::string::npos)
                << errors;
        }
        EXPECT_EQ(record["sandbox"]["denied"], true) << r.out;
    }
    // The host's own tools still read them: nothing was moved or emptied.
    for (std::size_t i = 0; i < stores.size(); ++i)
        EXPECT_EQ(read_file(stores[i]), "STORE-SECRET-" + std::to_string(i) + "\n");
}

// A denied path is denied under every name a mount gives it: with the home bound at another
// path (a second mount of the same disk, /home bound from /data), the store is hidden there as
// well. On the Landlock rung the grant of the other name was a grant of the home's own directory:
// the store was readable under both names, and the record said nothing.
TEST_F(PolicyFlags, ADeniedPathIsHiddenUnderEveryNameAMountGivesIt) {
    if (::geteuid() != 0) GTEST_SKIP() << "a bind mount needs root";
    fs::create_directories(home_ / ".aws");
    write_file(home_ / ".aws" / "credentials", "ALIAS-SECRET\n");
    const fs::path alias = scratch_ / "alias";
    fs::create_directories(alias);
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const std::string read = "cat " + (alias / ".aws" / "credentials").string() + "; cat " +
                                 (home_ / ".aws" / "credentials").string();
        const cli_result r =
            run_program({"unshare",
                         "-m",
                         "--propagation",
                         "private",
                         "--",
                         "sh",
                         "-c",
                         "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"",
                         "sh",
                         home_.string(),
                         alias.string(),
                         cordon_path().string(),
                         "run",
                         "--json",
                         "--backend",
                         std::string(backend_flag(path)),
                         "--mode",
                         "workspace-write",
                         "-c",
                         read},
                        workspace_, {}, {{"HOME", home_.string()}, {"GIT_CONFIG_NOSYSTEM", "1"}});
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_EQ(record["stdout"]["text"], "") << r.out;
        EXPECT_EQ(record["sandbox"]["denied"], true) << r.out;
        EXPECT_NE(record["sandbox"]["policy"]["hidden"].dump().find((alias / ".aws").string()),
                  std::string::npos)
            << r.out;
    }
}

// A denied read that resolves to the root would hide every file, the command's own program too:
// bwrap could not start it, and the Landlock rung's walk, which leaves out the denied entries of
// each directory, has no entry to leave out (it ran, reading everything, while the record named
// "/" hidden). Refused with one line on every rung and in every mode, however it is spelled.
TEST_F(PolicyFlags, DenyingTheWholeFilesystemIsRefusedHoweverItIsSpelled) {
    fs::create_directory_symlink("/", scratch_ / "to-root");
    const std::vector<std::string> spellings{"/", "//", "/.", (scratch_ / "to-root").string(),
                                             (scratch_ / ".." / ".." / "..").string()};
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        for (const std::string& spelling : spellings) {
            for (const char* mode : {"read-only", "workspace-write"}) {
                SCOPED_TRACE(spelling + " " + mode);
                const cli_result r =
                    cordon({"run", "--backend", std::string(backend_flag(path)), "--mode", mode,
                            "--deny-read", spelling, "-c", "echo ran; touch ran"});
                EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
                EXPECT_EQ(r.out, "");
                EXPECT_NE(r.err.find("would hide every file"), std::string::npos) << r.err;
                EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
                EXPECT_FALSE(fs::exists(workspace_ / "ran"));
            }
        }
    }
}

// The device nodes every run may use are granted by a rule of their own on the Landlock rung, which
// a denied read of one does not take away: named as a gap (refused unless accepted, and then in
// the record). bwrap hides the node as it hides a file.
TEST_F(PolicyFlags, ADeniedDeviceNodeIsHiddenOrNamedAsAGap) {
    const std::string read_zero = "head -c3 /dev/zero | wc -c";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const std::string backend(backend_flag(path));
        const cli_result r = cordon(
            {"run", "--json", "--backend", backend, "--deny-read", "/dev/zero", "-c", read_zero});
        const nlohmann::json record = nlohmann::json::parse(r.out);
        if (path == real_backend::bwrap) {
            EXPECT_EQ(record["stdout"]["text"], "0\n") << r.out;
            EXPECT_EQ(record["sandbox"]["enforcement"], "full") << r.out;
            continue;
        }
        EXPECT_EQ(r.exit_code, 125) << r.out;
        EXPECT_NE(record["error"]["unenforced"]["parts"].get<std::string>().find(
                      "denied device nodes stay readable (the rung grants them): /dev/zero"),
                  std::string::npos)
            << r.out;
        const cli_result accepted =
            cordon({"run", "--json", "--backend", backend, "--accept-partial", "--deny-read",
                    "/dev/zero", "-c", read_zero});
        const nlohmann::json partial = nlohmann::json::parse(accepted.out);
        EXPECT_EQ(partial["sandbox"]["enforcement"], "partial") << accepted.out;
        // All of /dev denied: the nodes' own rules still stand.
        const cli_result all_of_dev =
            cordon({"run", "--json", "--backend", backend, "--deny-read", "/dev", "-c", read_zero});
        EXPECT_EQ(all_of_dev.exit_code, 125) << all_of_dev.out;
        EXPECT_NE(all_of_dev.out.find("denied device nodes stay readable (the rung grants them): "
                                      "/dev"),
                  std::string::npos)
            << all_of_dev.out;
        EXPECT_NE(partial["sandbox"]["policy"]["gaps"].dump().find("/dev/zero"), std::string::npos)
            << accepted.out;
    }
}

// A denied path is hidden where a read of it lands, however it is spelled or linked: a file named
// with a trailing "/" or "/.", a store that is a link into a directory of its own, and a store
// that is a link to a place that does not exist yet and that the host makes while the run lasts
// (a first `aws configure` there), which the command then waits for and reads.
TEST_F(PolicyFlags, ADeniedPathIsHiddenWhereAReadLandsHoweverItIsSpelledOrLinked) {
    const fs::path listed = scratch_ / "listed";
    write_file(listed, "LISTED-SECRET\n");
    const fs::path kube = scratch_ / "kube-elsewhere";
    fs::create_directories(kube);
    write_file(kube / "config", "KUBE-SECRET\n");
    fs::create_directory_symlink(kube, home_ / ".kube");
    const fs::path aws = scratch_ / "aws-not-yet";
    fs::create_directory_symlink(aws, home_ / ".aws");
    const std::string wait_and_read =
        "touch started; cat " + (home_ / ".kube" / "config").string() + " " + listed.string() +
        "; for i in $(seq 400); do test -e " + (aws / "credentials").string() +
        " && break; sleep 0.05; done; cat " + (home_ / ".aws" / "credentials").string() +
        "; echo done";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        for (const std::string& spelling : {listed.string() + "/", listed.string() + "/."}) {
            SCOPED_TRACE(std::string(to_string(path)) + " " + spelling);
            fs::remove(workspace_ / "started");
            std::thread host([&] {
                for (int i = 0; i < 2000 && !fs::exists(workspace_ / "started"); ++i)
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                fs::create_directories(aws);
                write_file(aws / "credentials", "AWS-SECRET\n");
            });
            const cli_result r =
                cordon({"run", "--json", "--backend", std::string(backend_flag(path)), "--mode",
                        "workspace-write", "--deny-read", spelling, "-c", wait_and_read});
            host.join();
            fs::remove_all(aws);
            const nlohmann::json record = nlohmann::json::parse(r.out);
            EXPECT_EQ(record["stdout"]["text"], "done\n") << r.out;
            const std::string err = record["stderr"]["text"];
            for (const fs::path& read :
                 {home_ / ".kube" / "config", listed, home_ / ".aws" / "credentials"}) {
                EXPECT_NE(err.find(read.string() + ": Permission denied"), std::string::npos)
                    << err;
            }
        }
    }
}

// A writable root inside a denied directory (the workspace among them) is reached, read and
// written on every rung, while the rest of the directory stays hidden: bwrap lays the directory's
// tmpfs before it binds the roots, which show through it. The same with the root inside a denied
// directory inside another, and inside an allowed path of a denied directory (which stays
// readable); a denied directory that is itself a root hides what it holds.
TEST_F(PolicyFlags, AWorkspaceInsideADeniedDirectoryWorksOnEveryRung) {
    const fs::path denied = scratch_ / "denied";
    fs::create_directories(denied / "inner" / "work");
    fs::create_directories(denied / "code" / "project");
    fs::create_directories(denied / "other");
    write_file(denied / "other" / "secret", "OTHER-SECRET\n");
    write_file(denied / "inner" / "secret", "INNER-SECRET\n");
    write_file(denied / "code" / "readme", "README\n");
    struct layout {
        fs::path workspace;
        std::vector<std::string> flags;
        std::string also_reads;  // "" or a file the run may read beside its workspace
    };
    const std::vector<layout> layouts{
        {denied / "inner" / "work", {"--deny-read", denied.string()}, ""},
        {denied / "inner" / "work",
         {"--deny-read", (denied / "inner").string(), "--deny-read", denied.string()},
         ""},
        {denied / "code" / "project",
         {"--deny-read", denied.string(), "--allow-read", (denied / "code").string()},
         (denied / "code" / "readme").string()},
    };
    const std::string secrets =
        (denied / "other" / "secret").string() + " " + (denied / "inner" / "secret").string();
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        for (const layout& each : layouts) {
            SCOPED_TRACE(std::string(to_string(path)) + " " + each.workspace.string() + " " +
                         each.flags.back());
            write_file(each.workspace / "mine", "MINE\n");
            std::vector<std::string> args{"run",       "--json",
                                          "--backend", std::string(backend_flag(path)),
                                          "--mode",    "workspace-write"};
            args.insert(args.end(), each.flags.begin(), each.flags.end());
            args.insert(args.end(),
                        {"-c", "cat mine " + each.also_reads + "; echo made > made; cat " +
                                   secrets + " 2>/dev/null; echo done"});
            const cli_result r = run_cordon(args, each.workspace, {}, {{"HOME", home_.string()}});
            const nlohmann::json record = nlohmann::json::parse(r.out);
            EXPECT_EQ(record["stdout"]["text"],
                      each.also_reads.empty() ? "MINE\ndone\n" : "MINE\nREADME\ndone\n")
                << r.out;
            EXPECT_EQ(read_file(each.workspace / "made"), "made\n");
            if (path == real_backend::bwrap) {
                EXPECT_EQ(record["sandbox"]["enforcement"], "full") << r.out;
            }
            fs::remove(each.workspace / "made");
        }
    }
    // The workspace itself denied, with a writable root inside it: nothing of it is read.
    const fs::path root_inside = denied / "other" / "sub";
    fs::create_directories(root_inside);
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)) + " denied workspace");
        const cli_result r = run_cordon(
            {"run", "--backend", std::string(backend_flag(path)), "--mode", "workspace-write",
             "--deny-read", (denied / "other").string(), "--writable-root", root_inside.string(),
             "-c", "cat " + (denied / "other" / "secret").string()},
            denied / "other", {}, {{"HOME", home_.string()}});
        EXPECT_EQ(r.out.find("OTHER-SECRET"), std::string::npos) << r.out << r.err;
    }
}

// A writable root inside a denied directory that itself lies in a writable root (Codex's
// sandbox_reenables_writable_subpaths_under_unreadable_parents): on bwrap the root is reached,
// read and written while the rest of the directory stays hidden and unlisted, whatever the order
// of the flags, under nested denials, in an extra root given after the root it holds, beneath an
// allowed path, and under or inside a protected name or a read-only path (whose own mount, laid
// after the directory, would show it again or cover the root).
// The Landlock rung cannot hide inside a root it grants: it names the gap and refuses.
TEST_F(PolicyFlags, AWritableRootInsideADeniedDirectoryInARootWorksOrIsAGap) {
    const fs::path ws = workspace_;
    const fs::path outer = scratch_ / "outer";
    struct layout {
        std::string name;
        fs::path root;                  // the writable root inside the denied directory
        std::vector<fs::path> secrets;  // files in the denied directories, outside the root
        // A denied directory whose names stay unlisted (a directory on the way to a root inside
        // it shows that root's name alone).
        fs::path unlisted;
        std::vector<std::string> flags;
    };
    const std::vector<layout> layouts{
        {"root after the denial",
         ws / "secret" / "r",
         {ws / "secret" / "s"},
         ws / "secret",
         {"--deny-read", (ws / "secret").string(), "--writable-root",
          (ws / "secret" / "r").string()}},
        {"root before the denial",
         ws / "secret" / "r",
         {ws / "secret" / "s"},
         ws / "secret",
         {"--writable-root", (ws / "secret" / "r").string(), "--deny-read",
          (ws / "secret").string()}},
        {"nested denials",
         ws / "secret" / "in" / "r",
         {ws / "secret" / "s", ws / "secret" / "in" / "s"},
         ws / "secret",
         {"--deny-read", (ws / "secret" / "in").string(), "--writable-root",
          (ws / "secret" / "in" / "r").string(), "--deny-read", (ws / "secret").string()}},
        {"in an extra root given after it",
         outer / "h" / "r",
         {outer / "h" / "s"},
         outer / "h",
         {"--writable-root", (outer / "h" / "r").string(), "--writable-root", outer.string(),
          "--deny-read", (outer / "h").string()}},
        {"beneath an allowed path",
         ws / "secret" / "code" / "r",
         {ws / "secret" / "s"},
         ws / "secret",
         {"--deny-read", (ws / "secret").string(), "--allow-read",
          (ws / "secret" / "code").string(), "--writable-root",
          (ws / "secret" / "code" / "r").string()}},
        {"under a protected name",
         ws / ".vscode" / "r",
         {ws / ".vscode" / "settings.json"},
         ws / ".vscode",
         {"--deny-read", (ws / ".vscode").string(), "--writable-root",
          (ws / ".vscode" / "r").string()}},
        {"inside a protected name",
         ws / ".idea" / "private" / "r",
         {ws / ".idea" / "private" / "s"},
         ws / ".idea" / "private",
         {"--deny-read", (ws / ".idea" / "private").string(), "--writable-root",
          (ws / ".idea" / "private" / "r").string()}},
        {"inside a read-only path",
         ws / "vendor" / "secret" / "r",
         {ws / "vendor" / "secret" / "s"},
         ws / "vendor" / "secret",
         {"--read-only-path", (ws / "vendor").string(), "--deny-read",
          (ws / "vendor" / "secret").string(), "--writable-root",
          (ws / "vendor" / "secret" / "r").string()}},
    };
    for (const layout& each : layouts) {
        fs::create_directories(each.root);
        write_file(each.root / "mine", "MINE\n");
        for (const fs::path& secret : each.secrets)
            write_file(secret, "SECRET\n");
    }
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        for (const layout& each : layouts) {
            SCOPED_TRACE(std::string(to_string(path)) + ": " + each.name);
            std::vector<std::string> args{"run",       "--json",
                                          "--backend", std::string(backend_flag(path)),
                                          "--mode",    "workspace-write"};
            args.insert(args.end(), each.flags.begin(), each.flags.end());
            std::string script = "cd '" + each.root.string() + "' && cat mine && echo made > made";
            for (const fs::path& secret : each.secrets)
                script += "; cat '" + secret.string() + "' 2>/dev/null";
            script += "; ls '" + each.unlisted.string() + "' 2>/dev/null; echo done";
            args.insert(args.end(), {"-c", script});
            const cli_result r = cordon(args);
            if (path != real_backend::bwrap) {
                EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
                EXPECT_NE(r.out.find("denied reads inside a writable root stay readable"),
                          std::string::npos)
                    << r.out;
                EXPECT_FALSE(fs::exists(each.root / "made"));
                continue;
            }
            const nlohmann::json record = nlohmann::json::parse(r.out);
            EXPECT_EQ(record["stdout"]["text"], "MINE\ndone\n") << r.out;
            EXPECT_EQ(record["sandbox"]["enforcement"], "full") << r.out;
            EXPECT_EQ(read_file(each.root / "made"), "made\n");
            fs::remove(each.root / "made");
        }
    }
}

// The record lists as hidden and protected only what the rung kept. Accepted on the Landlock rung:
// a denied directory inside the workspace, a denied device node, a read-only path beneath the
// workspace and a denied path that the run makes are each read, written or made by the command,
// and each is named in the gaps and in neither list. bwrap keeps all but the last.
TEST_F(PolicyFlags, TheRecordListsOnlyWhatTheRungKept) {
    const fs::path denied = workspace_ / "denied";
    const fs::path carve = workspace_ / "carve";
    const fs::path later = workspace_ / "later";
    fs::create_directories(denied);
    fs::create_directories(carve);
    write_file(denied / "s", "SECRET\n");
    const std::string script =
        "cat denied/s 2>/dev/null; head -c3 /dev/zero 2>/dev/null | wc -c; "
        "echo w > carve/w 2>/dev/null; echo later > later; cat later; true";
    const auto listed = [](const nlohmann::json& list, const fs::path& item) {
        return std::find(list.begin(), list.end(), item.string()) != list.end();
    };
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r =
            cordon({"run", "--json", "--backend", std::string(backend_flag(path)), "--mode",
                    "workspace-write", "--accept-partial", "--deny-read", denied.string(),
                    "--deny-read", "/dev/zero", "--deny-read", later.string(), "--read-only-path",
                    carve.string(), "-c", script});
        const nlohmann::json record = nlohmann::json::parse(r.out);
        const nlohmann::json& policy = record["sandbox"]["policy"];
        const std::string gaps = policy["gaps"].dump();
        EXPECT_EQ(record["sandbox"]["enforcement"], "partial") << r.out;
        // Made by the run on every rung: a gap, never listed as hidden.
        EXPECT_NE(gaps.find(later.string()), std::string::npos) << r.out;
        EXPECT_FALSE(listed(policy["hidden"], later)) << r.out;
        const std::string out = record["stdout"]["text"].get<std::string>();
        if (path == real_backend::bwrap) {
            EXPECT_EQ(out, "0\nlater\n") << r.out;
            EXPECT_FALSE(fs::exists(carve / "w"));
            EXPECT_TRUE(listed(policy["hidden"], denied)) << r.out;
            EXPECT_TRUE(listed(policy["hidden"], "/dev/zero")) << r.out;
            EXPECT_TRUE(listed(policy["protected"], carve)) << r.out;
        } else {
            EXPECT_EQ(out, "SECRET\n3\nlater\n") << r.out;
            EXPECT_TRUE(fs::exists(carve / "w"));
            for (const fs::path& left : {denied, fs::path("/dev/zero"), carve}) {
                EXPECT_NE(gaps.find(left.string()), std::string::npos) << left << r.out;
                EXPECT_FALSE(listed(policy["hidden"], left)) << left << r.out;
                EXPECT_FALSE(listed(policy["protected"], left)) << left << r.out;
            }
        }
        fs::remove(later);
        fs::remove(carve / "w");
    }
}

// Under a private /tmp (the default) the host's /tmp is not the run's on any rung: another run's
// private directory, and a host file there, are unreadable while that run lasts; the run's own
// $TMPDIR and a workspace under /tmp work.
TEST_F(PolicyFlags, AnotherRunsPrivateTmpAndTheHostsTmpAreOutOfReach) {
    temp_dir host_tmp{"/tmp", "cordon-policy-flags-"};
    write_file(host_tmp.path() / "host", "HOST-TMP\n");
    const fs::path where = workspace_ / "where";
    const fs::path release = scratch_ / "release";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const std::string backend(backend_flag(path));
        // The first run keeps a file in its private /tmp (on the Landlock rung a directory in the
        // host's /tmp) until it is released.
        cli_result holder;
        std::thread first([&] {
            holder = cordon(
                {"run", "--backend", backend, "--mode", "workspace-write", "-c",
                 "echo RUN-SECRET > \"${TMPDIR:-/tmp}/s\" && cd \"${TMPDIR:-/tmp}\" && pwd -P > " +
                     where.string() + ".part && mv " + where.string() + ".part " + where.string() +
                     "; while [ ! -e " + release.string() + " ]; do sleep 0.01; done"});
        });
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!fs::exists(where) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (!fs::exists(where)) {
            write_file(release, "");
            first.join();
            FAIL() << "the first run never started: " << holder.out << holder.err;
        }
        std::string other = read_file(where);
        other.erase(other.find_last_not_of('\n') + 1);
        const cli_result r =
            cordon({"run", "--json", "--backend", backend, "--mode", "workspace-write", "-c",
                    "cat " + other + "/s " + (host_tmp.path() / "host").string() +
                        " 2>/dev/null; echo mine > \"${TMPDIR:-/tmp}/m\" && cat "
                        "\"${TMPDIR:-/tmp}/m\"; echo done"});
        write_file(release, "");
        first.join();
        EXPECT_EQ(holder.exit_code, 0) << holder.out << holder.err;
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_EQ(record["stdout"]["text"], "mine\ndone\n") << r.out;
        fs::remove(where);
        fs::remove(release);
    }
    // A workspace under /tmp is the run's to read and write.
    write_file(host_tmp.path() / "mine", "MINE\n");
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)) + " workspace under /tmp");
        const cli_result r =
            run_cordon({"run", "--backend", std::string(backend_flag(path)), "--mode",
                        "workspace-write", "-c", "cat mine && echo made > made && cat made"},
                       host_tmp.path(), {}, {{"HOME", home_.string()}});
        EXPECT_EQ(r.out, "MINE\nmade\n") << r.err;
        fs::remove(host_tmp.path() / "made");
    }
}

// A carve-out the user gives stays read-only whatever it holds: the git directory (kept in place
// for its hooks and configuration) and a directory on the way to a protected name (.config, kept
// in place for .config/git/config) were bound writable, and the run wrote in them. The Landlock
// rung cannot keep a carve-out read-only: it refuses.
TEST_F(PolicyFlags, ACarveOutThatHoldsAProtectedNameStaysReadOnly) {
    fs::create_directories(workspace_ / ".config" / "git");
    write_file(workspace_ / ".config" / "git" / "config", "[user]\n");
    const std::string script =
        "echo x > .config/planted; echo x > .config/git/planted; echo x > .git/planted; "
        "git status --short >/dev/null && echo git; echo x > mine && echo mine";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r =
            cordon({"run", "--backend", std::string(backend_flag(path)), "--mode",
                    "workspace-write", "--read-only-path", (workspace_ / ".config").string(),
                    "--read-only-path", (workspace_ / ".git").string(), "-c", script});
        if (path == real_backend::bwrap) {
            EXPECT_EQ(r.out, "git\nmine\n") << r.err;
        } else {
            EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
        }
        for (const fs::path& planted :
             {workspace_ / ".config" / "planted", workspace_ / ".config" / "git" / "planted",
              workspace_ / ".git" / "planted"}) {
            EXPECT_FALSE(fs::exists(planted)) << planted;
        }
        fs::remove(workspace_ / "mine");
    }
}

// A writable root that is one of the workspace's protected names, given on purpose (`.vscode`, or
// `.config/nvim` two levels down), is written as given on every rung, as a root deeper in the tree
// is; the names beside it stay kept, and so do the protected names inside it.
TEST_F(PolicyFlags, AWritableRootThatIsAProtectedNameIsWrittenAsGiven) {
    fs::create_directories(workspace_ / ".vscode");
    fs::create_directories(workspace_ / ".config" / "nvim");
    fs::create_directories(workspace_ / ".config" / "git");
    fs::create_directories(workspace_ / ".idea");
    write_file(workspace_ / ".vscode" / "settings.json", "{}\n");
    const std::string script =
        "echo mine > .vscode/settings.json && echo mine > .vscode/tasks.json && "
        "echo mine > .config/nvim/init.lua && echo written; "
        "echo x > .idea/planted; echo x > .config/git/planted; echo x > .vscode/.envrc; "
        "echo x > .envrc; true";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r =
            cordon({"run", "--json", "--backend", std::string(backend_flag(path)), "--mode",
                    "workspace-write", "--writable-root", (workspace_ / ".vscode").string(),
                    "--writable-root", (workspace_ / ".config" / "nvim").string(), "-c", script});
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_EQ(record["stdout"]["text"], "written\n") << r.out;
        EXPECT_EQ(read_file(workspace_ / ".vscode" / "settings.json"), "mine\n");
        EXPECT_EQ(read_file(workspace_ / ".vscode" / "tasks.json"), "mine\n");
        EXPECT_EQ(read_file(workspace_ / ".config" / "nvim" / "init.lua"), "mine\n");
        for (const fs::path& planted :
             {workspace_ / ".idea" / "planted", workspace_ / ".config" / "git" / "planted",
              workspace_ / ".vscode" / ".envrc", workspace_ / ".envrc"}) {
            EXPECT_FALSE(fs::exists(planted)) << planted;
        }
        // The record lists the names kept beside the root, not the root.
        const auto& kept = record.at("sandbox").at("policy").at("protected");
        EXPECT_EQ(std::count(kept.begin(), kept.end(), (workspace_ / ".idea").string()), 1) << kept;
        EXPECT_EQ(std::count(kept.begin(), kept.end(), (workspace_ / ".vscode").string()), 0)
            << kept;
        fs::remove(workspace_ / ".vscode" / "tasks.json");
        fs::remove(workspace_ / ".config" / "nvim" / "init.lua");
        write_file(workspace_ / ".vscode" / "settings.json", "{}\n");
    }
}

// A writable root that holds protected names without being one (`.config` holds `.config/git`,
// `.cargo` holds `.cargo/config.toml`): what the run writes there is written, and the names the
// outer root protects inside it are judged as in any root, on every rung.
TEST_F(PolicyFlags, AWritableRootThatHoldsProtectedNamesKeepsThem) {
    fs::create_directories(workspace_ / ".config");
    fs::create_directories(workspace_ / ".cargo");
    const std::string script =
        "mkdir -p .config/git .config/nvim && "
        "printf '[core]\\n\\tfsmonitor = touch x\\n' > .config/git/config && "
        "echo x > .config/nvim/init.lua && printf '[target.x]\\nrunner = \"sh\"\\n' > "
        ".cargo/config.toml && echo mine > .config/mine && echo mine > .cargo/mine && echo written";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r =
            cordon({"run", "--json", "--backend", std::string(backend_flag(path)), "--mode",
                    "workspace-write", "--writable-root", (workspace_ / ".config").string(),
                    "--writable-root", (workspace_ / ".cargo").string(), "-c", script});
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_EQ(record["stdout"]["text"], "written\n") << r.out;
        EXPECT_EQ(record["sandbox"]["denied"], true) << r.out;
        EXPECT_EQ(read_file(workspace_ / ".config" / "mine"), "mine\n");
        EXPECT_EQ(read_file(workspace_ / ".cargo" / "mine"), "mine\n");
        EXPECT_FALSE(fs::exists(workspace_ / ".config" / "nvim" / "init.lua"));
        EXPECT_FALSE(fs::exists(workspace_ / ".cargo" / "config.toml"));
        const fs::path git_config = workspace_ / ".config" / "git" / "config";
        EXPECT_TRUE(!fs::exists(git_config) ||
                    read_file(git_config).find("fsmonitor") == std::string::npos);
        fs::remove_all(workspace_ / ".config");
        fs::remove_all(workspace_ / ".cargo");
        fs::create_directories(workspace_ / ".config");
        fs::create_directories(workspace_ / ".cargo");
    }
}

// A writable root inside a repository of the workspace, where that repository's hooks or included
// configuration live (`--writable-root ws/proj/.githooks`): what the run writes there is judged by
// what the repository obeys, as in the workspace, on every rung.
TEST_F(PolicyFlags, ARootWhereANestedRepositorysHooksLiveIsJudgedByWhatItObeys) {
    const fs::path proj = workspace_ / "proj";
    fs::create_directories(proj / ".githooks");
    fs::create_directories(proj / "shared");
    ASSERT_EQ(on_host(proj,
                      "git init -q . && git config core.hooksPath .githooks && "
                      "git config include.path ../shared/inc.cfg"),
              0);
    const std::string script =
        "printf '#!/bin/sh\\ntouch ran\\n' > proj/.githooks/pre-commit && "
        "chmod +x proj/.githooks/pre-commit && "
        "printf '[core]\\n\\tfsmonitor = touch ran\\n' > proj/shared/inc.cfg && "
        "echo mine > proj/shared/notes && echo written";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r =
            cordon({"run", "--json", "--backend", std::string(backend_flag(path)), "--mode",
                    "workspace-write", "--writable-root", (proj / ".githooks").string(),
                    "--writable-root", (proj / "shared").string(), "-c", script});
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_EQ(record["stdout"]["text"], "written\n") << r.out;
        EXPECT_EQ(record["sandbox"]["denied"], true) << r.out;
        EXPECT_FALSE(fs::exists(proj / ".githooks" / "pre-commit"));
        const fs::path included = proj / "shared" / "inc.cfg";
        EXPECT_TRUE(!fs::exists(included) ||
                    read_file(included).find("fsmonitor") == std::string::npos);
        EXPECT_EQ(read_file(proj / "shared" / "notes"), "mine\n");
        fs::remove(proj / "shared" / "notes");
        fs::remove(included);
    }
}

// A writable root inside a protected directory (`--writable-root ws/.vscode/sub`) keeps what the
// run wrote there on every rung; the rest of the directory stays kept: read-only under bwrap, and
// on the Landlock rung judged instead of put back whole (a copy put back would undo the root).
TEST_F(PolicyFlags, ARootInsideAProtectedDirectoryKeepsWhatTheRunWrote) {
    const fs::path vscode = workspace_ / ".vscode";
    fs::create_directories(vscode / "sub");
    write_file(vscode / "settings.json", "{}\n");
    const std::string script =
        "echo mine > .vscode/sub/out.txt && echo written; echo x > .vscode/tasks.json; "
        "echo evil > .vscode/settings.json; true";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r =
            cordon({"run", "--json", "--backend", std::string(backend_flag(path)), "--mode",
                    "workspace-write", "--writable-root", (vscode / "sub").string(), "-c", script});
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_EQ(record["stdout"]["text"], "written\n") << r.out;
        // bwrap refused the writes (a command that went on to succeed is no denial); the Landlock
        // rung took what they left.
        if (path != real_backend::bwrap) EXPECT_EQ(record["sandbox"]["denied"], true) << r.out;
        EXPECT_EQ(read_file(vscode / "sub" / "out.txt"), "mine\n");
        EXPECT_FALSE(fs::exists(vscode / "tasks.json"));
        EXPECT_TRUE(!fs::exists(vscode / "settings.json") ||
                    read_file(vscode / "settings.json") == "{}\n");
        fs::remove(vscode / "sub" / "out.txt");
        write_file(vscode / "settings.json", "{}\n");
    }
}

// A repository in a writable root given inside a carve-out keeps its git directory in place (the
// carve-out's read-only bind does not reach into the root): the run writes in the root and cannot
// move the git directory away. The Landlock rung cannot keep the carve-out: it refuses.
TEST_F(PolicyFlags, ARepositoryInARootInsideACarveOutKeepsItsGitDirectory) {
    const fs::path vendor = workspace_ / "vendor";
    const fs::path root = vendor / "r";
    fs::create_directories(root);
    ASSERT_EQ(on_host(root, "git init -q ."), 0);
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r = cordon(
            {"run", "--backend", std::string(backend_flag(path)), "--mode", "workspace-write",
             "--read-only-path", vendor.string(), "--writable-root", root.string(), "-c",
             "mv vendor/r/.git vendor/r/.moved 2>/dev/null; echo x > vendor/r/f && echo f; "
             "echo x > vendor/v 2>/dev/null; true"});
        if (path == real_backend::bwrap) {
            EXPECT_EQ(r.out, "f\n") << r.err;
        } else {
            EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
        }
        EXPECT_TRUE(fs::is_directory(root / ".git"));
        EXPECT_FALSE(fs::exists(root / ".moved"));
        EXPECT_FALSE(fs::exists(vendor / "v"));
        fs::remove(root / "f");
    }
}

// A host mount of a denied directory, under an allowed path of a denied directory that holds the
// workspace, is hidden on bwrap: the allowed path's bind brings the host's tree along, mounts
// included, so the mount gets a hiding mount of its own. (On the Landlock rung a grant is on an
// inode and reaches a denied directory through another name: a gap docs/sandbox.md names.)
TEST_F(PolicyFlags, ADeniedMountUnderAnAllowedPathOfALayerIsHidden) {
    const fs::path secret = scratch_ / "secret";
    const fs::path layer = scratch_ / "layer";
    const fs::path alias = layer / "pub" / "alias";
    const fs::path project = layer / "project";
    fs::create_directories(secret);
    fs::create_directories(alias);
    fs::create_directories(project);
    write_file(secret / "key", "TOPSECRET\n");
    ASSERT_EQ(::mount(secret.c_str(), alias.c_str(), nullptr, MS_BIND, nullptr), 0);
    struct unmount_at_end {
        fs::path point;
        ~unmount_at_end() { ::umount2(point.c_str(), MNT_DETACH); }
    } unmount{alias};
    scoped_backend_path on(real_backend::bwrap);
    const cli_result r =
        run_cordon({"run", "--json", "--backend", "bwrap", "--mode", "workspace-write",
                    "--deny-read", secret.string(), "--deny-read", layer.string(), "--allow-read",
                    (layer / "pub").string(), "-c",
                    "cat " + (alias / "key").string() + " 2>/dev/null; ls " + alias.string() +
                        " 2>/dev/null; echo done"},
                   project, {}, {{"HOME", home_.string()}});
    const nlohmann::json record = nlohmann::json::parse(r.out);
    EXPECT_EQ(record["stdout"]["text"], "done\n") << r.out;
}

// A directory of the workspace's filesystem mounted a second time, beneath the workspace or as a
// writable root (a dev container's binds): what the run plants through that mount is judged on
// every rung. The watch names a change by its directory's handle, through one mount of the
// filesystem, and would have named these where they lie outside the roots: it gives way to the
// scan instead.
TEST_F(PolicyFlags, WhatARunPlantsThroughASecondMountOfTheFilesystemIsJudged) {
    const fs::path store = scratch_ / "store";
    const fs::path inside = workspace_ / "data";
    const fs::path root = scratch_ / "root";
    fs::create_directories(store / "data" / "sub");
    fs::create_directories(store / "root" / "sub");
    fs::create_directories(inside);
    fs::create_directories(root);
    for (const fs::path& repo : {store / "data" / "sub", store / "root" / "sub"}) {
        ASSERT_EQ(on_host(repo, "git init -q . && echo 'echo hi' > .envrc"), 0);
    }
    struct unmount_at_end {
        std::vector<fs::path> points;
        ~unmount_at_end() {
            for (const fs::path& point : points)
                ::umount2(point.c_str(), MNT_DETACH);
        }
    } unmount;
    ASSERT_EQ(::mount((store / "data").c_str(), inside.c_str(), nullptr, MS_BIND, nullptr), 0);
    unmount.points.push_back(inside);
    ASSERT_EQ(::mount((store / "root").c_str(), root.c_str(), nullptr, MS_BIND, nullptr), 0);
    unmount.points.push_back(root);
    std::string script;
    for (const fs::path& at : {fs::path("data"), root}) {
        const std::string dir = at.string();
        script += "echo evil >> " + dir + "/sub/.envrc; printf '[core]\\n\\tfsmonitor = x\\n' >> " +
                  dir + "/sub/.git/config; printf '#!/bin/sh\\n' > " + dir +
                  "/sub/.git/hooks/pre-commit; mkdir -p " + dir + "/new/.vscode && echo {} > " +
                  dir + "/new/.vscode/tasks.json; ";
    }
    script += "true";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r = cordon({"run", "--json", "--backend", std::string(backend_flag(path)),
                                     "--accept-partial", "--mode", "workspace-write",
                                     "--writable-root", root.string(), "-c", script});
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        const nlohmann::json record = nlohmann::json::parse(r.out);
        EXPECT_EQ(record["sandbox"]["denied"], true) << r.out;
        // Changed, an existing .envrc is taken away (it may run on `cd`); a configuration is
        // rewritten without what would run.
        const auto holds = [](const fs::path& file, const std::string& text) {
            return fs::exists(file) && read_file(file).find(text) != std::string::npos;
        };
        for (const fs::path& repo : {store / "data" / "sub", store / "root" / "sub"}) {
            EXPECT_FALSE(holds(repo / ".envrc", "evil")) << repo;
            EXPECT_FALSE(holds(repo / ".git" / "config", "fsmonitor")) << repo;
            EXPECT_FALSE(fs::exists(repo / ".git" / "hooks" / "pre-commit")) << repo;
            EXPECT_FALSE(fs::exists(repo.parent_path() / "new" / ".vscode")) << repo;
        }
    }
}

// A denied path that is not there when the run starts, inside a writable root, has nothing to
// cover yet, and the root's grant covers what the run makes there: named as a gap on every rung
// (refused unless accepted, then in the record). Too many denied paths for the rung's bounded list
// is one line, exit 2.
TEST_F(PolicyFlags, WhatNoRungCanHideIsAGapOrRefused) {
    const fs::path later = workspace_ / "later";
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const std::vector<std::string> args{"run",         "--json",
                                            "--backend",   std::string(backend_flag(path)),
                                            "--mode",      "workspace-write",
                                            "--deny-read", later.string(),
                                            "-c",          "echo x > later; cat later"};
        const cli_result refused = cordon(args);
        EXPECT_EQ(refused.exit_code, 125) << refused.out;
        EXPECT_NE(refused.out.find("not there yet are readable should the run make them: " +
                                   later.string()),
                  std::string::npos)
            << refused.out;
        EXPECT_FALSE(fs::exists(later));
        std::vector<std::string> accepting = args;
        accepting.insert(accepting.end() - 2, "--accept-partial");
        const nlohmann::json record = nlohmann::json::parse(cordon(accepting).out);
        EXPECT_EQ(record["sandbox"]["enforcement"], "partial");
        EXPECT_NE(record["sandbox"]["policy"]["gaps"].dump().find(later.string()),
                  std::string::npos)
            << record.dump();
        fs::remove(later);
    }
    std::vector<std::string> many{"run", "--mode", "read-only"};
    for (std::size_t i = 0; i <= sandbox::landlock::max_denied_reads; ++i)
        many.insert(many.end(), {"--deny-read", (scratch_ / ("n" + std::to_string(i))).string()});
    many.insert(many.end(), {"-c", "echo ran"});
    const cli_result r = cordon(many);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("too many denied reads"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// bwrap gives a workspace-write run a /tmp of its own and binds back the roots that lie in the
// host's: a denied path inside such a root is hidden there as anywhere (it was skipped with the
// rest of /tmp, and read while the record said full).
TEST_F(PolicyFlags, ADeniedPathInAWorkspaceUnderTmpIsHidden) {
    temp_dir under_tmp{"/tmp", "cordon-policy-flags-"};
    write_file(under_tmp.path() / "secret", "TMP-SECRET\n");
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        const cli_result r = run_cordon(
            {"run", "--backend", std::string(backend_flag(path)), "--mode", "workspace-write",
             "--deny-read", (under_tmp.path() / "secret").string(), "-c", "cat secret; echo done"},
            under_tmp.path(), {}, {{"HOME", home_.string()}});
        EXPECT_EQ(r.out.find("TMP-SECRET"), std::string::npos) << r.out;
        // bwrap hides it; the Landlock rung cannot inside a writable root, and says so.
        EXPECT_EQ(r.exit_code, path == real_backend::bwrap ? 0 : 125) << r.out << r.err;
    }
}

// The credential stores hidden are those of every home the account has: a cordon started with
// HOME pointed elsewhere still hides the stores in the account's own home (the password
// database's), as well as those in the HOME it was given. The account's home is made a scratch
// directory by a password database bind-mounted in a mount namespace of the run's own (root only),
// so that no real home is touched. A danger-full-access run, which hides nothing, reads both keys:
// they are there to be read.
TEST_F(PolicyFlags, AHomePointedElsewhereStillHidesTheAccountsOwnStores) {
    if (::geteuid() != 0) GTEST_SKIP() << "a mount namespace of the run's own needs root";
    const fs::path account_home = scratch_ / "account-home";
    const fs::path passwd = scratch_ / "passwd";
    fs::create_directories(account_home / ".ssh");
    write_file(account_home / ".ssh" / "id_ed25519", "ACCOUNT-KEY\n");
    // This account's entry with its home replaced (name:pw:uid:gid:gecos:home:shell).
    std::string entries;
    bool replaced = false;
    for (const std::string& line : split_lines(read_file("/etc/passwd"))) {
        std::vector<std::string> fields;
        std::size_t start = 0;
        for (std::size_t colon; (colon = line.find(':', start)) != std::string::npos;
             start = colon + 1) {
            fields.push_back(line.substr(start, colon - start));
        }
        fields.push_back(line.substr(start));
        if (fields.size() == 7 && fields[2] == std::to_string(::getuid())) {
            fields[5] = account_home.string();
            replaced = true;
        }
        std::string joined;
        for (std::size_t i = 0; i < fields.size(); ++i)
            joined += (i == 0 ? "" : ":") + fields[i];
        entries += joined + "\n";
    }
    ASSERT_TRUE(replaced) << "no entry for uid " << ::getuid() << " in /etc/passwd";
    write_file(passwd, entries);

    const std::string read_both = "cat " + (account_home / ".ssh" / "id_ed25519").string() + " " +
                                  (home_ / ".ssh" / "id_ed25519").string();
    auto cordon_elsewhere = [&](std::vector<std::string> args) {
        std::vector<std::string> argv{"/usr/bin/unshare",
                                      "-m",
                                      "--propagation",
                                      "private",
                                      "--",
                                      "/bin/sh",
                                      "-c",
                                      "mount --bind \"$0\" /etc/passwd && exec \"$@\"",
                                      passwd.string(),
                                      cordon_path().string()};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_program(argv, workspace_, {},
                           {{"HOME", home_.string()}, {"GIT_CONFIG_NOSYSTEM", "1"}});
    };

    const cli_result open =
        cordon_elsewhere({"run", "--mode", "danger-full-access", "-c", read_both});
    ASSERT_EQ(open.exit_code, 0) << open.err;
    ASSERT_NE(open.out.find("ACCOUNT-KEY"), std::string::npos) << open.out;
    ASSERT_NE(open.out.find("PRIVATE-KEY"), std::string::npos) << open.out;

    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        SCOPED_TRACE(std::string(to_string(path)));
        for (const char* mode : {"read-only", "workspace-write"}) {
            SCOPED_TRACE(mode);
            const cli_result r =
                cordon_elsewhere({"run", "--backend", std::string(backend_flag(path)), "--mode",
                                  mode, "-c", read_both});
            EXPECT_NE(r.exit_code, 0) << r.out << r.err;
            EXPECT_EQ(r.out.find("ACCOUNT-KEY"), std::string::npos) << r.out;
            EXPECT_EQ(r.out.find("PRIVATE-KEY"), std::string::npos) << r.out;
        }
    }
}

}  // namespace
}  // namespace cordon::test::policy_flags_tests
