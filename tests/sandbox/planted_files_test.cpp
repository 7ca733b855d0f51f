// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What a workspace-write command leaves for the next run's planning to read
// (sandbox/path_plan.cpp): a `.git` file, a git directory's commondir, a repository's config. A
// sparse terabyte in their place, written in a moment (`truncate -s 1T sub/.git`), is read up to a
// bound and not whole: the planning of every later run would otherwise take minutes and all of
// memory. (A FIFO swapped in after the planner looked is opened without blocking and refused as not
// a regular file; that race has no deterministic test.)
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "sandbox/path_plan.hpp"
#include "support.hpp"
#include "support/processes.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;

// A sparse file of a terabyte of NULs, no newline in it.
void make_huge(const fs::path& path) {
    { std::ofstream create(path); }
    fs::resize_file(path, std::uintmax_t{1} << 40);
}

// The planning of a workspace-write run over `workspace` ends within a generous bound.
void expect_planned(const fs::path& workspace) {
    const auto status = test::exit_within(
        [&] {
            auto plan = plan_paths({sandbox_mode::workspace_write, canonical_path(workspace)});
            return std::holds_alternative<path_plan>(plan) ? 0 : 3;
        },
        std::chrono::seconds(60));
    ASSERT_TRUE(status.has_value()) << "the planning did not end";
    EXPECT_EQ(*status, 0);
}

TEST(PlantedFiles, AHugeGitFileIsNotReadWhole) {
    test::temp_dir dir;
    fs::create_directories(dir / "sub");
    make_huge(dir / "sub" / ".git");
    expect_planned(dir.path());
}

TEST(PlantedFiles, AHugeCommondirIsNotReadWhole) {
    test::temp_dir dir;
    fs::create_directories(dir / "sub");
    fs::create_directories(dir / "gitdir");
    std::ofstream(dir / "sub" / ".git") << "gitdir: ../gitdir\n";
    make_huge(dir / "gitdir" / "commondir");
    expect_planned(dir.path());
}

TEST(PlantedFiles, AHugeRepositoryConfigIsNotReadWhole) {
    test::temp_dir dir;
    fs::create_directories(dir / "sub" / ".git" / "hooks");
    make_huge(dir / "sub" / ".git" / "config");
    expect_planned(dir.path());
}

}  // namespace
}  // namespace cordon::sandbox
