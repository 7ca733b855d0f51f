// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The Landlock rung's private /tmp directories (sandbox/private_tmp.hpp): locked while their run
// lives, removed with it, and swept by the next cordon when the one that made them was killed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <variant>

#include "sandbox/private_tmp.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;

unique_fd open_directory(const fs::path& path) {
    return unique_fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

TEST(PrivateTmp, OnlyTheUnlockedDirectoriesOfDeadCordonsAreSwept) {
    test::temp_dir parent;
    // A killed cordon's: nothing holds its lock.
    const fs::path dead = parent / "cordon-tmp-dead01";
    fs::create_directories(dead / "left" / "behind");
    test::write_file(dead / "left" / "file", "x");
    // A live run's: its lock is held (here by this test, as by its cordon).
    const fs::path live = parent / "cordon-tmp-live01";
    fs::create_directory(live);
    unique_fd held = open_directory(live);
    ASSERT_EQ(::flock(held.get(), LOCK_EX | LOCK_NB), 0);
    // Not cordon's: another name, and a symlink by the right name (never followed).
    const fs::path other = parent / "not-cordon-tmp";
    fs::create_directory(other);
    const fs::path target = parent / "target";
    fs::create_directory(target);
    test::write_file(target / "kept", "x");
    fs::create_directory_symlink(target, parent / "cordon-tmp-link01");

    EXPECT_EQ(sweep_dead_private_tmps(parent.path()), 1U);
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_TRUE(fs::exists(live)) << "a live run's /tmp was swept";
    EXPECT_TRUE(fs::exists(other));
    EXPECT_TRUE(fs::exists(target / "kept")) << "the sweep followed a symlink";
    EXPECT_TRUE(fs::is_symlink(parent / "cordon-tmp-link01"));

    // Once its holder is gone, it is a dead cordon's too.
    held.reset();
    EXPECT_EQ(sweep_dead_private_tmps(parent.path()), 1U);
    EXPECT_FALSE(fs::exists(live));
}

TEST(PrivateTmp, ADirectoryIsLockedWhileItsRunLivesAndRemovedWithIt) {
    test::temp_dir parent;
    auto made = private_tmp_directory::create(parent.path());
    ASSERT_TRUE(std::holds_alternative<std::shared_ptr<const private_tmp_directory>>(made))
        << std::get<std::string>(made);
    auto directory = std::get<std::shared_ptr<const private_tmp_directory>>(std::move(made));
    const fs::path path = directory->path();
    EXPECT_EQ(path.parent_path(), parent.path());
    EXPECT_EQ(path.filename().string().rfind("cordon-tmp-", 0), 0U);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700U);
    test::write_file(path / "from-the-command", "x");

    // Another cordon's sweep leaves it, and so does a second try of the lock (never waits).
    EXPECT_EQ(sweep_dead_private_tmps(parent.path()), 0U);
    EXPECT_TRUE(fs::exists(path / "from-the-command"));
    unique_fd other = open_directory(path);
    EXPECT_NE(::flock(other.get(), LOCK_EX | LOCK_NB), 0);

    directory.reset();
    EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace cordon::sandbox
