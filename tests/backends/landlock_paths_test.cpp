// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The Landlock rung's two paths (cordon/executor.hpp): applied in the forked child of an
// in-process spawn, or by the exec'd cordon-landlock. Every real-backend suite runs on both
// (tests/CMakeLists.txt); these tests pin which path a run took, and that a failure to put the
// walls up in the child is the same runner failure the launcher reports.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "classify/classify.hpp"
#include "cordon/executor.hpp"
#include "cordon/sandbox_error.hpp"
#include "real_backend.hpp"
#include "run_or_throw.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/process.hpp"
#include "runtime/runtime_test_util.hpp"
#include "sandbox/child_confinement.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/local_provider.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A Landlock rung whose launcher cannot run at all (bytes that are no program): the scripted
// probe calls it usable at the kernel's ABI. Only a run that never execs the launcher works.
class LandlockPaths : public ::testing::Test {
protected:
    void SetUp() override {
        if (landlock::query_abi() <= 0) CORDON_SKIP_OR_FAIL("the kernel has no Landlock");
        test::write_file(runners_ / "cordon-landlock", "\x01\x02 not a program",
                         fs::perms::owner_all);
        local_provider_options options;
        options.choice = backend_choice::landlock;
        options.launcher_path = runners_ / "cordon-landlock";
        options.run_probe = [](const confined_argv& wrapped, std::chrono::milliseconds) {
            probe_run_result result;
            if (wrapped.argv.back() == "--probe") result.abi = landlock::query_abi();
            return result;
        };
        provider_ = runtime::make_local_provider(std::move(options));
        ASSERT_TRUE(provider_->selected());
        fs::create_directory(workspace_);
    }

    [[nodiscard]] runtime::run_record run(bool in_child) {
        runtime::run_request request;
        request.argv = {"bash", "-c",
                        "echo in > '" + (workspace_ / "in.txt").string() + "'; echo out > '" +
                            (base_ / "out.txt").string() + "'"};
        request.mode = sandbox_mode::workspace_write;
        request.workspace_root = workspace_;
        request.rules = test::rules_for(backend_choice::landlock);
        request.timeout = std::chrono::seconds(60);
        runtime::executor_options options;
        options.landlock_in_child = in_child;
        return test::run_or_throw(provider_, std::move(request), options);
    }

    test::temp_dir runners_;
    test::temp_dir base_{"/var/tmp", "cordon-paths-test-"};
    fs::path workspace_ = base_ / "ws";
    std::shared_ptr<local_provider> provider_;
};

TEST_F(LandlockPaths, InTheChildTheLauncherIsNeverExecutedAndTheWallsHold) {
    const runtime::run_record record = run(true);
    EXPECT_EQ(record.outcome.kind, classify::outcome_kind::exited) << record.outcome.message;
    EXPECT_NE(record.outcome.exit_code, std::optional<int>(0)) << "the write beside succeeded";
    EXPECT_TRUE(record.sandbox.denied) << record.stderr_output.text;
    EXPECT_EQ(record.sandbox.backend, std::optional<backend_kind>(backend_kind::landlock));
    EXPECT_TRUE(fs::exists(workspace_ / "in.txt")) << record.stderr_output.text;
    EXPECT_FALSE(fs::exists(base_ / "out.txt")) << "a write outside the workspace landed";
}

TEST_F(LandlockPaths, ThroughTheLauncherTheSameRunNeedsTheLauncher) {
    try {
        (void)run(false);
        ADD_FAILURE() << "a run through a launcher that is no program did not fail";
    } catch (const sandbox_unavailable_error& error) {
        EXPECT_THAT(error.what(), HasSubstr("Runner failure"));
    }
    EXPECT_FALSE(fs::exists(workspace_ / "in.txt")) << "the command ran";
}

