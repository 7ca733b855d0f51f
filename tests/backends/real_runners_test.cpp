// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// End to end with the real runners: the real bwrap and the real cordon-landlock, selected through
// runtime::make_local_provider with an explicit choice, run through the real executor. Every
// refused write is also checked on the host: a "denied" verdict is worth nothing if the file
// landed anyway.
//
// Workspaces live under /var/tmp, not /tmp: bwrap's workspace-write profile mounts a private
// tmpfs on /tmp, so a "beside the workspace" path under /tmp would be refused by accident rather
// than by the profile under test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "classify/signature_scanner.hpp"
#include "cordon/executor.hpp"
#include "cordon/sandbox_error.hpp"
#include "real_backend.hpp"
#include "run_or_throw.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/process.hpp"
#include "runtime/runtime_test_util.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/launcher_status.hpp"
#include "sandbox/local_provider.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using strings = std::vector<std::string>;
using namespace std::chrono_literals;

constexpr auto generous = std::chrono::milliseconds(60'000);

std::string unique_suffix() {
    static std::atomic<int> counter{0};
    return std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

// Removes a path that a failing test may have left on the host, and reports whether it existed.
bool exists_then_remove(const fs::path& path) {
    std::error_code ec;
    const bool existed = fs::exists(fs::symlink_status(path, ec));
    if (existed) fs::remove_all(path, ec);
    return existed;
}

std::string describe(const runtime::run_record& record) {
    std::ostringstream out;
    out << "exit="
        << (record.outcome.exit_code ? std::to_string(*record.outcome.exit_code) : "none")
        << " signal=" << (record.outcome.signal ? std::to_string(*record.outcome.signal) : "none")
        << " denied=" << record.sandbox.denied << "\nstdout: " << record.stdout_output.text
        << "\nstderr: " << record.stderr_output.text;
    if (record.outcome.kind == classify::outcome_kind::not_started)
        out << "\nnot started: " << record.outcome.message;
    return out.str();
}

// A scratch directory under /var/tmp holding the workspace and a sibling beside it.
struct host_tree {
    test::temp_dir base{"/var/tmp", "cordon-sbx-test-"};
    fs::path workspace = base / "ws";
    // Shares the workspace's name as a prefix, so that a string-prefix match would let it in.
    fs::path sibling = base / "ws-sibling";

    host_tree() {
        fs::create_directory(workspace);
        fs::create_directory(sibling);
    }
};

class RealRunnersTest : public ::testing::TestWithParam<test::real_backend> {
protected:
    void SetUp() override {
        std::string why;
        provider_ = test::provider_for(test::choice_of(GetParam()), why);
        if (!provider_) CORDON_SKIP_OR_FAIL(why);
        rung_ = *provider_->selected();
        kind_ = rung_.kind;
    }

    [[nodiscard]] runtime::run_record run(strings argv, sandbox_mode mode,
                                          std::optional<fs::path> workspace = std::nullopt,
                                          std::optional<fs::path> workdir = std::nullopt) {
        runtime::run_request request;
        request.argv = std::move(argv);
        request.mode = mode;
        request.workspace_root = workspace.value_or(tree_.workspace);
        request.rules = test::rules_for(GetParam());
        request.workdir = std::move(workdir);
        request.timeout = generous;
        runtime::executor_options options;
        options.landlock_in_child = test::landlock_in_child(GetParam());
        return test::run_or_throw(provider_, std::move(request), std::move(options));
    }

    [[nodiscard]] std::string test_child() const { return test::test_child_in(tree_.workspace); }

    [[nodiscard]] runtime::run_record bash(const std::string& script, sandbox_mode mode) {
        return run({"bash", "-c", script}, mode);
    }

    // A refused write: non-zero exit, the backend's dialect on stderr, denied=true, and nothing
    // on the host.
    void expect_refused(const runtime::run_record& record, const fs::path& target) {
        EXPECT_NE(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
        ASSERT_TRUE(record.outcome.exit_code.has_value()) << describe(record);
        EXPECT_NE(*record.outcome.exit_code, 0) << describe(record);
        EXPECT_TRUE(record.sandbox.denied) << describe(record);
        bool dialect = false;
        std::vector<std::string> signatures = denial_signatures(kind_, sandbox_mode::read_only);
        // Cordon as root shows the run its workspace under read-only, and the directories of its
        // own on the way, read-only: the mount's word on every rung (docs/sandbox.md, "Identity").
        if (record.sandbox.identity && record.sandbox.identity->reserved) {
            signatures.emplace_back("read-only file system");
        }
        if (::geteuid() == 0) {
            EXPECT_TRUE(record.sandbox.identity && record.sandbox.identity->reserved)
                << describe(record);
        }
        for (const auto& signature : signatures) {
            dialect = dialect || classify::ascii_lower(record.stderr_output.text).find(signature) !=
                                     std::string::npos;
        }
        EXPECT_TRUE(dialect) << "stderr lacks the " << to_string(kind_)
                             << " dialect: " << record.stderr_output.text;
        EXPECT_FALSE(exists_then_remove(target)) << target << " landed on the host";
    }

    void expect_facts(const runtime::run_record& record, sandbox_mode mode) {
        EXPECT_EQ(record.sandbox.mode, mode);
        EXPECT_EQ(record.sandbox.backend, std::optional<backend_kind>(kind_));
        // Landlock cannot govern metadata by path, so its workspace-write runs are partial.
        const enforcement expected =
            kind_ == backend_kind::landlock && mode == sandbox_mode::workspace_write
                ? enforcement::partial
                : rung_.level;
        EXPECT_EQ(record.sandbox.enforcement, std::optional<enforcement>(expected));
    }

    host_tree tree_;
    std::shared_ptr<local_provider> provider_;
    rung_report rung_;
    backend_kind kind_ = backend_kind::bwrap;
};

TEST_P(RealRunnersTest, ReadOnlyRefusesWritesOutsideTheSink) {
    for (const fs::path& target : {tree_.workspace / "in-ws.txt", tree_.sibling / "beside.txt",
                                   tree_.base.path() / "base.txt"}) {
        SCOPED_TRACE(target.string());
        auto record = bash("echo x > '" + target.string() + "'", sandbox_mode::read_only);
        expect_refused(record, target);
        expect_facts(record, sandbox_mode::read_only);
    }
}

TEST_P(RealRunnersTest, ReadOnlyStillReadsAndWritesDevNull) {
    std::ofstream(tree_.workspace / "readable.txt") << "hello\n";
    auto record = bash("echo x > /dev/null && cat readable.txt", sandbox_mode::read_only);
    ASSERT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    EXPECT_EQ(record.stdout_output.text, "hello\n");
    EXPECT_FALSE(record.sandbox.denied);
    expect_facts(record, sandbox_mode::read_only);
}

TEST_P(RealRunnersTest, WorkspaceWriteLandsInsideAndRefusesBeside) {
    const fs::path inside = tree_.workspace / "sub" / "dir" / "in.txt";
    // The run's private /tmp is writable too: bwrap's tmpfs, or under Landlock a directory of
    // its own, which $TMPDIR names (and which is gone once the run is over).
    const std::string in_tmp = "${TMPDIR:-/tmp}/cordon-ww-" + unique_suffix();
    auto ok = bash("mkdir -p sub/dir && echo inside > '" + inside.string() + "' && echo t > " +
                       in_tmp + " && echo \"tmp=${TMPDIR:-/tmp}\"",
                   sandbox_mode::workspace_write);
    if (kind_ == backend_kind::landlock) {
        const std::string tmp = ok.stdout_output.text.substr(ok.stdout_output.text.find('=') + 1);
        EXPECT_TRUE(tmp.starts_with("/tmp/cordon-tmp-")) << tmp;
        EXPECT_FALSE(fs::exists(tmp.substr(0, tmp.size() - 1))) << "removed with the run";
    }
    ASSERT_EQ(ok.outcome.exit_code, std::optional<int>(0)) << describe(ok);
    EXPECT_FALSE(ok.sandbox.denied);
    expect_facts(ok, sandbox_mode::workspace_write);
    EXPECT_EQ(test::read_file(inside), "inside\n");

    const fs::path beside = tree_.sibling / "out.txt";
    auto refused = bash("echo x > '" + beside.string() + "'", sandbox_mode::workspace_write);
    expect_refused(refused, beside);
    expect_facts(refused, sandbox_mode::workspace_write);

    const fs::path above = tree_.base.path() / "above.txt";
    expect_refused(bash("echo x > '" + above.string() + "'", sandbox_mode::workspace_write), above);
}

TEST_P(RealRunnersTest, NestedChildrenInheritTheConfinement) {
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        const fs::path target = tree_.sibling / ("nested-" + unique_suffix());
        auto record = bash("bash -c 'sh -c \"echo x > " + target.string() + "\"'", mode);
        expect_refused(record, target);
    }
    // The test child, a non-shell program, is confined the same way.
    const fs::path target = tree_.sibling / ("child-" + unique_suffix());
    auto record = run({test_child(), "write", target.string(), "x"}, sandbox_mode::workspace_write);
    EXPECT_NE(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    EXPECT_FALSE(exists_then_remove(target));
}

// A link or a rename of a host file into the workspace is refused across the walls: bwrap's
// workspace is a bind mount of its own (EXDEV from the VFS), and Landlock grants no REFER on the
// host's side (EXDEV for a link; a rename also lacks the right to remove from the source's
// directory, which Landlock answers first, EACCES). Under cordon as root the Landlock rung's
// workspace is a mount of its own too (its idmapped tree, docs/sandbox.md, "Identity"): EXDEV
// first; and the host file's directory lies in the test's private directory, which it shows the
// run read-only (EROFS for mv's unlink). Each is a denial, recorded as one, and the host file stays
// where it was. `mv` falls back to copying on EXDEV and then cannot remove the source: a denial
// too, by its unlink.
TEST_P(RealRunnersTest, ALinkOrRenameOfAHostFileIntoTheWorkspaceIsADenial) {
    const fs::path host = tree_.sibling / "host.txt";
    std::ofstream(host) << "host\n";
    const fs::path into = tree_.workspace / "into.txt";
    const std::string exdev = "Invalid cross-device link";
    struct attempt {
        strings argv;
        std::string error;  // what the backend answers, as strerror spells it
    };
    const bool bwrap = kind_ == backend_kind::bwrap;
    const bool own_mount = bwrap || ::geteuid() == 0;
    const attempt attempts[] = {
        {{test_child(), "link", host.string(), into.string()}, exdev},
        {{"ln", host.string(), into.string()}, exdev},
        {{test_child(), "rename", host.string(), into.string()},
         own_mount ? exdev : "Permission denied"},
        {{"mv", host.string(), into.string()},
         own_mount ? "Read-only file system" : "Permission denied"},
    };
    for (const attempt& each : attempts) {
        SCOPED_TRACE(each.argv[0] == test_child() ? each.argv[1] : each.argv[0]);
        auto record = run(each.argv, sandbox_mode::workspace_write);
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::exited) << describe(record);
        EXPECT_NE(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
        EXPECT_THAT(record.stderr_output.text, HasSubstr(each.error)) << describe(record);
        EXPECT_TRUE(record.sandbox.denied) << describe(record);
        EXPECT_EQ(test::read_file(host), "host\n");
        std::error_code ec;
        fs::remove(into, ec);
    }
}

// Not every EXDEV is the sandbox's: nothing is denied when `mv` copies across a boundary and
// succeeds, as it does between the workspace and the run's private /tmp.
TEST_P(RealRunnersTest, AnOrdinaryMoveAcrossFilesystemsIsNoDenial) {
    std::ofstream(tree_.workspace / "mine.txt") << "mine\n";
    auto record =
        bash("mv mine.txt \"${TMPDIR:-/tmp}/mine.txt\" && cat \"${TMPDIR:-/tmp}/mine.txt\"",
             sandbox_mode::workspace_write);
    ASSERT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    EXPECT_EQ(record.stdout_output.text, "mine\n");
    EXPECT_FALSE(record.sandbox.denied);
}

// Metadata is a file effect too: under read-only neither chmod, chown, utime nor xattr changes
// may reach a host file (bwrap: EROFS; Landlock: the launcher's seccomp filter).
TEST_P(RealRunnersTest, ReadOnlyRefusesMetadataChanges) {
    const fs::path file = tree_.sibling / "owned.txt";
    std::ofstream(file) << "x";
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
    struct stat before {};
    ASSERT_EQ(::stat(file.c_str(), &before), 0);
    const std::string quoted = "'" + file.string() + "'";
    for (const std::string& change :
         {"chmod 777 " + quoted, "chown 65534 " + quoted, "touch -d 2001-01-01 " + quoted,
          "'" + test_child() + "' setxattr " + quoted + " user.cordon 1",
          "'" + test_child() + "' setflags " + quoted}) {
        SCOPED_TRACE(change);
        auto record = bash(change, sandbox_mode::read_only);
        EXPECT_NE(record.outcome.exit_code, 0) << describe(record);
        EXPECT_TRUE(record.sandbox.denied) << describe(record);
        expect_facts(record, sandbox_mode::read_only);
    }
    struct stat after {};
    ASSERT_EQ(::stat(file.c_str(), &after), 0);
    EXPECT_EQ(after.st_mode, before.st_mode);
    EXPECT_EQ(after.st_uid, before.st_uid);
    EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    EXPECT_LT(::getxattr(file.c_str(), "user.cordon", nullptr, 0), 0);
    if (kind_ == backend_kind::landlock) {
        // io_uring operations (IORING_OP_FSETXATTR) would bypass the metadata filter.
        auto uring = bash("'" + test_child() + "' io-uring", sandbox_mode::read_only);
        EXPECT_NE(uring.outcome.exit_code, 0) << describe(uring);
    }
}

// Root keeps no capability inside either runner, in either mode: none permitted, effective or
// ambient, and none left in the bounding set for a set-user-ID program to bring back. Only a
// command that starts with capabilities can show this; an unprivileged one holds none anyway.
TEST_P(RealRunnersTest, CommandHoldsNoCapabilities) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs uid 0 to start with capabilities";
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        auto record = bash("grep -E '^Cap(Prm|Eff|Bnd|Amb):' /proc/self/status", mode);
        ASSERT_EQ(record.outcome.exit_code, 0) << describe(record);
        // proc(5) lists the sets in this order.
        EXPECT_EQ(record.stdout_output.text,
                  "CapPrm:\t0000000000000000\n"
                  "CapEff:\t0000000000000000\n"
                  "CapBnd:\t0000000000000000\n"
                  "CapAmb:\t0000000000000000\n");
    }
}

TEST_P(RealRunnersTest, DevShmIsNotAHostWriteUnderReadOnly) {
    const fs::path target = "/dev/shm/cordon-sbx-test-" + unique_suffix();
    auto record = bash("echo x > " + target.string(), sandbox_mode::read_only);
    if (kind_ == backend_kind::landlock) {
        // The launcher grants the /dev/null file, not /dev: /dev/shm is refused.
        expect_refused(record, target);
    } else {
        // bwrap's --dev gives the command a private /dev; whatever it wrote there is gone.
        EXPECT_FALSE(exists_then_remove(target)) << target << " landed on the host";
    }
}

TEST_P(RealRunnersTest, CommandExit125PassesThroughUnchanged) {
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        runtime::run_record shell;
        ASSERT_NO_THROW(shell = bash("exit 125", mode));
        EXPECT_EQ(shell.outcome.exit_code, std::optional<int>(125)) << describe(shell);
        EXPECT_FALSE(shell.sandbox.denied);

        runtime::run_record child;
        ASSERT_NO_THROW(child = run({test_child(), "exit", "125"}, mode));
        EXPECT_EQ(child.outcome.exit_code, std::optional<int>(125)) << describe(child);
        EXPECT_FALSE(child.sandbox.denied);
    }
}

