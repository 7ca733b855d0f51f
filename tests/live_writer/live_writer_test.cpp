// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cli::live_writer on real pipes: everything queued arrives in order, a full queue drops and
// counts instead of growing, the run is paced by the reader (when_room holds `more` while the
// writer is behind), a reader that goes away is reported once, a reader that stopped cannot hold
// finish() past its patience, and a writer left blocked never touches the destroyed object (the
// state it uses is its own).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "cli/live_writer.hpp"
#include "support.hpp"

namespace cordon::cli {
namespace {

using namespace std::chrono_literals;

struct pipe_ends {
    int read = -1;
    int write = -1;
    pipe_ends() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) == 0) {
            read = fds[0];
            write = fds[1];
        }
    }
    ~pipe_ends() {
        if (read >= 0) ::close(read);
        if (write >= 0) ::close(write);
    }
    pipe_ends(const pipe_ends&) = delete;
    pipe_ends& operator=(const pipe_ends&) = delete;
};

TEST(LiveWriter, WritesEverythingInOrderAndKnowsWhereTheLineEnds) {
    pipe_ends pipe;
    ASSERT_GE(pipe.read, 0);
    std::string expected;
    {
        live_writer writer(pipe.write);
        for (int i = 0; i < 1000; ++i) {
            const std::string chunk = "chunk " + std::to_string(i) + "\n";
            writer.push(chunk);
            expected += chunk;
        }
        writer.push("tail without newline");
        expected += "tail without newline";
        // The pipe holds 64 KiB; the writer blocks until this drains it.
        std::string got;
        std::thread drain([&] {
            char buffer[4096];
            ssize_t n;
            while (got.size() < expected.size() &&
                   (n = ::read(pipe.read, buffer, sizeof buffer)) > 0) {
                got.append(buffer, static_cast<std::size_t>(n));
            }
        });
        EXPECT_EQ(writer.finish(), 0U);
        drain.join();
        EXPECT_EQ(got, expected);
        EXPECT_FALSE(writer.at_line_start());
    }
    {
        live_writer writer(pipe.write);
        writer.push("a line\n");
        EXPECT_EQ(writer.finish(), 0U);
        EXPECT_TRUE(writer.at_line_start());
    }
    {
        live_writer writer(pipe.write);
        EXPECT_EQ(writer.finish(), 0U);
        EXPECT_TRUE(writer.at_line_start()) << "nothing shown counts as the start of a line";
    }
}

// Reads from `fd` (made non-blocking) until `want` bytes came or 10 s passed.
std::size_t drain(int fd, std::size_t want) {
    const int flags = ::fcntl(fd, F_GETFL);
    (void)::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    std::size_t got = 0;
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (got < want && std::chrono::steady_clock::now() < until) {
        char buffer[65536];
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) {
            got += static_cast<std::size_t>(n);
        } else {
            std::this_thread::sleep_for(5ms);
        }
    }
    // Nothing more may come: what was counted as not shown is never written later.
    std::this_thread::sleep_for(100ms);
    char extra[65536];
    const ssize_t more = ::read(fd, extra, sizeof extra);
    if (more > 0) got += static_cast<std::size_t>(more);
    return got;
}

std::size_t own_threads() {
    std::size_t count = 0;
    for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task"))
        ++count;
    return count;
}

// Most commands print nothing: their writers cost no thread. The first chunk starts one.
TEST(LiveWriter, ANeverUsedWriterStartsNoThread) {
    pipe_ends pipe;
    ASSERT_GE(pipe.read, 0);
    // A runtime may start a helper of its own with the first thread a program creates (TSan
    // does): one thread, come and gone, before counting leaves only the writer's to count.
    std::thread([] {}).join();
    const std::size_t before = own_threads();
    {
        live_writer idle(pipe.write);
        EXPECT_EQ(own_threads(), before);
        EXPECT_EQ(idle.finish(), 0u);
        EXPECT_TRUE(idle.at_line_start()) << "nothing shown counts as ending a line";
    }
    live_writer used(pipe.write);
    used.push("one line\n");
    EXPECT_EQ(own_threads(), before + 1);
    EXPECT_EQ(used.finish(), 0u);
    EXPECT_TRUE(used.at_line_start());
    char buffer[64];
    EXPECT_EQ(::read(pipe.read, buffer, sizeof buffer), 9);
}

TEST(LiveWriter, AFullQueueDropsAndCountsInsteadOfGrowing) {
    pipe_ends pipe;
    ASSERT_GE(pipe.read, 0);
    // Nobody reads: the pipe fills (64 KiB), then the 1 KiB queue, then chunks are dropped.
    live_writer writer(pipe.write, {}, 1024, 1024);
    std::size_t pushed = 0;
    for (int i = 0; i < 200; ++i) {
        writer.push(std::string(1000, 'x'));
        pushed += 1000;
    }
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t not_shown = writer.finish(200ms);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_GT(not_shown, 0U);
    EXPECT_FALSE(writer.at_line_start()) << "a blocked writer's position is unknown";
    EXPECT_EQ(drain(pipe.read, pushed - not_shown), pushed - not_shown)
        << "every byte is shown or counted, never both";
}

