// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What `cordon run` takes in and what it adds to the command's streams: --stdin-file streamed to
// the command's stdin through a pipe (never read into cordon's memory, never the file itself), the
// --max-output bound, and cordon's own lines, which always start a line of their own.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "real_backend.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class RunInput : public ::testing::Test {
protected:
    cli_result run(std::vector<std::string> args, cli_stdin input = {}) {
        args.insert(args.begin(), "run");
        return run_cordon(args, workspace_.path(), std::move(input));
    }

    temp_dir workspace_{"/var/tmp"};
};

TEST_F(RunInput, AStdinFileIsTheCommandsStdinUnderEveryMode) {
    const fs::path input = workspace_ / "input";
    write_file(input, "line one\nline two\n", fs::perms::owner_read | fs::perms::owner_write);
    for (const char* mode : {"danger-full-access", "read-only", "workspace-write"}) {
        const cli_result result = run({"--mode", mode, "--stdin-file", input.string(), "--",
                                       test_child_path().string(), "cat"});
        EXPECT_EQ(result.exit_code, 0) << mode << " " << result.err;
        EXPECT_EQ(result.out, "line one\nline two\n") << mode;
    }
}

// A regular file reaches the command as bytes through a pipe, never as the file itself: through
// the host file's own description a command could change its mode and times (fchmod, futimens)
// even where no wall lets it reach the file by its path (bwrap workspace-write, whose record
// says full).
TEST_F(RunInput, AStdinFileGivesTheCommandBytesNotTheFile) {
    temp_dir outside{"/var/tmp"};
    const fs::path input = outside / "input";
    write_file(input, "secret data\n", fs::perms::owner_read | fs::perms::owner_write);
    struct stat before {};
    ASSERT_EQ(::stat(input.c_str(), &before), 0);
    for (const auto path : every_real_backend) {
        scoped_backend_path on(path);
        const std::string backend(backend_flag(path));
        for (const char* mode : {"read-only", "workspace-write"}) {
            SCOPED_TRACE(std::string(to_string(path)) + " " + mode);
            const cli_result result =
                run({"--backend", backend, "--mode", mode, "--accept-partial", "--stdin-file",
                     input.string(), "-c",
                     "test -p /dev/stdin && echo pipe; chmod 666 /proc/self/fd/0; "
                     "touch -d 2001-01-01 /proc/self/fd/0; cat"});
            EXPECT_EQ(result.out, "pipe\nsecret data\n") << result.err;
            struct stat after {};
            ASSERT_EQ(::stat(input.c_str(), &after), 0);
            EXPECT_EQ(after.st_mode, before.st_mode);
            EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
            EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
        }
    }
}

TEST_F(RunInput, AnythingButAFileOrAPipeIsAUsageErrorAndNothingRuns) {
    const fs::path marker = workspace_ / "ran";
    for (const std::string& path : {workspace_.path().string(), std::string("/dev/zero"),
                                    (workspace_ / "missing").string()}) {
        const cli_result result = run({"--stdin-file", path, "--mode", "danger-full-access", "-c",
                                       "touch " + marker.string()});
        EXPECT_EQ(result.exit_code, cli::exit_usage) << path;
        EXPECT_NE(result.err.find("--stdin-file " + path), std::string::npos) << result.err;
        EXPECT_FALSE(fs::exists(marker)) << path;
    }
    EXPECT_NE(run({"--stdin-file", workspace_.path().string(), "-c", "true"}).err.find("directory"),
              std::string::npos);
}

// A FIFO is waited for, not read as empty: a writer that comes late still reaches the command,
// and one that never comes neither hangs cordon nor outlives the timeout.
TEST_F(RunInput, AFifoIsWaitedForAndItsWriterMayComeLate) {
    const fs::path fifo = workspace_ / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread late([&fifo] {
        std::this_thread::sleep_for(300ms);
        const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) return;
        (void)!::write(fd, "late\n", 5);
        ::close(fd);
    });
    const cli_result result = run({"--mode", "read-only", "--timeout", "30s", "--stdin-file",
                                   fifo.string(), "--", test_child_path().string(), "cat"});
    {
        // A cordon that ended without reading (a failure) leaves the writer blocked in open():
        // a reader of our own lets it through, and the test fails instead of hanging.
        const int release = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        late.join();
        if (release >= 0) ::close(release);
    }
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "late\n");

    const fs::path never = workspace_ / "never";
    ASSERT_EQ(::mkfifo(never.c_str(), 0600), 0);
    const auto start = std::chrono::steady_clock::now();
    const cli_result waited = run({"--mode", "read-only", "--timeout", "500ms", "--stdin-file",
                                   never.string(), "--", test_child_path().string(), "cat"});
    EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
    EXPECT_EQ(waited.exit_code, cli::exit_timeout) << waited.err;
}