TEST_P(RealRunnersTest, CommandImitatingARunnerFailureIsAnOrdinaryResult) {
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        runtime::run_record record;
        try {
            record =
                bash("echo 'bwrap: fake' >&2; echo 'cordon-landlock: fake' >&2; exit 125", mode);
        } catch (const sandbox_unavailable_error& error) {
            FAIL() << "the command's own stderr was taken for a runner failure: " << error.what();
        }
        EXPECT_EQ(record.outcome.exit_code, std::optional<int>(125)) << describe(record);
        EXPECT_THAT(record.stderr_output.text, HasSubstr("bwrap: fake\n"));
        EXPECT_THAT(record.stderr_output.text, HasSubstr("cordon-landlock: fake\n"));
        EXPECT_FALSE(record.sandbox.denied);
    }
}

TEST_P(RealRunnersTest, StatusChannelProvesTheCommandStarted) {
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        confined_argv confined = provider_->confine(
            strings{"true"}, {mode, tree_.workspace, test::rules_for(GetParam())}, tree_.workspace);
        ASSERT_TRUE(confined.status.has_value());
        runtime::process_spec spec;
        spec.argv = confined.argv;
        spec.env = test::child_env();
        spec.environment_fd = confined.environment_fd;
        spec.fds = confined.fds;
        spec.exec_image = confined.runner;
        spec.cwd = tree_.workspace;
        spec.status = confined.status;
        spec.timeout = generous;
        runtime::process_outcome outcome = runtime::run_process(std::move(spec));
        ASSERT_FALSE(outcome.spawn_failure.has_value());
        EXPECT_EQ(outcome.exit_code, std::optional<int>(0)) << outcome.stderr_output.text;
        ASSERT_TRUE(outcome.status.has_value());
        EXPECT_EQ(outcome.status->outcome, status_report::verdict::started);
        EXPECT_EQ(outcome.status->message, "");
    }
}

