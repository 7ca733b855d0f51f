// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The library's logger (cordon/logging.hpp, base/logging.cpp): a program that embeds the library
// sees none of its lines until it sets a level, then sees them on stderr, or in its sink, and
// never on stdout, and the program's own spdlog lines stay its own. The program is real
// (tests/helper/log_host.cpp), started fresh for each case:
// the level a process starts with is what is tested. The sink's thread safety is tested here, in
// this process, with lines logged as the library's units log them.
#include <spdlog/spdlog.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/log.hpp"
#include "cordon/logging.hpp"
#include "support.hpp"
#include "support/spawned_process.hpp"

namespace cordon::base {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view info_line = "removed 1 private /tmp left by cordons that are gone";

struct host_result {
    int status = -1;
    std::string out;
    std::string err;
};

// Runs the log host over a directory holding the private /tmp of a cordon that is gone, which it
// sweeps: the library logs that at info.
host_result run_log_host(const std::vector<std::string>& args) {
    test::temp_dir dir;
    fs::create_directory(dir / "cordon-tmp-gone");
    std::vector<std::string> argv = {(test::bin_dir() / "cordon-test-log-host").string(),
                                     dir.path().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    test::spawned_process host(argv, {});
    host_result result;
    result.status = host.wait();
    result.out = host.out();
    result.err = host.err();
    // The program's own spdlog lines, whatever the library's level and sink: the library never
    // takes spdlog's default logger.
    const std::string before = "host info: its own line, before cordon\n";
    const std::string after = "host info: its own line, after cordon\n";
    EXPECT_TRUE(result.out.starts_with(before)) << result.out;
    if (const auto at = result.out.find(after); at != std::string::npos) {
        result.out.erase(at, after.size());
    } else {
        ADD_FAILURE() << "the program's own line after cordon is gone: " << result.out;
    }
    if (result.out.starts_with(before)) result.out.erase(0, before.size());
    EXPECT_FALSE(fs::exists(dir / "cordon-tmp-gone")) << "the host swept nothing: nothing logged";
    return result;
}

TEST(LibraryLog, AProgramThatSetsNoLevelSeesNoLine) {
    const host_result host = run_log_host({});
    EXPECT_EQ(host.status, 0) << host.err;
    EXPECT_EQ(host.out, "swept 1\n");
    EXPECT_EQ(host.err, "");
}

TEST(LibraryLog, TheLinesTheLevelLetsThroughGoToStderrOnly) {
    const std::string info = "cordon: [info] " + std::string(info_line) + "\n";
    const std::string debug = "cordon: [debug] log host: a debug line\n";
    const std::string warning = "cordon: [warning] log host: a warning\n";
    const std::map<std::string, std::string> expected = {
        {"trace", info + debug + warning},
        {"debug", info + debug + warning},
        {"info", info + warning},
        {"warn", warning},
        {"error", ""},
        {"off", ""},
    };
    for (const auto& [level, err] : expected) {
        SCOPED_TRACE(level);
        const host_result host = run_log_host({level});
        EXPECT_EQ(host.status, 0) << host.err;
        EXPECT_EQ(host.out, "swept 1\n");
        EXPECT_EQ(host.err, err);
    }
}

// The sink gets the lines instead of stderr, without the prefix; the host prints them on its own
// stdout, which is its choice.
TEST(LibraryLog, ASinkReceivesTheLinesInsteadOfStderr) {
    const host_result host = run_log_host({"info", "sink"});
    EXPECT_EQ(host.status, 0) << host.err;
    EXPECT_EQ(host.out, "sink info: " + std::string(info_line) +
                            "\nsink warn: log host: a warning\nswept 1\n");
    EXPECT_EQ(host.err, "");
}

TEST(LibraryLog, LevelsAreNamedAsTheyAreSpelled) {
    EXPECT_EQ(to_string(log_level::trace), "trace");
    EXPECT_EQ(to_string(log_level::debug), "debug");
    EXPECT_EQ(to_string(log_level::info), "info");
    EXPECT_EQ(to_string(log_level::warn), "warn");
    EXPECT_EQ(to_string(log_level::error), "error");
    EXPECT_EQ(to_string(log_level::off), "off");
}

// In this process: each line reaches exactly one sink while another thread swaps them, a sink is
// never called again once set_log_sink() has replaced it, and the level still decides.
class LibraryLogInProcess : public ::testing::Test {
protected:
    void TearDown() override {
        set_log_sink({});
        set_log_level(log_level::off);
    }
};

TEST_F(LibraryLogInProcess, EachLineReachesOneSinkWhileTheSinksAreSwapped) {
    constexpr int threads = 4;
    constexpr int lines_each = 2000;
    std::atomic<int> first{0};
    std::atomic<int> second{0};
    std::atomic<int> hidden{0};
    const auto counting = [&hidden](std::atomic<int>& count) {
        return [&count, &hidden](log_level level, std::string_view line) {
            if (level == log_level::info && line == "tick") {
                ++count;
            } else {
                ++hidden;
            }
        };
    };
    set_log_level(log_level::info);
    set_log_sink(counting(first));
    std::atomic<int> started{0};
    std::vector<std::thread> loggers;
    for (int t = 0; t < threads; ++t) {
        loggers.emplace_back([&started] {
            ++started;
            for (int i = 0; i < lines_each; ++i) {
                log::info("tick");
                log::debug("below the level");
            }
        });
    }
    // The swap comes while the threads log (at least one has started; they may all have ended on
    // a slow machine, which the counts below still hold for).
    while (started.load() == 0)
        std::this_thread::yield();
    set_log_sink(counting(second));
    const int first_when_replaced = first.load();
    for (std::thread& logger : loggers)
        logger.join();
    EXPECT_EQ(first.load(), first_when_replaced) << "the replaced sink was called again";
    EXPECT_EQ(first.load() + second.load(), threads * lines_each);
    EXPECT_EQ(hidden.load(), 0) << "a line below the level, or one altered, reached a sink";
}

TEST_F(LibraryLogInProcess, ALevelAndItsLinesArriveAsLogged) {
    std::mutex mutex;
    std::vector<std::pair<log_level, std::string>> got;
    set_log_sink([&](log_level level, std::string_view line) {
        std::lock_guard lock(mutex);
        got.emplace_back(level, std::string(line));
    });
    log::warn("not yet: the level is off");
    set_log_level(log_level::debug);
    log::trace("below debug");
    log::debug("a {} line", "debug");
    log::error("an error: {}", 42);
    set_log_level(log_level::off);
    log::error("off again");
    const std::vector<std::pair<log_level, std::string>> expected = {
        {log_level::debug, "a debug line"},
        {log_level::error, "an error: 42"},
    };
    EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace cordon::base
