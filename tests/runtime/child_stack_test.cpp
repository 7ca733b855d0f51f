// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The vfork child's stack (runtime/child_stack.hpp): its own mapping with a PROT_NONE guard page
// below it, read back from the kernel's view (/proc/self/maps); a write into the guard faults; a
// vfork spawn runs on it and still works.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <variant>

#include "runtime/child_stack.hpp"
#include "runtime/spawn.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using detail::child_stack;

// The permissions ("rw-p", "---p") of the mapping that holds `address`, from /proc/self/maps.
std::optional<std::string> permissions_at(const void* address) {
    const auto where = reinterpret_cast<std::uintptr_t>(address);
    std::istringstream maps(test::read_file("/proc/self/maps"));
    std::string line;
    while (std::getline(maps, line)) {
        std::istringstream fields(line);
        std::string range;
        std::string perms;
        fields >> range >> perms;
        const auto dash = range.find('-');
        if (dash == std::string::npos) continue;
        const auto begin = std::stoull(range.substr(0, dash), nullptr, 16);
        const auto end = std::stoull(range.substr(dash + 1), nullptr, 16);
        if (where >= begin && where < end) return perms;
    }
    return std::nullopt;
}

TEST(ChildStack, HasAGuardPageBelowItsWritablePages) {
    child_stack* stack = child_stack::for_this_thread();
    ASSERT_NE(stack, nullptr) << std::strerror(errno);
    ASSERT_GT(stack->guard_size(), 0U);
    const char* guard = static_cast<const char*>(stack->guard());
    const char* top = static_cast<const char*>(stack->top());
    ASSERT_GE(static_cast<std::size_t>(top - guard),
              stack->guard_size() + child_stack::usable_size);

    // Every byte of the guard is inaccessible, every byte above it up to the top is writable.
    EXPECT_EQ(permissions_at(guard), std::optional<std::string>("---p"));
    EXPECT_EQ(permissions_at(guard + stack->guard_size() - 1), std::optional<std::string>("---p"));
    EXPECT_EQ(permissions_at(guard + stack->guard_size()), std::optional<std::string>("rw-p"));
    EXPECT_EQ(permissions_at(top - 1), std::optional<std::string>("rw-p"));
}

TEST(ChildStack, IsOnePerThreadAndKeptAcrossCalls) {
    child_stack* first = child_stack::for_this_thread();
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(child_stack::for_this_thread(), first);
    const void* other_guard = nullptr;
    std::thread([&] {
        if (child_stack* other = child_stack::for_this_thread()) other_guard = other->guard();
    }).join();
    ASSERT_NE(other_guard, nullptr);
    EXPECT_NE(other_guard, first->guard());
    // The other thread's stack went with the thread: its guard is no longer there.
    EXPECT_NE(permissions_at(other_guard), std::optional<std::string>("---p"));
}

TEST(ChildStack, AWriteIntoTheGuardFaults) {
    child_stack* stack = child_stack::for_this_thread();
    ASSERT_NE(stack, nullptr);
    volatile char* guard_top =
        static_cast<char*>(stack->guard()) + stack->guard_size() - 1;  // just below the stack
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << std::strerror(errno);
    if (pid == 0) {
        // The kernel's verdict, not a sanitizer's handler; and no core file.
        ::signal(SIGSEGV, SIG_DFL);
        const rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        *guard_top = 1;
        ::_exit(0);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ASSERT_TRUE(WIFSIGNALED(status)) << "the write into the guard page went through";
    EXPECT_EQ(WTERMSIG(status), SIGSEGV);
}

// A vfork spawn from a fresh thread maps that thread's stack and runs the child on it.
TEST(ChildStack, AVforkSpawnRunsOnTheGuardedStack) {
    if (test::vfork_unusable()) GTEST_SKIP() << "spawn_method::vfork is not used here";
    int exit_status = -1;
    std::optional<std::string> guard_perms;
    const unique_fd dev_null{::open("/dev/null", O_RDWR | O_CLOEXEC)};
    ASSERT_TRUE(dev_null) << std::strerror(errno);
    std::thread([&] {
        spawn_request request;
        request.argv = {test::test_child_path().string(), "exit", "7"};
        request.env = test::child_env();
        request.cwd = "/";
        request.method = spawn_method::vfork;
        request.fds = {{dev_null.get(), 0}, {dev_null.get(), 1}, {dev_null.get(), 2}};
        spawn_result result = spawn(request);
        if (auto* child = std::get_if<spawned_child>(&result)) {
            int status = 0;
            while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
            }
            if (WIFEXITED(status)) exit_status = WEXITSTATUS(status);
        }
        if (child_stack* stack = child_stack::for_this_thread()) {
            guard_perms = permissions_at(stack->guard());
        }
    }).join();
    EXPECT_EQ(exit_status, 7);
    EXPECT_EQ(guard_perms, std::optional<std::string>("---p"));
}

}  // namespace
}  // namespace cordon::runtime