// The provider opens the workspace itself (once, without following symlinks) and hands the
// runners that descriptor, so a missing workspace is refused before any runner starts.
TEST_P(RealRunnersTest, MissingWorkspaceIsRefusedAndTheCommandNeverRuns) {
    const fs::path missing = tree_.base.path() / "missing-ws";
    const fs::path marker = tree_.base.path() / "marker";
    const fs::path tmp_marker = "/tmp/cordon-sbx-marker-" + unique_suffix();
    const std::string script =
        "echo ran > '" + marker.string() + "'; echo ran > '" + tmp_marker.string() + "'; echo ran";
    // The workspace is the request's: one that cannot be opened is refused as such (stage
    // policy, REQUEST_REFUSED), never reported as an unusable sandbox.
    const auto record =
        run({"bash", "-c", script}, sandbox_mode::workspace_write, missing, tree_.base.path());
    ASSERT_EQ(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
    ASSERT_TRUE(record.outcome.start_failure.has_value());
    EXPECT_EQ(record.outcome.start_failure->stage, classify::spawn_stage::policy);
    EXPECT_THAT(record.outcome.message,
                StartsWith("cannot open the workspace " + missing.string()));
    EXPECT_THAT(record.outcome.message, HasSubstr("No such file or directory"));
    EXPECT_EQ(record.outcome.message.find('\n'), std::string::npos) << "the message is one line";
    EXPECT_FALSE(exists_then_remove(marker)) << "the command ran";
    EXPECT_FALSE(exists_then_remove(tmp_marker)) << "the command ran";
    EXPECT_FALSE(fs::exists(missing)) << "the runner created the missing workspace";
}

TEST_P(RealRunnersTest, ProbeReportIsConsistentWithTheSelection) {
    auto reports = provider_->probe_all();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].kind, kind_);
    EXPECT_EQ(reports[0].state, rung_state::usable);
    EXPECT_TRUE(reports[0].reason.empty()) << reports[0].reason;
    EXPECT_TRUE(fs::path(reports[0].runner).is_absolute()) << reports[0].runner;
    // Landlock runs under both rungs; full enforcement needs its scopes (ABI 6), and a pid
    // namespace, which only bwrap has.
    ASSERT_TRUE(reports[0].landlock_abi.has_value());
    EXPECT_GE(*reports[0].landlock_abi, 1);
    EXPECT_EQ(reports[0].level, kind_ == backend_kind::bwrap && *reports[0].landlock_abi >= 6
                                    ? enforcement::full
                                    : enforcement::partial);
}

