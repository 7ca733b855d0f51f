// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Unit tests of the reusable ruleset code (sandbox/landlock_ruleset.hpp): the ABI rights table
// and the rule builders (paths opened once, never through a symlink; the root read rules). Nothing
// here restricts the test process itself; the launcher tests do that in a child.
#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>

#include "sandbox/landlock_ruleset.hpp"
#include "support.hpp"

namespace {

namespace landlock = cordon::sandbox::landlock;
using cordon::sandbox::launcher_stage;

// UAPI bit values written out independently of the implementation's table.
constexpr std::uint64_t execute = 1ULL << 0;
constexpr std::uint64_t write_file = 1ULL << 1;
constexpr std::uint64_t read_file = 1ULL << 2;
constexpr std::uint64_t read_dir = 1ULL << 3;
constexpr std::uint64_t abi1_rights = 0x1fff;  // EXECUTE .. MAKE_SYM
constexpr std::uint64_t refer = 1ULL << 13;
constexpr std::uint64_t truncate = 1ULL << 14;
constexpr std::uint64_t ioctl_dev = 1ULL << 15;

int open_fd_count() {
    int count = 0;
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) return -1;
    while (const dirent* entry = ::readdir(dir)) {
        if (entry->d_name[0] != '.') ++count;
    }
    ::closedir(dir);
    return count - 1;  // the directory stream's own fd
}

class LandlockRulesetTest : public ::testing::Test {
protected:
    void SetUp() override {
        abi_ = landlock::query_abi();
        if (abi_ < 0) CORDON_SKIP_OR_FAIL("Landlock is not available on this kernel");
    }
    int abi_ = 0;
};

TEST(LandlockRights, HandledAccessFollowsTheAbiTable) {
    struct row {
        int abi;
        std::uint64_t handled;
    };
    const row table[] = {
        {1, abi1_rights},
        {2, abi1_rights | refer},
        {3, abi1_rights | refer | truncate},
        {4, abi1_rights | refer | truncate},  // ABI 4 added network rights only
        {5, abi1_rights | refer | truncate | ioctl_dev},
        {6, abi1_rights | refer | truncate | ioctl_dev},  // clamped to max_abi
        {7, abi1_rights | refer | truncate | ioctl_dev},
    };
    for (const row& r : table) {
        EXPECT_EQ(landlock::handled_access(r.abi), r.handled) << "abi " << r.abi;
    }
    EXPECT_EQ(landlock::handled_access(0), 0U);
    EXPECT_EQ(landlock::handled_access(-38), 0U);
}

TEST(LandlockRights, ReadOnlyIsExecuteReadFileReadDir) {
    for (int abi = 1; abi <= 7; ++abi) {
        EXPECT_EQ(landlock::read_only_access(abi), execute | read_file | read_dir) << "abi " << abi;
    }
}

TEST(LandlockRights, FileMaskKeepsOnlyFileRights) {
    EXPECT_EQ(landlock::file_access_mask(),
              execute | write_file | read_file | truncate | ioctl_dev);
}

// The thresholds the launcher and the backends test against (`abi < full_filesystem_abi` means
// partial enforcement, `abi < scopes_abi` means no signal scope) must agree with what the rights
// table and scopes() actually hand the kernel.
TEST(LandlockRights, FullFilesystemAbiIsTheFirstThatHandlesEveryFilesystemRight) {
    const std::uint64_t all = landlock::handled_access(landlock::max_abi);
    EXPECT_NE(landlock::handled_access(landlock::full_filesystem_abi - 1), all);
    for (int abi = landlock::full_filesystem_abi; abi <= landlock::max_abi + 2; ++abi) {
        EXPECT_EQ(landlock::handled_access(abi), all) << "abi " << abi;
    }
}

TEST(LandlockRights, ScopesStartAtScopesAbi) {
    // LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL, both new in ABI 6.
    constexpr std::uint64_t abstract_unix_socket_and_signal = 0x3;
    EXPECT_EQ(landlock::scopes(5), 0U);
    EXPECT_EQ(landlock::scopes(6), abstract_unix_socket_and_signal);
    EXPECT_EQ(landlock::scopes(7), abstract_unix_socket_and_signal);
    EXPECT_EQ(landlock::scopes(landlock::scopes_abi - 1), 0U);
    EXPECT_NE(landlock::scopes(landlock::scopes_abi), 0U);
}