// A reader that goes away (EPIPE) is shown nothing more: what the writer then holds is counted
// as not shown, whether or not the queue ever overflowed, and the process lives on.
// It is reported once, on the writer thread, and a run waiting for room is let go: the command
// is ended by the caller, not left waiting on a reader that will never read.
TEST(LiveWriter, WhatAReaderThatWentAwayNeverGotIsCountedAsNotShown) {
    pipe_ends pipe;
    ASSERT_GE(pipe.read, 0);
    ::close(pipe.read);
    pipe.read = -1;
    std::atomic<int> gone{0};
    live_writer writer(
        pipe.write, [&gone] { ++gone; }, 1000, 1 << 20);
    for (int i = 0; i < 10; ++i)
        writer.push(std::string(1000, 'z'));
    std::atomic<bool> more{false};
    writer.when_room([&more] { more = true; });
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!more && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(1ms);
    EXPECT_TRUE(more) << "a run waiting on a reader that went away is let go";
    writer.push(std::string(500, 'z'));
    EXPECT_EQ(writer.finish(), 10500U);
    EXPECT_EQ(gone, 1) << "reported once";
    EXPECT_TRUE(writer.reader_left());
    EXPECT_EQ(writer.failure(), EPIPE);
}

// A destination that fails otherwise (a closed stream, a full disk) is no reader that went away:
// nothing is reported, the run is not ended for it, and why is kept for the note that counts what
// was not shown.
TEST(LiveWriter, ADestinationThatFailsSaysWhyAndEndsNothing) {
    struct failing {
        int fd;
        int error;
    };
    pipe_ends closed;
    ASSERT_GE(closed.read, 0);
    const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(full, 0);
    // Writing to a pipe's read end fails as a closed stream would: EBADF.
    for (const failing& each : {failing{closed.read, EBADF}, failing{full, ENOSPC}}) {
        std::atomic<int> gone{0};
        live_writer writer(
            each.fd, [&gone] { ++gone; }, 1000, 1 << 20);
        writer.push("lost\n");
        EXPECT_EQ(writer.finish(), 5U);
        EXPECT_EQ(writer.failure(), each.error);
        EXPECT_FALSE(writer.reader_left());
        EXPECT_EQ(gone, 0);
    }
    ::close(full);
}

// The pace: `more` comes at once while fewer than pace_bound bytes wait, and otherwise only once
// the reader has taken enough; nothing is dropped however far the producer runs ahead, since it
// asks before each chunk.
TEST(LiveWriter, PacesTheProducerByTheReaderAndDropsNothing) {
    pipe_ends pipe;
    ASSERT_GE(pipe.read, 0);
    constexpr std::size_t chunk = 64 * 1024;
    constexpr int chunks = 64;  // 4 MiB: far beyond the pipe, the bound and max_queued
    std::atomic<int> gone{0};
    live_writer writer(
        pipe.write, [&gone] { ++gone; }, 256 * 1024, 512 * 1024);
    std::mutex mutex;
    std::condition_variable wake;
    bool ready = true;
    std::size_t waited = 0;
    std::thread producer([&] {
        for (int i = 0; i < chunks; ++i) {
            std::unique_lock lock(mutex);
            wake.wait(lock, [&] { return ready; });
            ready = false;
            lock.unlock();
            writer.push(std::string(chunk, static_cast<char>('a' + i % 26)));
            writer.when_room([&] {
                std::lock_guard inner(mutex);
                ready = true;
                wake.notify_all();
            });
            std::lock_guard again(mutex);
            if (!ready) ++waited;
        }
    });
    // A slow reader: it starts late and takes small bites.
    std::this_thread::sleep_for(100ms);
    std::string got;
    char buffer[4096];
    while (got.size() < chunk * chunks) {
        const ssize_t n = ::read(pipe.read, buffer, sizeof buffer);
        if (n <= 0) break;
        got.append(buffer, static_cast<std::size_t>(n));
    }
    producer.join();
    EXPECT_EQ(writer.finish(), 0U) << "nothing dropped";
    ASSERT_EQ(got.size(), chunk * chunks);
    for (int i = 0; i < chunks; ++i) {
        ASSERT_EQ(got[static_cast<std::size_t>(i) * chunk], static_cast<char>('a' + i % 26));
    }
    EXPECT_GT(waited, 0U) << "the producer was held back by the reader";
    EXPECT_EQ(gone, 0);
    EXPECT_FALSE(writer.reader_left());
}

// The writer is blocked in write(2) when finish() gives up and the object is destroyed; the
// reader then resumes and the writer thread finishes its chunk with its own state. Under ASan
// this is where a use-after-free would show.
TEST(LiveWriter, AWriterLeftBlockedOutlivesItsObjectSafely) {
    pipe_ends pipe;
    ASSERT_GE(pipe.read, 0);
    const std::size_t pushed = 100U * 4096;
    std::uint64_t not_shown = 0;
    {
        live_writer writer(pipe.write, {}, 1 << 20, 1 << 20);
        for (int i = 0; i < 100; ++i)
            writer.push(std::string(4096, 'y'));
        not_shown = writer.finish(100ms);
    }
    EXPECT_GT(not_shown, 0U);
    EXPECT_EQ(drain(pipe.read, pushed - not_shown), pushed - not_shown);
}

}  // namespace
}  // namespace cordon::cli
