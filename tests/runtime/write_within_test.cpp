// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// runtime::write_within on a real pipe: a full pipe whose reader drains it later takes the whole
// buffer, blocking or not; a full pipe past the deadline times out; room is used even past the
// deadline; a reader that is gone is EPIPE, without SIGPIPE (which would end this test).
#include "runtime/write_within.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "cordon/unique_fd.hpp"

namespace cordon::runtime {
namespace {

using std::chrono::steady_clock;

struct test_pipe {
    unique_fd read;
    unique_fd write;
};

test_pipe make_pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category());
    return {unique_fd(fds[0]), unique_fd(fds[1])};
}

void set_blocking(int fd, bool blocking) {
    const int flags = ::fcntl(fd, F_GETFL);
    ASSERT_GE(flags, 0);
    ASSERT_EQ(::fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK), 0);
}

// Fills the pipe until it takes no more; returns how much it holds. Leaves `fd` as it found it.
std::size_t fill(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    const std::string block(4096, 'f');
    std::size_t held = 0;
    for (;;) {
        const ssize_t n = ::write(fd, block.data(), block.size());
        if (n > 0) {
            held += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    ::fcntl(fd, F_SETFL, flags);
    return held;
}

// Reads `bytes` from `fd`, or until its writer is gone.
std::string read_exactly(int fd, std::size_t bytes) {
    std::string out;
    char buffer[65536];
    while (out.size() < bytes) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
}

class WriteWithin : public ::testing::TestWithParam<bool> {};

TEST_P(WriteWithin, AFullPipeWhoseReaderDrainsItTakesTheWholeBuffer) {
    test_pipe pipe = make_pipe();
    set_blocking(pipe.write.get(), GetParam());
    const std::size_t held = fill(pipe.write.get());
    ASSERT_GT(held, 0U);
    std::string data(3 * held + 17, 'x');
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<char>('a' + i % 26);
    std::string read;
    std::thread reader([&] { read = read_exactly(pipe.read.get(), held + data.size()); });
    const write_result wrote =
        write_within(pipe.write.get(), data, steady_clock::now() + std::chrono::minutes(1));
    reader.join();
    EXPECT_EQ(wrote.end, write_end::written);
    EXPECT_EQ(wrote.written, data.size());
    EXPECT_EQ(wrote.error, 0);
    ASSERT_EQ(read.size(), held + data.size());
    EXPECT_EQ(read.substr(held), data);  // in order, nothing lost or doubled
}

TEST_P(WriteWithin, AFullPipePastTheDeadlineTimesOut) {
    test_pipe pipe = make_pipe();
    set_blocking(pipe.write.get(), GetParam());
    fill(pipe.write.get());
    for (const auto deadline : {steady_clock::now() - std::chrono::seconds(1),
                                steady_clock::now() + std::chrono::milliseconds(20)}) {
        const write_result wrote = write_within(pipe.write.get(), "more", deadline);
        EXPECT_EQ(wrote.end, write_end::timed_out);
        EXPECT_EQ(wrote.written, 0U);
        EXPECT_EQ(wrote.error, 0);
    }
}

TEST_P(WriteWithin, RoomIsUsedEvenPastTheDeadline) {
    test_pipe pipe = make_pipe();
    set_blocking(pipe.write.get(), GetParam());
    const write_result wrote =
        write_within(pipe.write.get(), "line\n", steady_clock::now() - std::chrono::seconds(1));
    EXPECT_EQ(wrote.end, write_end::written);
    EXPECT_EQ(wrote.written, 5U);
    EXPECT_EQ(read_exactly(pipe.read.get(), 5), "line\n");
}

TEST_P(WriteWithin, AReaderThatIsGoneIsEpipeWithoutSigpipe) {
    test_pipe pipe = make_pipe();
    set_blocking(pipe.write.get(), GetParam());
    pipe.read.reset();
    const write_result wrote = write_within(pipe.write.get(), "nobody reads this",
                                            steady_clock::now() + std::chrono::minutes(1));
    EXPECT_EQ(wrote.end, write_end::failed);
    EXPECT_EQ(wrote.written, 0U);
    EXPECT_EQ(wrote.error, EPIPE);
}

TEST_P(WriteWithin, AReaderGoneWhileThePipeIsFullIsEpipe) {
    test_pipe pipe = make_pipe();
    set_blocking(pipe.write.get(), GetParam());
    fill(pipe.write.get());
    pipe.read.reset();
    const write_result wrote =
        write_within(pipe.write.get(), "more", steady_clock::now() + std::chrono::minutes(1));
    EXPECT_EQ(wrote.end, write_end::failed);
    EXPECT_EQ(wrote.error, EPIPE);
}

INSTANTIATE_TEST_SUITE_P(BlockingOrNot, WriteWithin, ::testing::Bool(), [](const auto& param_info) {
    return param_info.param ? "Blocking" : "NonBlocking";
});

TEST(WriteWithinDescriptor, NoDescriptorFails) {
    const write_result wrote = write_within(-1, "x", steady_clock::now() + std::chrono::minutes(1));
    EXPECT_EQ(wrote.end, write_end::failed);
    EXPECT_EQ(wrote.error, EBADF);
}

TEST(WriteWithinDescriptor, NothingToWriteIsWritten) {
    test_pipe pipe = make_pipe();
    fill(pipe.write.get());
    const write_result wrote =
        write_within(pipe.write.get(), "", steady_clock::now() - std::chrono::seconds(1));
    EXPECT_EQ(wrote.end, write_end::written);
    EXPECT_EQ(wrote.written, 0U);
}

}  // namespace
}  // namespace cordon::runtime
