// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The verdict's text as a typed value (sandbox/verdict_cache.hpp, cached_verdict): written and read
// back, the files earlier cordons wrote still read, and anything else is no verdict.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "sandbox/verdict_cache.hpp"
#include "support.hpp"
#include "support/processes.hpp"

namespace cordon::sandbox {
namespace {

using namespace std::chrono_literals;

std::vector<rung_report> linux_ladder() {
    rung_report bwrap;
    bwrap.kind = backend_kind::bwrap;
    bwrap.runner = "/usr/bin/bwrap";
    rung_report landlock;
    landlock.kind = backend_kind::landlock;
    landlock.runner = "/opt/cordon/bin/cordon-landlock";
    return {bwrap, landlock};
}

// Exactly what the provider wrote before the format had a type of its own (states: 0 usable,
// 1 unusable, 2 not probed).
constexpr const char* earlier_text =
    "probed 1234\n"
    "launcher 1 5 \n"
    "rung bwrap 0 5 1 \n"
    "rung landlock 2 - 0 \n";

TEST(CachedVerdict, AVerdictAnEarlierCordonWroteIsReadAndWrittenTheSameWay) {
    const auto verdict = cached_verdict::parse(earlier_text, linux_ladder());
    ASSERT_TRUE(verdict.has_value());
    EXPECT_EQ(verdict->probed_at, 1234s);
    EXPECT_TRUE(verdict->launcher.probed);
    EXPECT_EQ(verdict->launcher.abi, 5);
    ASSERT_EQ(verdict->rungs.size(), 2u);
    EXPECT_EQ(verdict->rungs[0].state, rung_state::usable);
    EXPECT_EQ(verdict->rungs[0].landlock_abi, std::optional<int>(5));
    EXPECT_TRUE(verdict->rungs[0].bind_fd);
    EXPECT_EQ(verdict->rungs[0].runner, "/usr/bin/bwrap") << "runners come from the ladder";
    EXPECT_EQ(verdict->rungs[1].state, rung_state::not_probed);
    EXPECT_FALSE(verdict->rungs[1].landlock_abi.has_value());
    EXPECT_EQ(verdict->first_usable(), std::optional<std::size_t>(0));
    EXPECT_EQ(verdict->to_text(), earlier_text);
}

TEST(CachedVerdict, ReasonsKeepTheirSpacesAndLoseTheirNewlines) {
    cached_verdict verdict;
    verdict.probed_at = 99s;
    verdict.launcher = {true, -38, "Landlock is not\nsupported"};
    verdict.rungs = linux_ladder();
    verdict.rungs[0].state = rung_state::unusable;
    verdict.rungs[0].reason = "bwrap: setting up uid map: Permission denied";
    verdict.rungs[1].state = rung_state::unusable;
    verdict.rungs[1].reason = "two  spaces\r\n";
    const auto back = cached_verdict::parse(verdict.to_text(), linux_ladder());
    ASSERT_TRUE(back.has_value()) << verdict.to_text();
    EXPECT_EQ(back->launcher.reason, "Landlock is not supported");
    EXPECT_EQ(back->launcher.abi, -38);
    EXPECT_EQ(back->rungs[0].reason, "bwrap: setting up uid map: Permission denied");
    EXPECT_EQ(back->rungs[1].reason, "two  spaces  ");
    EXPECT_FALSE(back->first_usable().has_value());
}

TEST(CachedVerdict, ATextThatIsNotAVerdictOfThisLadderIsNone) {
    for (const char* bad : {
             "",
             "probed 1\nlauncher 1 5 \nrung bwrap 1 5 1 \n",                        // a rung short
             "probed 1\nlauncher 1 5 \nrung landlock 1 5 0 \nrung bwrap 1 5 1 \n",  // order
             "probed x\nlauncher 1 5 \nrung bwrap 1 5 1 \nrung landlock 1 5 0 \n",
             "probed -1\nlauncher 1 5 \nrung bwrap 1 5 1 \nrung landlock 1 5 0 \n",
             "probed 1\nlauncher 2 5 \nrung bwrap 1 5 1 \nrung landlock 1 5 0 \n",
             "probed 1\nlauncher 1 5 \nrung bwrap 3 5 1 \nrung landlock 1 5 0 \n",
             "probed 1\nlauncher 1 5 \nrung bwrap 1 +5 1 \nrung landlock 1 5 0 \n",
             "probed 1\nprobed 1\nlauncher 1 5 \nrung bwrap 1 5 1 \nrung landlock 1 5 0 \n",
             "probed  1\nlauncher 1 5 \nrung bwrap 1 5 1 \nrung landlock 1 5 0 \n",
             "probed 1\nlauncher 1 5 \nrung bwrap 1 5 1 \nrung landlock 1 5 0 \nextra\n",
         }) {
        SCOPED_TRACE(bad);
        EXPECT_FALSE(cached_verdict::parse(bad, linux_ladder()).has_value());
    }
}

TEST(CachedVerdict, ADegradedVerdictIsCurrentForAMinuteOnly) {
    auto verdict = cached_verdict::parse(earlier_text, linux_ladder());
    ASSERT_TRUE(verdict.has_value());
    EXPECT_TRUE(verdict->current(1234s + 24h)) << "its first rung is usable";
    EXPECT_FALSE(verdict->current(1233s)) << "probed after now: another boot's";
    verdict->rungs[0].state = rung_state::unusable;
    verdict->rungs[1].state = rung_state::usable;
    EXPECT_TRUE(verdict->current(1234s + 60s));
    EXPECT_FALSE(verdict->current(1234s + 61s));
    EXPECT_EQ(verdict_difference(linux_ladder(), verdict->rungs), "");
    EXPECT_EQ(verdict_difference(cached_verdict::parse(earlier_text, linux_ladder())->rungs,
                                 verdict->rungs),
              "bwrap was usable, is unusable");
}

// What a process of this user can put at a verdict's name (the directory is out of a confined
// command's reach): a FIFO is no verdict and is not waited on for a writer, nor is a file too
// large to be one read.
TEST(VerdictCacheFile, AFifoOrAHugeFileAtTheNameIsNoVerdictAndNoWait) {
    test::temp_dir dir;
    const auto directory = dir / "verdicts";
    auto opened = verdict_cache::open(directory);
    ASSERT_TRUE(std::holds_alternative<verdict_cache>(opened)) << std::get<std::string>(opened);
    const verdict_cache& cache = std::get<verdict_cache>(opened);
    ASSERT_EQ(::mkfifo((directory / "verdict-fifo").c_str(), 0600), 0);
    { std::ofstream huge(directory / "verdict-huge"); }
    std::filesystem::resize_file(directory / "verdict-huge", std::uintmax_t{1} << 40);
    ::chmod((directory / "verdict-huge").c_str(), 0600);
    for (const std::string name : {"verdict-fifo", "verdict-huge"}) {
        const auto status = test::exit_within(
            [&] {
                std::string stale;
                const auto loaded = cache.load(name, "key\n", &stale);
                return !loaded && !stale.empty() ? 0 : 3;
            },
            std::chrono::seconds(30));
        ASSERT_TRUE(status.has_value()) << name << ": load() waited";
        EXPECT_EQ(*status, 0) << name;
    }
}

}  // namespace
}  // namespace cordon::sandbox