// A wall the child cannot put up (here: a ruleset descriptor that is not one) stops the spawn
// before the command's exec, and the record is the runner failure the launcher would report, in
// its words.
TEST(ChildConfinement, AWallThatCannotBePutUpIsARunnerFailureAndNothingRuns) {
    test::temp_dir dir;
    const fs::path marker = dir / "ran";
    auto broken = std::make_shared<child_confinement>();  // no ruleset
    runtime::process_spec spec =
        test::child_spec({test::test_child_path().string(), "write", marker.string(), "x"});
    spec.confinement = broken;
    const runtime::process_outcome outcome = runtime::run_process(std::move(spec));
    ASSERT_TRUE(outcome.spawn_failure);
    EXPECT_EQ(outcome.spawn_failure->stage, classify::spawn_stage::confine);
    EXPECT_EQ(outcome.spawn_failure->error, EBADF);
    EXPECT_EQ(outcome.spawn_failure->step, static_cast<int>(launcher_stage::ruleset));
    EXPECT_EQ(outcome.spawn_detail, "cordon-landlock: landlock ruleset error: Bad file descriptor");
    EXPECT_FALSE(fs::exists(marker));

    confined_argv landlock;
    landlock.backend = backend_kind::landlock;
    const classify::verdict verdict = classify::decide(
        outcome, {&landlock, test::test_child_path().string(), "", "cordon-test-child", true});
    EXPECT_EQ(verdict.outcome.kind, classify::outcome_kind::runner_failed);
    EXPECT_EQ(verdict.outcome.message, outcome.spawn_detail);
}

// With the real launcher and this host's kernel, confine() offers the child path in both modes
// and the parent can build it: the suites' default path is really the child's, not a silent
// fallback to the launcher.
TEST(ChildConfinement, TheRealRungOffersTheChildPathInBothModes) {
    std::string why;
    auto provider = test::provider_for(backend_choice::landlock, why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    test::temp_dir workspace{"/var/tmp", "cordon-paths-test-"};
    for (const sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        SCOPED_TRACE(std::string(to_string(mode)));
        const std::vector<std::string> argv{"true"};
        const confined_argv confined = provider->confine(
            argv, {mode, workspace.path(), test::rules_for(backend_choice::landlock)},
            workspace.path());
        ASSERT_TRUE(confined.in_child.has_value());
        EXPECT_EQ(confined.in_child->mode, mode);
        EXPECT_EQ(confined.in_child->abi, landlock::query_abi());
        auto built = build_child_confinement(*confined.in_child);
        ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const child_confinement>>(built))
            << std::get<std::string>(built);
        const auto& confinement = *std::get<std::shared_ptr<const child_confinement>>(built);
        EXPECT_TRUE(confinement.ruleset);
        EXPECT_GT(confinement.own_ipc.size, 0);
        EXPECT_GT(confinement.shared_ipc.size, confinement.own_ipc.size)
            << "the filter without an IPC namespace refuses SysV IPC on top";
        // confine() still gives the launcher's argv to consumers that spawn it themselves.
        EXPECT_EQ(confined.argv.front(), provider->selected()->runner);
    }
}

// The rulesets' numbers in the parent are whatever was free when they were built, and the child
// may place a descriptor of its own at the same number (here one passed to the command at exactly
// that number): the walls use copies lifted out of the way first, and hold. (Before, the walls
// found what was placed there, and the run failed: "landlock ruleset error: File descriptor in
// bad state", seen when two jobs were prepared at once.)
TEST(ChildConfinement, ARulesetAtTheNumberOfAPlacedDescriptorStillConfines) {
    std::string why;
    auto provider = test::provider_for(backend_choice::landlock, why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    test::temp_dir workspace{"/var/tmp", "cordon-paths-test-"};
    const std::vector<std::string> argv{"true"};
    const confined_argv confined = provider->confine(
        argv,
        {sandbox_mode::read_only, workspace.path(), test::rules_for(backend_choice::landlock)},
        workspace.path());
    ASSERT_TRUE(confined.in_child.has_value());
    auto built = build_child_confinement(*confined.in_child);
    ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const child_confinement>>(built))
        << std::get<std::string>(built);
    const auto confinement = std::get<std::shared_ptr<const child_confinement>>(built);
    const fs::path marker = workspace / "written";
    runtime::process_spec spec =
        test::child_spec({test::test_child_path().string(), "write", marker.string(), "x"});
    spec.confinement = confinement;
    spec.fds.push_back({confinement->ruleset.get(), std::make_shared<const unique_fd>(::open(
                                                        "/dev/null", O_RDONLY | O_CLOEXEC))});
    const runtime::process_outcome outcome = runtime::run_process(std::move(spec));
    ASSERT_FALSE(outcome.spawn_failure) << outcome.spawn_detail;
    EXPECT_NE(outcome.exit_code, std::optional<int>(0)) << "a read-only run wrote";
    EXPECT_FALSE(fs::exists(marker)) << "a read-only run wrote";
}