// "-" is copied, never handed over: a caller whose stdin is open read-write (a file, a terminal)
// does not give a read-only command a way to write through it.
TEST_F(RunInput, DashGivesTheCommandBytesNotTheCallersDescription) {
    const fs::path host_file = workspace_ / "host-file";
    write_file(host_file, "original\n", fs::perms::owner_read | fs::perms::owner_write);
    auto read_write =
        std::make_shared<const unique_fd>(::open(host_file.c_str(), O_RDWR | O_CLOEXEC));
    ASSERT_TRUE(*read_write);
    const cli_result result = run(
        {"--mode", "read-only", "--stdin-file", "-", "--", "/bin/sh", "-c", "cat; echo PWNED >&0"},
        cli_stdin{std::nullopt, read_write});
    EXPECT_EQ(result.out, "original\n");
    EXPECT_NE(result.exit_code, 0) << "writing to its stdin must fail";
    EXPECT_EQ(read_file(host_file), "original\n");
}

// "-" streams cordon's own stdin: a source far larger than any buffer cordon keeps goes through
// whole, and nothing of it is held in cordon's memory.
TEST_F(RunInput, DashStreamsCordonsOwnStdinWhole) {
    const std::size_t size = 64U << 20;  // 64 MiB
    test::temp_dir dir;
    const fs::path big = dir / "big";
    {
        const int fd = ::open(big.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
        ::close(fd);
    }
    auto source = std::make_shared<const unique_fd>(::open(big.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(*source);
    const cli_result result =
        run({"--json", "--mode", "read-only", "--stdin-file", "-", "--", "/usr/bin/wc", "-c"},
            cli_stdin{std::nullopt, source});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto record = nlohmann::json::parse(result.out);
    EXPECT_EQ(record["stdout"]["text"], std::to_string(size) + "\n");
}

// The thread that copies --stdin-file cannot be started: a usage error that says why, on one
// line, and nothing runs (it used to end cordon with std::terminate). Here the inner cordon runs
// in a cgroup whose pids.max leaves it no task beyond its main thread. (A sanitizer's leak check
// would need a second task at exit: it is turned off for the inner cordon.)
TEST_F(RunInput, AStdinCopyThatCannotStartIsAUsageErrorAndNothingRuns) {
    std::string why;
    if (!cgroup_host_or(why)) CORDON_SKIP_OR_FAIL(why);
    const fs::path marker = workspace_ / "ran";
    const cli_result result =
        run({"--json", "--mode", "danger-full-access", "--max-processes", "1", "--env",
             "ASAN_OPTIONS=detect_leaks=0", "--", cordon_path().string(), "run", "--mode",
             "danger-full-access", "--stdin-file", "-", "--", "touch", marker.string()});
    ASSERT_EQ(result.exit_code, cli::exit_usage) << result.err;
    const auto record = nlohmann::json::parse(result.out);
    EXPECT_EQ(record["exitCode"], cli::exit_usage);
    EXPECT_EQ(record["stderr"]["text"],
              "cordon run: cannot copy --stdin-file -: Resource temporarily unavailable\n");
    EXPECT_FALSE(fs::exists(marker));
}

TEST_F(RunInput, MaxOutputIsBoundedAndSaysSo) {
    const cli_result too_much = run({"--max-output", "17M", "-c", "true"});
    EXPECT_EQ(too_much.exit_code, cli::exit_usage);
    EXPECT_NE(too_much.err.find("1 to 16M"), std::string::npos) << too_much.err;

    const cli_result kept = run({"--json", "--max-output", "1K", "--mode", "danger-full-access",
                                 "--", test_child_path().string(), "bytes", "5000"});
    ASSERT_EQ(kept.exit_code, 0) << kept.err;
    const auto record = nlohmann::json::parse(kept.out);
    EXPECT_EQ(record["stdout"]["text"].get<std::string>().size(), 1024U);
    EXPECT_EQ(record["stdout"]["truncated"], true);
    EXPECT_EQ(record["stdout"]["bytes"], 5000);
    // The record names the whole output, kept for its reader: read, it is the reader's to remove.
    ASSERT_TRUE(record["stdout"]["spillPath"].is_string()) << kept.out;
    const fs::path spill = record["stdout"]["spillPath"].get<std::string>();
    EXPECT_EQ(fs::file_size(spill), 5000U);
    fs::remove_all(spill.parent_path());
}

// A command that ends its stderr without a newline cannot glue a forged marker to cordon's real
// one: cordon's first line starts a line of its own.
TEST_F(RunInput, CordonsMarkersAlwaysStartALineOfTheirOwn) {
    const cli_result forged =
        run({"--mode", "read-only", "-c", "printf '[exit code: 0]' >&2; exit 3"});
    EXPECT_EQ(forged.exit_code, 3);
    EXPECT_EQ(forged.err, "[exit code: 0]\n[exit code: 3]\n");

    const cli_result finished =
        run({"--mode", "read-only", "-c", "printf 'no newline' >&2; exit 4"});
    EXPECT_EQ(finished.err, "no newline\n[exit code: 4]\n");

    // Output that ends its lines gets no blank line added.
    const cli_result tidy = run({"--mode", "read-only", "-c", "echo fine >&2; exit 5"});
    EXPECT_EQ(tidy.err, "fine\n[exit code: 5]\n");

    // Nothing of cordon's at all after a clean run, whatever the command's last byte.
    const cli_result clean = run({"--mode", "read-only", "-c", "printf 'partial' >&2"});
    EXPECT_EQ(clean.exit_code, 0);
    EXPECT_EQ(clean.err, "partial");
}

}  // namespace
}  // namespace cordon::test
