// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The quarantine against trees a command shaped to defeat it: thousands of levels deep (a path
// longer than PATH_MAX), thousands of entries wide, directories nobody may list, symlinks leading
// out, names holding newlines, a filesystem without RENAME_NOREPLACE, a home the next run could
// reach. Real files throughout, on /dev/shm (a tmpfs) and /var/tmp (another filesystem). The
// judgement that calls the quarantine is tested in judgement_test.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "cordon/unique_fd.hpp"
#include "sandbox/quarantine.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace quarantine_test {
namespace {

namespace fs = std::filesystem;

constexpr int deep = 3000;  // levels: a path to the bottom is far longer than PATH_MAX

unique_fd open_directory(const fs::path& path) {
    return unique_fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

bool present(const fs::path& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// `depth` directories, `top` then "level" in each, with a hook at the bottom: made and reached
// through descriptors only, as a command would make it.
void make_deep_tree(const fs::path& top, int depth) {
    unique_fd at = open_directory(top.parent_path());
    ASSERT_TRUE(at);
    std::string name = top.filename().string();
    for (int level = 0; level < depth; ++level) {
        ASSERT_EQ(::mkdirat(at.get(), name.c_str(), 0755), 0) << level;
        at.reset(::openat(at.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        ASSERT_TRUE(at) << level;
        name = "level";
    }
    unique_fd hook(
        ::openat(at.get(), "hook", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755));
    ASSERT_TRUE(hook);
    ASSERT_EQ(::write(hook.get(), "#!/bin/sh\n", 10), 10);
}

// The hook at the bottom of make_deep_tree(top, depth); nullopt when the tree is not whole.
std::optional<std::string> deep_hook(const fs::path& top, int depth) {
    unique_fd at = open_directory(top);
    for (int level = 1; at && level < depth; ++level) {
        at.reset(::openat(at.get(), "level", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
    if (!at) return std::nullopt;
    return read_regular_file(at.get(), "hook", 1024);
}

// Every entry beneath `top` by its relative path: "d" for a directory, "-> target" for a symlink,
// a regular file's content otherwise.
std::map<std::string, std::string> listing(const fs::path& top) {
    std::map<std::string, std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(top)) {
        const std::string relative = entry.path().lexically_relative(top).string();
        if (entry.is_symlink()) {
            out[relative] = "-> " + fs::read_symlink(entry.path()).string();
        } else if (entry.is_directory()) {
            out[relative] = "d";
        } else {
            out[relative] = test::read_file(entry.path());
        }
    }
    return out;
}

// RLIMIT_NOFILE a few descriptors above those open now, for the scope: a walk that holds a
// descriptor per level runs out of them a few levels down.
class few_descriptors {
public:
    few_descriptors() {
        ::getrlimit(RLIMIT_NOFILE, &old_);
        rlim_t highest = 0;
        for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
            highest = std::max<rlim_t>(highest, std::stoul(entry.path().filename().string()));
        }
        rlimit lowered = old_;
        lowered.rlim_cur = highest + 16;
        ::setrlimit(RLIMIT_NOFILE, &lowered);
    }
    ~few_descriptors() { ::setrlimit(RLIMIT_NOFILE, &old_); }
    few_descriptors(const few_descriptors&) = delete;
    few_descriptors& operator=(const few_descriptors&) = delete;

private:
    rlimit old_{};
};

// Drops the rights that let root list, enter and write any directory from the calling thread's
// effective set (capabilities are per thread; the raw syscall changes this thread only): root
// then meets the permission bits as any user does. Not root: nothing to drop.
bool drop_directory_overrides() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
    if (::syscall(SYS_capget, &header, data) != 0) return false;
    for (const int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER}) {
        data[CAP_TO_INDEX(cap)].effective &= ~CAP_TO_MASK(cap);
    }
    return ::syscall(SYS_capset, &header, data) == 0;
}

// Makes renameat2() with flags fail with EINVAL in the calling thread, as on a filesystem that
// does not support RENAME_NOREPLACE (a seccomp filter is per thread without TSYNC; so is
// no_new_privs). Plain renames (flags 0: glibc's renameat on some architectures) pass.
bool refuse_rename_flags() {
    constexpr auto flags_offset =
        static_cast<unsigned>(offsetof(seccomp_data, args) + 4 * sizeof(std::uint64_t)
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                              + sizeof(std::uint32_t)
#endif
        );
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_renameat2, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, flags_offset),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EINVAL & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

// The workspace, the home and what lies outside on a tmpfs, which makes thousands of directories
// in milliseconds (a disk's journal takes up to a second for a tree of `deep` levels); /var/tmp is
// the other filesystem.
class Quarantine : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(root_);
        fs::create_directories(outside_);
        std::error_code ec;
        fallback_was_there_ = fs::exists(fallback_quarantine_home(), ec);
    }

    void TearDown() override {
        // remove_tree itself: the trees are deeper than fs::remove_all can name, and some deny
        // listing to anyone without root's overrides.
        for (const fs::path& dir : made_elsewhere_)
            remove(dir);
        // The shared fallback home, when a test made it and nothing else is in it now.
        if (!fallback_was_there_) ::rmdir(fallback_quarantine_home().c_str());
        remove(base_.path());
        remove(disk_.path());
    }

    static void remove(const fs::path& path) {
        unique_fd parent = open_directory(path.parent_path());
        ASSERT_TRUE(parent) << path;
        EXPECT_EQ(remove_tree(parent.get(), path.filename().string()), std::nullopt) << path;
    }

    // A quarantine home on the other filesystem, or nullopt when /var/tmp is not another one.
    std::optional<fs::path> elsewhere() {
        struct stat here {};
        struct stat there {};
        if (::stat(base_.path().c_str(), &here) != 0 || ::stat(disk_.path().c_str(), &there) != 0 ||
            here.st_dev == there.st_dev) {
            return std::nullopt;
        }
        return disk_ / "quarantine";
    }

    test::temp_dir base_{"/dev/shm", "cordon-quarantine-test-"};
    test::temp_dir disk_;
    fs::path root_ = base_ / "ws";
    fs::path home_ = base_ / "quarantine";
    fs::path outside_ = base_ / "outside";
    std::vector<fs::path> made_elsewhere_;  // judgements in the shared fallback home
    bool fallback_was_there_ = false;
};

// One descriptor and one stack frame at a time, whatever the depth: with a few descriptors to
// spare, a tree of thousands of levels goes, and the hook at its bottom with it.
TEST_F(Quarantine, ATreeThousandsOfLevelsDeepIsRemoved) {
    make_deep_tree(root_ / ".vscode", deep);
    ASSERT_EQ(deep_hook(root_ / ".vscode", deep), "#!/bin/sh\n");
    unique_fd root = open_directory(root_);
    std::optional<std::string> failed;
    {
        few_descriptors guard;
        failed = remove_tree(root.get(), ".vscode");
    }
    EXPECT_EQ(failed, std::nullopt);
    EXPECT_FALSE(present(root_ / ".vscode"));
}

// On the same filesystem the tree is renamed whole, however deep.
TEST_F(Quarantine, ATreeThousandsOfLevelsDeepIsMovedWhole) {
    make_deep_tree(root_ / ".vscode", deep);
    quarantine away(home_, {root_});
    const auto taken = away.take(root_, root_ / ".vscode", "planted");
    ASSERT_TRUE(std::holds_alternative<quarantine::taken>(taken)) << std::get<std::string>(taken);
    const std::string kept_at = std::get<quarantine::taken>(taken).kept_at;
    EXPECT_EQ(kept_at, (away.directory() / "ws" / ".vscode").string());
    EXPECT_FALSE(present(root_ / ".vscode"));
    EXPECT_EQ(deep_hook(kept_at, deep), "#!/bin/sh\n");
}

// On another filesystem the copy gives up (too deep to keep: a person could not look at it), and
// the tree is removed, the copy made so far with it.
TEST_F(Quarantine, ATreeTooDeepToCopyElsewhereIsRemoved) {
    const auto home = elsewhere();
    if (!home) GTEST_SKIP() << "/dev/shm and /var/tmp are one filesystem here";
    make_deep_tree(root_ / ".vscode", deep);
    quarantine away(*home, {root_});
    const auto taken = away.take(root_, root_ / ".vscode", "planted");
    ASSERT_TRUE(std::holds_alternative<quarantine::taken>(taken)) << std::get<std::string>(taken);
    EXPECT_EQ(std::get<quarantine::taken>(taken).kept_at, "");
    EXPECT_FALSE(std::get<quarantine::taken>(taken).gone);
    EXPECT_FALSE(present(root_ / ".vscode"));
    EXPECT_FALSE(present(away.directory() / "ws" / ".vscode"));
}

// A tree within the copy's bounds arrives whole on the other filesystem, links as links; a
// second one of the same name goes beside the first and leaves it be.
TEST_F(Quarantine, ATreeElsewhereIsCopiedWholeBesideTheOneBefore) {
    const auto home = elsewhere();
    if (!home) GTEST_SKIP() << "/dev/shm and /var/tmp are one filesystem here";
    const fs::path top = root_ / ".vscode";
    fs::create_directories(top / "a" / "b" / "c");
    fs::create_directories(top / "d" / "e");
    fs::create_directories(top / "empty" / "dir");
    test::write_file(top / "a" / "b" / "c" / "one", "1");
    test::write_file(top / "a" / "two", "2");
    test::write_file(top / "d" / "e" / "three", "3");
    test::write_file(top / "tasks.json", "{}");
    fs::create_symlink("../../outside", top / "d" / "out");
    make_deep_tree(top / "deep", 30);
    const auto before = listing(top);
    quarantine away(*home, {root_});
    const auto first = away.take(root_, top, "planted");
    ASSERT_TRUE(std::holds_alternative<quarantine::taken>(first)) << std::get<std::string>(first);
    const fs::path kept_at = std::get<quarantine::taken>(first).kept_at;
    EXPECT_EQ(kept_at, away.directory() / "ws" / ".vscode");
    EXPECT_FALSE(present(top));
    EXPECT_EQ(listing(kept_at), before);
    EXPECT_EQ(deep_hook(kept_at / "deep", 30), "#!/bin/sh\n");

    fs::create_directories(top);
    test::write_file(top / "tasks.json", "second");
    const auto second = away.take(root_, top, "planted again");
    ASSERT_TRUE(std::holds_alternative<quarantine::taken>(second)) << std::get<std::string>(second);
    EXPECT_EQ(std::get<quarantine::taken>(second).kept_at,
              (away.directory() / "ws" / ".vscode.1").string());
    EXPECT_EQ(test::read_file(away.directory() / "ws" / ".vscode.1" / "tasks.json"), "second");
    EXPECT_EQ(listing(kept_at), before);
}

TEST_F(Quarantine, AWideTreeIsRemoved) {
    const fs::path top = root_ / ".claude";
    fs::create_directories(top);
    for (int i = 0; i < 4000; ++i)
        test::write_file(top / ("f" + std::to_string(i)), "");
    for (int d = 0; d < 10; ++d) {
        const fs::path dir = top / ("d" + std::to_string(d));
        fs::create_directory(dir);
        for (int i = 0; i < 100; ++i)
            fs::create_directory(dir / std::to_string(i));
    }
    unique_fd root = open_directory(root_);
    EXPECT_EQ(remove_tree(root.get(), ".claude"), std::nullopt);
    EXPECT_FALSE(present(top));
}

// A tree whose directories deny their owner listing (000), entering (0600), listing and removing
// (0300, 0500). `top` is left with them.
void make_locked_tree(const fs::path& top) {
    fs::create_directories(top / "locked" / "inner");
    test::write_file(top / "locked" / "inner" / "hook", "x");
    test::write_file(top / "locked" / "hook", "x");
    for (const char* name : {"no-search", "no-read", "read-only"}) {
        fs::create_directories(top / name / "sub");
        test::write_file(top / name / "file", "x");
    }
    ASSERT_EQ(::chmod((top / "locked" / "inner").c_str(), 0), 0);
    ASSERT_EQ(::chmod((top / "locked").c_str(), 0), 0);
    ASSERT_EQ(::chmod((top / "no-search").c_str(), 0600), 0);
    ASSERT_EQ(::chmod((top / "no-read").c_str(), 0300), 0);
    ASSERT_EQ(::chmod((top / "read-only").c_str(), 0500), 0);
}

// As whoever runs the tests (root lists anything).
TEST_F(Quarantine, DirectoriesTheirOwnerMayNotListAreRemoved) {
    make_locked_tree(root_ / ".envrc.d");
    unique_fd root = open_directory(root_);
    EXPECT_EQ(remove_tree(root.get(), ".envrc.d"), std::nullopt);
    EXPECT_FALSE(present(root_ / ".envrc.d"));
}

// The same where the permission bits bind, root's too: the owner's rights are given first.
TEST_F(Quarantine, DirectoriesTheirOwnerMayNotListAreRemovedWhereTheBitsBind) {
    make_locked_tree(root_ / ".envrc.d");
    unique_fd root = open_directory(root_);
    bool dropped = false;
    int listing_error = 0;
    std::optional<std::string> failed;
    std::thread([&] {
        dropped = drop_directory_overrides();
        if (!dropped) return;
        const int fd =
            ::open((root_ / ".envrc.d" / "locked").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        listing_error = fd < 0 ? errno : 0;
        if (fd >= 0) ::close(fd);
        failed = remove_tree(root.get(), ".envrc.d");
    }).join();
    ASSERT_TRUE(dropped) << "capset";
    EXPECT_EQ(listing_error, EACCES) << "the bits do not bind: the case is not the one meant";
    EXPECT_EQ(failed, std::nullopt);
    EXPECT_FALSE(present(root_ / ".envrc.d"));
}

// What cannot go (a file in another user's directory that denies writing) stays, with the reason;
// everything else goes, before and after it.
TEST_F(Quarantine, WhatCannotBeRemovedIsPassedOver) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root: only root can leave another user's directory in the tree";
    }
    const fs::path top = root_ / ".vscode";
    for (const char* name : {"a", "stuck", "z"}) {
        fs::create_directories(top / name);
        test::write_file(top / name / "file", "x");
    }
    ASSERT_EQ(::chown((top / "stuck").c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chmod((top / "stuck").c_str(), 0555), 0);
    std::optional<std::variant<quarantine::taken, std::string>> taken;
    std::thread([&] {
        if (!drop_directory_overrides()) return;
        quarantine nowhere({});
        taken = nowhere.take(root_, top, "planted");
    }).join();
    ASSERT_TRUE(taken.has_value()) << "capset";
    ASSERT_TRUE(std::holds_alternative<std::string>(*taken)) << "it cannot all go";
    EXPECT_EQ(std::get<std::string>(*taken), "stuck/file: Permission denied");
    EXPECT_TRUE(present(top / "stuck" / "file"));
    EXPECT_FALSE(present(top / "a"));
    EXPECT_FALSE(present(top / "z"));
}

// Links inside the tree, and the tree itself a link: removed as links, what they lead to kept.
TEST_F(Quarantine, SymlinksLeadingOutAreRemovedAsLinks) {
    test::write_file(outside_ / "victim", "keep me\n");
    fs::create_directories(outside_ / "dir");
    test::write_file(outside_ / "dir" / "inner", "keep me too\n");
    const fs::path top = root_ / ".vscode";
    fs::create_directories(top / "sub");
    fs::create_symlink(outside_ / "victim", top / "to-file");
    fs::create_symlink(outside_ / "dir", top / "to-dir");
    fs::create_symlink("../../../outside", top / "sub" / "back");
    fs::create_symlink(outside_ / "dir", root_ / ".envrc");
    unique_fd root = open_directory(root_);
    EXPECT_EQ(remove_tree(root.get(), ".vscode"), std::nullopt);
    EXPECT_EQ(remove_tree(root.get(), ".envrc"), std::nullopt);
    EXPECT_FALSE(present(top));
    EXPECT_FALSE(present(root_ / ".envrc"));
    EXPECT_EQ(test::read_file(outside_ / "victim"), "keep me\n");
    EXPECT_EQ(test::read_file(outside_ / "dir" / "inner"), "keep me too\n");
}

// take() opens the parent of its path following no symlink: a link on the way leads nowhere,
// whether the path would be kept or removed.
TEST_F(Quarantine, ASymlinkOnThePathIsNotFollowed) {
    test::write_file(outside_ / ".envrc", "outside's own\n");
    fs::create_directory_symlink(outside_, root_ / "hop");
    quarantine away(home_, {root_});
    quarantine nowhere({});
    for (quarantine* q : {&away, &nowhere}) {
        const auto taken = q->take(root_, root_ / "hop" / ".envrc", "planted");
        EXPECT_TRUE(std::holds_alternative<std::string>(taken));
    }
    EXPECT_EQ(test::read_file(outside_ / ".envrc"), "outside's own\n");
    EXPECT_TRUE(away.directory().empty()) << "nothing went to the quarantine";
}

// A home the run could write gives way to the fallback; a fallback it could write as well leaves
// nothing to keep, and what is taken is removed.
TEST_F(Quarantine, AHomeWithinAWritableRootGivesWayToTheFallback) {
    test::write_file(root_ / ".envrc", "planted\n");
    const fs::path inside = root_ / ".cordon" / "quarantine";
    quarantine away(inside, {outside_, root_});
    const auto taken = away.take(root_, root_ / ".envrc", "planted");
    if (!away.directory().empty()) made_elsewhere_.push_back(away.directory());
    ASSERT_TRUE(std::holds_alternative<quarantine::taken>(taken)) << std::get<std::string>(taken);
    const fs::path kept_at = std::get<quarantine::taken>(taken).kept_at;
    EXPECT_EQ(away.directory().parent_path(), fallback_quarantine_home());
    EXPECT_EQ(kept_at, away.directory() / "ws" / ".envrc");
    EXPECT_EQ(test::read_file(kept_at), "planted\n");
    EXPECT_FALSE(present(root_ / ".cordon")) << "nothing was made within the root";
    struct stat st {};
    ASSERT_EQ(::lstat(fallback_quarantine_home().c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_uid, ::geteuid());
    EXPECT_EQ(st.st_mode & 0022, 0U);

    test::write_file(root_ / ".envrc", "planted again\n");
    quarantine nowhere(inside, {root_, fallback_quarantine_home().parent_path()});
    const auto removed = nowhere.take(root_, root_ / ".envrc", "planted");
    ASSERT_TRUE(std::holds_alternative<quarantine::taken>(removed))
        << std::get<std::string>(removed);
    EXPECT_EQ(std::get<quarantine::taken>(removed).kept_at, "");
    EXPECT_TRUE(nowhere.directory().empty());
    EXPECT_FALSE(present(root_ / ".envrc"));
    EXPECT_FALSE(present(root_ / ".cordon"));
}

// The home is made and opened component by component without following a symlink: one that is a
// link, or lies beyond one, is not used; nor is one others may write. What cordon makes is 0700.
TEST_F(Quarantine, AHomeThroughASymlinkIsNotUsed) {
    fs::create_directories(base_ / "real");
    fs::create_directory_symlink(base_ / "real", base_ / "link");
    fs::create_directories(base_ / "shared");
    ASSERT_EQ(::chmod((base_ / "shared").c_str(), 0770), 0);
    for (const fs::path& home : {base_ / "link", base_ / "link" / "quarantine", base_ / "shared"}) {
        test::write_file(root_ / ".envrc", "planted\n");
        quarantine away(home, {root_});
        const auto taken = away.take(root_, root_ / ".envrc", "planted");
        if (!away.directory().empty()) made_elsewhere_.push_back(away.directory());
        ASSERT_TRUE(std::holds_alternative<quarantine::taken>(taken))
            << std::get<std::string>(taken);
        EXPECT_EQ(away.directory().parent_path(), fallback_quarantine_home()) << home;
    }
    EXPECT_TRUE(fs::is_empty(base_ / "real"));
    EXPECT_TRUE(fs::is_empty(base_ / "shared"));

    test::write_file(root_ / ".envrc", "planted\n");
    quarantine away(home_ / "made" / "here", {root_});
    const auto taken = away.take(root_, root_ / ".envrc", "planted");
    ASSERT_TRUE(std::holds_alternative<quarantine::taken>(taken)) << std::get<std::string>(taken);
    EXPECT_EQ(away.directory().parent_path(), home_ / "made" / "here");
    for (const fs::path& made : {home_, home_ / "made", home_ / "made" / "here"}) {
        struct stat st {};
        ASSERT_EQ(::lstat(made.c_str(), &st), 0) << made;
        EXPECT_EQ(st.st_mode & 07777, 0700U) << made;
    }
}

// A name may hold any byte but '/' and NUL: one entry stays one line of two fields.
TEST_F(Quarantine, AManifestLineIsOneEntry) {
    const std::string name = "evil\nname\twith\\slash\x7f";
    test::write_file(root_ / name, "x");
    quarantine away(home_, {root_});
    const auto taken = away.take(root_, root_ / name, "why\nsecond line");
    ASSERT_TRUE(std::holds_alternative<quarantine::taken>(taken)) << std::get<std::string>(taken);
    EXPECT_EQ(test::read_file(away.directory() / "manifest"),
              root_.string() + "/evil\\x0aname\\x09with\\\\slash\\x7f\twhy\\x0asecond line\n");
}

TEST_F(Quarantine, APathAlreadyGoneIsSaidToBe) {
    quarantine away(home_, {root_});
    const auto taken = away.take(root_, root_ / ".envrc", "planted");
    ASSERT_TRUE(std::holds_alternative<quarantine::taken>(taken)) << std::get<std::string>(taken);
    EXPECT_TRUE(std::get<quarantine::taken>(taken).gone);
    EXPECT_EQ(std::get<quarantine::taken>(taken).kept_at, "");

    test::write_file(root_ / ".envrc", "planted\n");
    const auto present_one = away.take(root_, root_ / ".envrc", "planted");
    ASSERT_TRUE(std::holds_alternative<quarantine::taken>(present_one));
    EXPECT_FALSE(std::get<quarantine::taken>(present_one).gone);
    EXPECT_NE(std::get<quarantine::taken>(present_one).kept_at, "");
}

// A name that is no entry of its directory (`.`, `..`, empty, with a slash) is never removed
// nor taken, however a caller spelled it: the directory and its parent, and everything beside
// the path, stay.
TEST_F(Quarantine, ANameThatIsNoEntryIsNeitherRemovedNorTaken) {
    fs::create_directories(root_ / "sub");
    test::write_file(root_ / "sub" / "kept", "mine\n");
    test::write_file(root_ / "beside", "mine\n");
    unique_fd sub = open_directory(root_ / "sub");
    for (const std::string name : {".", "..", "", "kept/.."})
        EXPECT_NE(remove_tree(sub.get(), name), std::nullopt) << name;
    quarantine away(home_, {root_});
    for (const fs::path& path : {root_ / "sub" / "..", root_ / "sub" / ".", root_ / "sub/"}) {
        const auto taken = away.take(root_, path, "planted");
        EXPECT_TRUE(std::holds_alternative<std::string>(taken)) << path;
    }
    EXPECT_EQ(test::read_file(root_ / "sub" / "kept"), "mine\n");
    EXPECT_EQ(test::read_file(root_ / "beside"), "mine\n");
}

// Where renameat2() knows no RENAME_NOREPLACE (EINVAL), the entry is still moved, not removed, by
// a plain rename to a name seen to be free; a second one of the same name does not replace the
// first.
TEST_F(Quarantine, AFilesystemWithoutNoReplaceStillMovesAndNeverReplaces) {
    test::write_file(base_ / "probe", "");
    bool refused = false;
    int refusal_error = 0;
    int probe_error = 0;
    std::vector<std::variant<quarantine::taken, std::string>> taken;
    quarantine away(home_, {root_});
    std::thread([&] {
        refused = refuse_rename_flags();
        if (!refused) {
            refusal_error = errno;
            return;
        }
        const int probed = ::renameat2(AT_FDCWD, (base_ / "probe").c_str(), AT_FDCWD,
                                       (base_ / "probed").c_str(), RENAME_NOREPLACE);
        probe_error = probed == 0 ? 0 : errno;
        for (const char* content : {"first\n", "second\n"}) {
            test::write_file(root_ / ".envrc", content);
            taken.push_back(away.take(root_, root_ / ".envrc", "planted"));
        }
    }).join();
    if (!refused) GTEST_SKIP() << "no seccomp filter here: " << std::strerror(refusal_error);
    ASSERT_EQ(probe_error, EINVAL) << "the filter does not refuse RENAME_NOREPLACE";
    ASSERT_EQ(taken.size(), 2U);
    const fs::path kept = away.directory() / "ws";
    for (std::size_t i = 0; i < taken.size(); ++i) {
        ASSERT_TRUE(std::holds_alternative<quarantine::taken>(taken[i]))
            << std::get<std::string>(taken[i]);
        EXPECT_EQ(std::get<quarantine::taken>(taken[i]).kept_at,
                  (kept / (i == 0 ? ".envrc" : ".envrc.1")).string());
    }
    EXPECT_EQ(test::read_file(kept / ".envrc"), "first\n");
    EXPECT_EQ(test::read_file(kept / ".envrc.1"), "second\n");
    EXPECT_FALSE(present(root_ / ".envrc"));
}

}  // namespace
}  // namespace quarantine_test
}  // namespace cordon::sandbox
