// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// base::remove_tree against the trees a command could leave for cordon to remove outside any
// sandbox: deeper than the descriptor limit, full of symlinks and hard links to what lies
// outside, with directories that deny their owner, names no shell would type, a mount inside,
// and a top that was swapped for something else.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/tree_removal.hpp"
#include "cordon/unique_fd.hpp"
#include "support.hpp"

namespace cordon::base {
namespace {

namespace fs = std::filesystem;

unique_fd open_directory(const fs::path& path) {
    return unique_fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

// A chain `top/d/d/d/...` `depth` levels deep, with a file at every level, made one level at a
// time by descriptor (its paths are far longer than PATH_MAX).
void make_chain(const fs::path& top, int depth) {
    ASSERT_EQ(::mkdir(top.c_str(), 0700), 0) << std::strerror(errno);
    unique_fd at = open_directory(top);
    ASSERT_TRUE(at);
    for (int level = 0; level < depth; ++level) {
        unique_fd file(::openat(at.get(), "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        ASSERT_TRUE(file);
        ASSERT_EQ(::mkdirat(at.get(), "d", 0700), 0) << level << ": " << std::strerror(errno);
        unique_fd next(::openat(at.get(), "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        ASSERT_TRUE(next);
        at = std::move(next);
    }
}

// Lowers the soft descriptor limit to `soft` for the scope.
class lowered_descriptor_limit {
public:
    explicit lowered_descriptor_limit(rlim_t soft) {
        ::getrlimit(RLIMIT_NOFILE, &saved_);
        rlimit lowered = saved_;
        lowered.rlim_cur = soft;
        ok_ = ::setrlimit(RLIMIT_NOFILE, &lowered) == 0;
    }
    ~lowered_descriptor_limit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
    lowered_descriptor_limit(const lowered_descriptor_limit&) = delete;
    lowered_descriptor_limit& operator=(const lowered_descriptor_limit&) = delete;
    [[nodiscard]] bool ok() const { return ok_; }

private:
    rlimit saved_{};
    bool ok_ = false;
};

// The lowest free descriptor number: what the soft limit must stay above for the test to run.
int lowest_free_descriptor() {
    unique_fd probe(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    return probe.get();
}

class TreeRemoval : public ::testing::Test {
protected:
    // The tree's parent and, beside it, what lies outside the tree (on the same filesystem, so
    // that a hard link can reach it).
    test::temp_dir dir_{"/dev/shm", "cordon-tree-removal-test-"};
    fs::path outside_ = dir_ / "outside";
    unique_fd parent_ = open_directory(dir_.path());

    void SetUp() override {
        ASSERT_TRUE(parent_);
        fs::create_directory(outside_);
        test::write_file(outside_ / "kept", "outside");
    }
    [[nodiscard]] bool outside_intact() const {
        return fs::is_directory(outside_) && test::read_file(outside_ / "kept") == "outside";
    }
};

// A chain many times deeper than the descriptor limit goes whole: one directory of it is open at
// a time (std::filesystem::remove_all keeps one per level and fails with EMFILE).
TEST_F(TreeRemoval, AChainFarDeeperThanTheDescriptorLimitIsRemoved) {
    constexpr int depth = 2000;
    make_chain(dir_ / "tree", depth);
    const rlim_t soft = static_cast<rlim_t>(lowest_free_descriptor()) + 16;
    ASSERT_LT(soft * 50, static_cast<rlim_t>(depth)) << "the chain would not be far deeper";
    std::optional<std::string> stayed;
    {
        lowered_descriptor_limit limit(soft);
        ASSERT_TRUE(limit.ok()) << std::strerror(errno);
        stayed = remove_tree(parent_.get(), "tree");
    }
    EXPECT_EQ(stayed, std::nullopt);
    EXPECT_FALSE(fs::exists(dir_ / "tree"));
}

// Symlinks to a directory, a file and the root outside are unlinked; what they point to stays.
// So does a file the tree holds a hard link to.
TEST_F(TreeRemoval, SymlinksAndHardLinksToWhatLiesOutsideLeaveItIntact) {
    const fs::path tree = dir_ / "tree";
    fs::create_directories(tree / "a" / "b");
    fs::create_directory_symlink(outside_, tree / "to-dir");
    fs::create_directory_symlink(outside_, tree / "a" / "b" / "to-dir");
    fs::create_symlink(outside_ / "kept", tree / "a" / "to-file");
    fs::create_directory_symlink("/", tree / "a" / "to-root");
    fs::create_symlink("../../outside", tree / "relative");
    fs::create_hard_link(outside_ / "kept", tree / "a" / "b" / "hard");
    // The top itself a symlink: the link goes, not what it names.
    fs::create_directory_symlink(outside_, dir_ / "top-link");

    EXPECT_EQ(remove_tree(parent_.get(), "tree"), std::nullopt);
    EXPECT_EQ(remove_tree(parent_.get(), "top-link"), std::nullopt);
    EXPECT_FALSE(fs::exists(tree));
    EXPECT_FALSE(fs::is_symlink(dir_ / "top-link"));
    EXPECT_TRUE(outside_intact());
    EXPECT_EQ(fs::hard_link_count(outside_ / "kept"), 1U);
}

// Directories that deny their owner everything (mode 000), nested, with content: the owner gives
// itself the rights back and removes them. Named oddly: a newline, a leading dash, bytes that are
// not UTF-8, a glob, dots, the longest name a filesystem takes.
TEST_F(TreeRemoval, UnreadableDirectoriesAndOddNamesAreRemoved) {
    const fs::path tree = dir_ / "tree";
    const std::vector<std::string> names{
        "new\nline", "-rf", std::string("\xff\xfe bytes"), "*", "...",
        " ",         "\\",  std::string(255, 'n')};
    fs::create_directory(tree);
    for (const std::string& name : names) {
        fs::create_directories(tree / name / name);
        test::write_file(tree / name / name / name, "x");
        test::write_file(tree / name / "file", "x");
    }
    fs::create_directories(tree / "locked" / "inner");
    test::write_file(tree / "locked" / "inner" / "file", "x");
    fs::permissions(tree / "locked" / "inner", fs::perms::none);
    fs::permissions(tree / "locked", fs::perms::none);
    fs::permissions(tree / names[0], fs::perms::owner_write);  // no listing, no search

    EXPECT_EQ(remove_tree(parent_.get(), "tree"), std::nullopt);
    EXPECT_FALSE(fs::exists(tree));
}

// An entry of the directory, never the directory or its parent.
TEST_F(TreeRemoval, OnlyOneEntryOfTheDirectoryIsEverNamed) {
    for (const std::string& name : {std::string(), std::string("."), std::string(".."),
                                    std::string("outside/kept"), std::string("/")}) {
        EXPECT_NE(remove_tree(parent_.get(), name), std::nullopt) << name;
    }
    EXPECT_TRUE(outside_intact());
    EXPECT_EQ(remove_tree(parent_.get(), "missing"), std::nullopt) << "nothing there: done";
}

// The directory meant, by descriptor: when a command renamed it away and put a symlink or another
// directory at its name, nothing is removed, and the reason says so.
TEST_F(TreeRemoval, ATopSwappedForAnotherIsLeftAlone) {
    const fs::path tree = dir_ / "tree";
    fs::create_directory(tree);
    unique_fd meant = open_directory(tree);
    ASSERT_TRUE(meant);
    fs::rename(tree, dir_ / "moved");
    fs::create_directory_symlink(outside_, tree);
    auto stayed = remove_tree(parent_.get(), "tree", meant.get());
    ASSERT_NE(stayed, std::nullopt);
    EXPECT_TRUE(fs::is_symlink(tree));
    fs::remove(tree);

    fs::create_directory(tree);
    test::write_file(tree / "other", "x");
    stayed = remove_tree(parent_.get(), "tree", meant.get());
    ASSERT_NE(stayed, std::nullopt);
    EXPECT_NE(stayed->find("not the directory meant"), std::string::npos) << *stayed;
    EXPECT_TRUE(fs::exists(tree / "other"));
    EXPECT_TRUE(outside_intact());

    // The one meant, wherever it is now, goes by its own name.
    EXPECT_EQ(remove_tree(parent_.get(), "moved", meant.get()), std::nullopt);
    EXPECT_FALSE(fs::exists(dir_ / "moved"));
}

// A filesystem mounted inside the tree (a tmpfs; a bind mount of a directory outside, on the
// same device) is not entered: what is mounted there is not the tree's. In a mount namespace of
// its own, so that nothing of it is seen outside the child that makes it.
TEST_F(TreeRemoval, MountsInsideTheTreeAreNotEntered) {
    const fs::path tree = dir_ / "tree";
    fs::create_directories(tree / "tmpfs");
    fs::create_directories(tree / "deeper" / "bind");
    test::write_file(tree / "plain", "x");
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // 2: no mount namespace here; 3: the mounts failed; 4: a mount was entered; 5: the walk
        // said nothing stayed; 6: what beside the mounts was not removed.
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
            _exit(2);
        }
        if (::mount("tmpfs", (tree / "tmpfs").c_str(), "tmpfs", 0, "size=1m") != 0 ||
            ::mount(outside_.c_str(), (tree / "deeper" / "bind").c_str(), nullptr, MS_BIND,
                    nullptr) != 0) {
            _exit(3);
        }
        test::write_file(tree / "tmpfs" / "mounted", "x");
        const auto stayed = remove_tree(parent_.get(), "tree");
        if (!fs::exists(tree / "tmpfs" / "mounted") || !outside_intact()) _exit(4);
        if (!stayed) _exit(5);
        if (fs::exists(tree / "plain")) _exit(6);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "no mount namespace for this test";
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_TRUE(outside_intact());
    // Outside the child's namespace they are plain directories again.
    EXPECT_EQ(remove_tree(parent_.get(), "tree"), std::nullopt);
    EXPECT_FALSE(fs::exists(tree));
}

}  // namespace
}  // namespace cordon::base