INSTANTIATE_TEST_SUITE_P(Backends, RealRunnersTest, test::all_real_backends(),
                         test::real_backend_name);

// ---- the launcher's status record -----------------------------------------------------------

TEST(LauncherStatusFd, MissingGrantPathIsReportedOutOfBand) {
    std::string why;
    if (!test::provider_for(backend_choice::landlock, why)) CORDON_SKIP_OR_FAIL(why);

    runtime::process_spec spec;
    spec.argv = {test::launcher_path().string(),
                 "--status-fd",
                 "3",
                 "--ro",
                 "/nonexistent-xyz",
                 "--",
                 "true"};
    spec.env = test::child_env();
    spec.cwd = "/";
    spec.status = status_channel{runner_status_fd};
    spec.timeout = generous;
    runtime::process_outcome outcome = runtime::run_process(std::move(spec));
    ASSERT_FALSE(outcome.spawn_failure.has_value());
    EXPECT_EQ(outcome.exit_code, std::optional<int>(launcher_failure_exit));
    ASSERT_TRUE(outcome.status.has_value());
    EXPECT_EQ(outcome.status->outcome, status_report::verdict::failed);
    EXPECT_EQ(outcome.status->stage, launcher_stage::open_rule_path);
    const std::string& detail = outcome.status->message;
    EXPECT_THAT(detail, StartsWith("cordon-landlock: cannot open rule path: /nonexistent-xyz: "));
    EXPECT_THAT(detail, HasSubstr("No such file or directory"));
    EXPECT_EQ(detail.find('\n'), std::string::npos);
    // The record carries the line; the command's stderr holds nothing of the launcher's.
    EXPECT_EQ(outcome.stderr_output.text, "");
}

