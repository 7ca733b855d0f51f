// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The walls' order (sandbox/walls.hpp), raised in a forked child of the test as the launcher and
// the in-child path raise them: what the process holds afterwards, read back from the kernel
// (/proc/self/status, prctl, a refused system call, a refused write), and the partial-enforcement
// notice written exactly once. The words a failed step reports are the launcher's.
#include <fcntl.h>
#include <linux/keyctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "sandbox/backends.hpp"
#include "sandbox/confinement_extras.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/walls.hpp"
#include "support.hpp"

namespace {

namespace extras = cordon::sandbox::extras;
namespace landlock = cordon::sandbox::landlock;
namespace walls = cordon::sandbox::walls;
using cordon::sandbox::launcher_stage;

// What the child saw after apply(); plain data, written whole through a pipe.
struct observed {
    int error = -1;  // apply()'s result
    int step = -1;   // the failed step, when error != 0
    int no_new_privs = -1;
    int cap_eff_zero = -1;  // CapEff in /proc/self/status is all zeros
    int keyctl_errno = 0;   // a keyring call, which the filter refuses
    int write_errno = 0;    // creating `probe_path` (0: created)
};

// The errno of a keyring call the filter refuses (0 when it succeeds).
int keyctl_errno() {
    return ::syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0) < 0 ? errno : 0;
}

// Raises `plan` in a forked child whose stderr goes to a pipe; returns what the child observed
// and sets `*stderr_text` to everything it wrote on stderr.
observed raise_in_child(const walls::plan& plan, const std::string& probe_path,
                        std::string* stderr_text) {
    int report[2];
    int err[2];
    EXPECT_EQ(::pipe2(report, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(err[1], STDERR_FILENO);
        observed seen;
        walls::step failed = walls::step::landlock;
        seen.error = walls::apply(plan, &failed);
        if (seen.error != 0) seen.step = static_cast<int>(failed);
        seen.no_new_privs = ::prctl(PR_GET_NO_NEW_PRIVS, 0L, 0L, 0L, 0L);
        const std::string status = cordon::test::read_file("/proc/self/status");
        seen.cap_eff_zero = status.find("CapEff:\t0000000000000000\n") != std::string::npos;
        seen.keyctl_errno = keyctl_errno();
        const int fd = ::open(probe_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) seen.write_errno = errno;
        (void)!::write(report[1], &seen, sizeof seen);
        ::_exit(0);
    }
    ::close(report[1]);
    ::close(err[1]);
    observed seen;
    EXPECT_EQ(::read(report[0], &seen, sizeof seen), static_cast<ssize_t>(sizeof seen));
    stderr_text->clear();
    char buf[512];
    ssize_t n;
    while ((n = ::read(err[0], buf, sizeof buf)) > 0)
        stderr_text->append(buf, static_cast<std::size_t>(n));
    ::close(report[0]);
    ::close(err[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return seen;
}

struct filters {
    extras::filter_program own;
    extras::filter_program shared;
    filters() {
        extras::filter_options options;
        EXPECT_EQ(extras::build_filter(options, own), 0);
        options.deny_sysv_ipc = true;
        EXPECT_EQ(extras::build_filter(options, shared), 0);
    }
};

TEST(Walls, WithoutARulesetTheyLeaveNoCapabilityNoNewPrivsAndTheFilter) {
    const cordon::test::temp_dir dir;
    filters built;
    walls::plan plan;
    plan.landlock = false;
    plan.own_ipc = &built.own;
    plan.shared_ipc = &built.shared;
    std::string err;
    const observed seen = raise_in_child(plan, (dir / "created").string(), &err);
    EXPECT_EQ(seen.error, 0);
    EXPECT_EQ(seen.no_new_privs, 1);
    EXPECT_EQ(seen.cap_eff_zero, 1);
    EXPECT_EQ(seen.keyctl_errno, EPERM) << "the seccomp filter is in place";
    EXPECT_EQ(seen.write_errno, 0) << "no ruleset: the filesystem is not restricted";
    EXPECT_EQ(err, "") << "no notice unless asked for";
}

TEST(Walls, WithARulesetTheFilesystemIsRestrictedAndTheNoticeWrittenOnce) {
    const int abi = landlock::query_abi();
    if (abi <= 0) CORDON_SKIP_OR_FAIL("Landlock is not available on this kernel");
    const cordon::test::temp_dir dir;
    landlock::failure failure{};
    const int ruleset = landlock::create_ruleset(abi, &failure);
    ASSERT_GE(ruleset, 0) << std::strerror(failure.error);
    ASSERT_EQ(landlock::add_path_rule(ruleset, abi, "/", landlock::access::read, false, &failure),
              0)
        << std::strerror(failure.error);
    filters built;
    walls::plan plan;
    plan.ruleset = ruleset;
    plan.own_ipc = &built.own;
    plan.shared_ipc = &built.shared;
    plan.partial_notice = true;
    std::string err;
    const observed seen = raise_in_child(plan, (dir / "created").string(), &err);
    ::close(ruleset);
    EXPECT_EQ(seen.error, 0);
    EXPECT_EQ(seen.no_new_privs, 1);
    EXPECT_EQ(seen.cap_eff_zero, 1);
    EXPECT_EQ(seen.keyctl_errno, EPERM);
    EXPECT_EQ(seen.write_errno, EACCES) << "read beneath / only";
    EXPECT_EQ(err, walls::partial_notice);
    EXPECT_EQ(err, std::string(cordon::sandbox::launcher_notice_line) + "\n");
}

// Landlock asked for with no usable ruleset fails its step, and nothing after it is raised: the
// walls never pass silently without the ruleset.
TEST(Walls, AMissingRulesetFailsTheLandlockStep) {
    const cordon::test::temp_dir dir;
    filters built;
    walls::plan plan;  // landlock, ruleset -1
    plan.own_ipc = &built.own;
    plan.shared_ipc = &built.shared;
    plan.partial_notice = true;
    std::string err;
    const observed seen = raise_in_child(plan, (dir / "created").string(), &err);
    EXPECT_EQ(seen.error, EBADF);
    EXPECT_EQ(seen.step, static_cast<int>(walls::step::landlock));
    EXPECT_EQ(seen.keyctl_errno, keyctl_errno())
        << "the filter after the failed step was not installed";
    EXPECT_EQ(err, "") << "no notice after a failure";
}

TEST(Walls, AFailedStepIsReportedInTheLaunchersWords) {
    struct row {
        walls::step step;
        launcher_stage stage;
        const char* words;
    };
    const row table[] = {
        {walls::step::capabilities, launcher_stage::capabilities, "cannot drop capabilities"},
        {walls::step::landlock, launcher_stage::ruleset, "landlock ruleset error"},
        {walls::step::no_new_privs, launcher_stage::seccomp, "cannot set no_new_privs"},
        {walls::step::seccomp, launcher_stage::seccomp, "seccomp filter error"},
    };
    for (const row& r : table) {
        EXPECT_EQ(walls::stage_of(r.step), r.stage) << r.words;
        EXPECT_STREQ(walls::reason_of(r.step), r.words);
    }
}

}  // namespace