// A PATH entry the sandbox closes (a directory only root may enter, when the run drops root's
// capabilities) is passed over on both paths, as execvp passes over a missing one: the program
// is searched for under confinement, not resolved by the unconfined parent.
TEST(LandlockPathsAlike, APathEntryTheSandboxClosesIsPassedOver) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a directory only root may enter";
    std::string why;
    auto provider = test::provider_for(backend_choice::landlock, why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    test::temp_dir base{"/var/tmp", "cordon-paths-test-"};
    const fs::path closed = base / "closed";
    fs::create_directory(closed);
    test::write_file(closed / "cordon-path-probe", "#!/bin/sh\necho closed\n",
                     fs::perms::owner_all);
    const fs::path open = base / "open";
    fs::create_directory(open);
    test::write_file(open / "cordon-path-probe", "#!/bin/sh\necho open\n",
                     fs::perms::owner_all | fs::perms::group_all | fs::perms::others_read |
                         fs::perms::others_exec);
    ASSERT_EQ(::chown(closed.c_str(), 65534, 65534), 0);
    fs::permissions(closed, fs::perms::owner_all);
    for (const bool in_child : {true, false}) {
        SCOPED_TRACE(in_child ? "in the child" : "through the launcher");
        runtime::run_request request;
        request.argv = {"cordon-path-probe"};
        request.mode = sandbox_mode::read_only;
        request.workspace_root = base.path();
        request.env = {{"PATH", closed.string() + ":" + open.string() + ":/usr/bin:/bin"}};
        request.timeout = std::chrono::seconds(60);
        runtime::executor_options options;
        options.landlock_in_child = in_child;
        const runtime::run_record record =
            test::run_or_throw(provider, std::move(request), options);
        EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0))
            << record.outcome.message << record.stderr_output.text;
        EXPECT_EQ(record.stdout_output.text, "open\n");
    }
}

// The read-only rung built once for the child is reused only while the mounts it names are the
// ones in place: a mount replaced under a top-level directory is read as it is now, as through
// the launcher, which builds its rules on every run.
TEST(LandlockPathsAlike, AReplacedMountIsSeenByTheNextRun) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount";
    if (!fs::is_directory("/mnt")) GTEST_SKIP() << "no /mnt to mount over";
    std::string why;
    auto provider = test::provider_for(backend_choice::landlock, why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    // This test process's own mount namespace, private: nothing here reaches the host's mounts.
    ASSERT_EQ(::unshare(CLONE_NEWNS), 0) << std::strerror(errno);
    ASSERT_EQ(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0);
    test::temp_dir workspace{"/var/tmp", "cordon-paths-test-"};
    boost::asio::io_context io;
    runtime::executor_options options;
    options.landlock_in_child = true;
    runtime::executor exec(io.get_executor(), provider, options);
    const auto cat = [&] {
        runtime::run_request request;
        request.argv = {"cat", "/mnt/cordon-mount-probe"};
        request.mode = sandbox_mode::read_only;
        request.workspace_root = workspace.path();
        request.timeout = std::chrono::seconds(60);
        std::optional<runtime::run_record> result;
        exec.async_run(std::move(request), [&](runtime::run_record r) { result = std::move(r); });
        io.restart();
        io.run();
        EXPECT_TRUE(result && result->outcome.kind != runtime::outcome_kind::runner_failed)
            << (result ? result->outcome.message : "no record");
        return result.value_or(runtime::run_record{});
    };
    for (const std::string text : {"one", "two"}) {
        SCOPED_TRACE(text);
        ASSERT_EQ(::mount("tmpfs", "/mnt", "tmpfs", 0, "size=64k"), 0) << std::strerror(errno);
        std::ofstream("/mnt/cordon-mount-probe") << text << '\n';
        const runtime::run_record record = cat();
        EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << record.stderr_output.text;
        EXPECT_EQ(record.stdout_output.text, text + "\n");
        EXPECT_FALSE(record.sandbox.denied);
        ASSERT_EQ(::umount("/mnt"), 0) << std::strerror(errno);
    }
}

}  // namespace
}  // namespace cordon::sandbox