// ---- root cannot undo bwrap's confinement ---------------------------------------------------

// The provider runs its own sealed in-memory copy of the launcher: replacing the file on disk
// afterwards (as a command with write access to its directory could) changes nothing for the
// runs of this provider.
TEST(LauncherImage, ReplacingTheLauncherOnDiskDoesNotUnconfineLaterRuns) {
    host_tree tree;
    const fs::path launcher = tree.sibling / "cordon-landlock";
    fs::copy_file(test::launcher_path(), launcher);
    local_provider_options options;
    options.choice = backend_choice::landlock;
    options.launcher_path = launcher;
    auto provider = runtime::make_local_provider(std::move(options));
    if (!provider->selected()) CORDON_SKIP_OR_FAIL("the Landlock launcher is unusable here");

    const fs::path target = tree.base.path() / "escaped.txt";
    // On both of the rung's paths: the sealed copy is what the launcher path execs.
    auto attempt = [&](test::real_backend path) {
        runtime::run_request request;
        request.argv = {"bash", "-c", "echo x > '" + target.string() + "'"};
        request.mode = sandbox_mode::read_only;
        request.workspace_root = tree.workspace;
        runtime::executor_options executor;
        executor.landlock_in_child = test::landlock_in_child(path);
        return test::run_or_throw(provider, std::move(request), std::move(executor));
    };
    for (auto path : {test::real_backend::landlock, test::real_backend::landlock_via_launcher}) {
        EXPECT_TRUE(attempt(path).sandbox.denied) << test::to_string(path);
        EXPECT_FALSE(fs::exists(target)) << test::to_string(path);
    }

    // A shim that skips to "--" and runs the command unconfined.
    fs::remove(launcher);
    std::ofstream(launcher) << "#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done; shift\n"
                               "exec \"$@\"\n";
    fs::permissions(launcher, fs::perms::owner_all);
    auto confined = provider->confine(strings{"true"}, {sandbox_mode::read_only, tree.workspace},
                                      tree.workspace);
    ASSERT_TRUE(confined.runner);
    EXPECT_GE(confined.runner->get(), 0);
    for (auto path : {test::real_backend::landlock, test::real_backend::landlock_via_launcher}) {
        auto record = attempt(path);
        EXPECT_TRUE(record.sandbox.denied) << test::to_string(path) << record.stderr_output.text;
        EXPECT_FALSE(fs::exists(target))
            << test::to_string(path) << ": the replaced launcher ran the command unconfined";
    }
}