TEST_F(LandlockRulesetTest, QueryAbiIsPositive) {
    EXPECT_GE(abi_, 1);
}

TEST_F(LandlockRulesetTest, BuildsDirectoryAndFileRules) {
    landlock::failure failure{};
    const int fd = landlock::create_ruleset(abi_, &failure);
    ASSERT_GE(fd, 0) << std::strerror(failure.error);
    EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC);
    const auto read = landlock::access::read;
    const auto write = landlock::access::write;
    EXPECT_EQ(landlock::add_path_rule(fd, abi_, "/tmp", write, false, &failure), 0);
    // A write grant on a file: directory-only rights must be masked.
    EXPECT_EQ(landlock::add_path_rule(fd, abi_, "/dev/null", write, false, &failure), 0);
    EXPECT_EQ(landlock::add_path_rule(fd, abi_, "/etc/hostname", read, false, &failure), 0);
    EXPECT_EQ(landlock::add_root_read_rules(fd, abi_, nullptr, 0, &failure), 0)
        << std::strerror(failure.error);
    ::close(fd);
}

// Why add_fd_rule masks: the kernel refuses directory-only rights on a file with EINVAL.
TEST_F(LandlockRulesetTest, KernelRejectsUnmaskedRightsOnAFile) {
    landlock_ruleset_attr attr{};
    attr.handled_access_fs = landlock::handled_access(abi_);
    const long ruleset = ::syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0U);
    ASSERT_GE(ruleset, 0) << std::strerror(errno);
    const int file = ::open("/dev/null", O_PATH | O_CLOEXEC);
    ASSERT_GE(file, 0);
    landlock_path_beneath_attr beneath{};
    beneath.allowed_access = landlock::handled_access(abi_);
    beneath.parent_fd = file;
    EXPECT_EQ(::syscall(SYS_landlock_add_rule, static_cast<int>(ruleset),
                        LANDLOCK_RULE_PATH_BENEATH, &beneath, 0U),
              -1);
    EXPECT_EQ(errno, EINVAL);
    ::close(file);
    ::close(static_cast<int>(ruleset));
}

TEST_F(LandlockRulesetTest, UnopenablePathFailsClosedAndNamesThePath) {
    const char* missing = "/nonexistent/cordon-landlock-grant";
    landlock::failure failure{};
    const int fd = landlock::create_ruleset(abi_, &failure);
    ASSERT_GE(fd, 0);
    const int before = open_fd_count();
    EXPECT_EQ(landlock::add_path_rule(fd, abi_, missing, landlock::access::write, false, &failure),
              -1);
    EXPECT_EQ(failure.stage, launcher_stage::open_rule_path);
    EXPECT_EQ(failure.error, ENOENT);
    EXPECT_EQ(failure.path, missing);
    EXPECT_EQ(open_fd_count(), before) << "the path fd must be closed on failure";
    // An optional grant narrows silently instead.
    EXPECT_EQ(landlock::add_path_rule(fd, abi_, missing, landlock::access::write, true, &failure),
              0);
    ::close(fd);
}

TEST_F(LandlockRulesetTest, NoSymlinkIsFollowedInAnyComponent) {
    // /proc/self is a symlink; so is /dev/stdout.
    for (const char* through : {"/proc/self/status", "/dev/stdout"}) {
        SCOPED_TRACE(through);
        EXPECT_EQ(landlock::open_no_symlinks(through), -1);
        EXPECT_EQ(errno, ELOOP);
    }
    const int fd = landlock::open_no_symlinks("/etc");
    EXPECT_GE(fd, 0);
    if (fd >= 0) ::close(fd);
}

TEST_F(LandlockRulesetTest, RootRulesLeaveNoFdBehind) {
    landlock::failure failure{};
    const int fd = landlock::create_ruleset(abi_, &failure);
    ASSERT_GE(fd, 0);
    const int before = open_fd_count();
    ASSERT_EQ(landlock::add_root_read_rules(fd, abi_, nullptr, 0, &failure), 0);
    EXPECT_EQ(open_fd_count(), before);
    ::close(fd);
}

}  // namespace