TEST(BwrapAsRoot, RemountUnmountAndNestedNamespacesCannotReachAWrite) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (not a missing backend)";
    std::string why;
    auto bwrap = test::provider_for(backend_choice::bwrap, why);
    if (!bwrap) CORDON_SKIP_OR_FAIL(why);

    const fs::path target = "/etc/cordon-remount-test-" + unique_suffix();
    exists_then_remove(target);
    runtime::run_request request;
    request.argv = {"bash", "-c",
                    "mount -o remount,rw / && echo step1-succeeded; "
                    "mount -o remount,bind,rw / && echo step2-succeeded; "
                    "umount -l /etc && echo step3-succeeded; "
                    "unshare -Urm true && echo step4-succeeded; "
                    "echo x > " +
                        target.string()};
    request.mode = sandbox_mode::read_only;
    request.workspace_root = "/";
    request.workdir = "/";
    request.timeout = generous;
    auto record = test::run_or_throw(bwrap, std::move(request));
    EXPECT_FALSE(exists_then_remove(target)) << target << " was written on the host";
    ASSERT_TRUE(record.outcome.exit_code.has_value()) << describe(record);
    EXPECT_NE(*record.outcome.exit_code, 0) << describe(record);
    EXPECT_THAT(record.stdout_output.text, Not(HasSubstr("succeeded"))) << describe(record);
    EXPECT_TRUE(record.sandbox.denied) << describe(record);
}

// ---- this machine ---------------------------------------------------------------------------

// This machine's kernel lacks nothing the rungs use: bwrap enforces fully, and the Landlock rung's
// one gap is the pid namespace it has not.
TEST(RealProbe, BothLinuxRungsUsableWithAllTheKernelOffers) {
    local_provider_options options;
    options.launcher_path = test::launcher_path();
    options.probe_timeout = generous;
    auto provider = runtime::make_local_provider(std::move(options));
    ASSERT_EQ(provider->ladder(),
              (std::vector<backend_kind>{backend_kind::bwrap, backend_kind::landlock}));
    auto reports = provider->probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].kind, backend_kind::bwrap);
    EXPECT_EQ(reports[1].kind, backend_kind::landlock);
    for (const auto& report : reports) {
        SCOPED_TRACE(std::string(to_string(report.kind)));
        EXPECT_NE(report.state, rung_state::not_probed);
        if (report.state == rung_state::unusable) {
            EXPECT_FALSE(report.reason.empty());
        } else {
            EXPECT_TRUE(report.reason.empty()) << report.reason;
        }
    }
    for (const auto& report : reports) {
        if (report.state != rung_state::usable) {
            CORDON_SKIP_OR_FAIL(std::string(to_string(report.kind)) +
                                " unusable: " + report.reason);
        }
        const std::vector<std::string> gaps =
            assess(report.kind, sandbox_mode::read_only, report.landlock_abi.value_or(0)).gaps;
        const std::size_t expected = report.kind == backend_kind::landlock ? 1 : 0;
        if (gaps.size() != expected) {
            CORDON_SKIP_OR_FAIL(std::string(to_string(report.kind)) +
                                " enforcement is partial: " + gaps.front());
        }
    }
    EXPECT_EQ(reports[0].level, enforcement::full);
    EXPECT_EQ(reports[1].level, enforcement::partial);
    ASSERT_TRUE(reports[1].landlock_abi.has_value());
    EXPECT_GE(*reports[1].landlock_abi, 6);
    auto chosen = provider->selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::bwrap);
}

}  // namespace
}  // namespace cordon::sandbox
