// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// 8. Kernel quotas counted per uid (docs/sandbox.md, "Kernel quotas counted per uid"): inotify
// instances, fanotify groups, queued signals... are charged to the uid in every user namespace up
// to the host's, so a command that takes them all takes them from every process of its uid on the
// host while it runs: of cordon's uid, unless cordon runs as root and gives the command a uid of
// its own (sandbox/identity.hpp). Each test has the command take as many as it can and hold them,
// and checks from this process (cordon's uid, on the host) that one is still there to take.
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hostile_support.hpp"
#include "run_or_throw.hpp"
#include "runtime/cgroup.hpp"
#include "runtime/unique_fd.hpp"
#include "sandbox/quotas.hpp"

namespace cordon::hostile {
namespace {

std::string value_of(std::string_view name) {
    for (const auto& limit : sandbox::quotas::namespace_limits) {
        if (name == limit.name) return limit.value;
    }
    ADD_FAILURE() << "no limit for " << name;
    return {};
}

class KernelQuotas : public BackendTest {
protected:
    // Runs quota-fill KIND N read-only; `check` runs on the host while the command holds all it
    // could take. Returns the HELD line's values and the MAX line (empty when none).
    held fill_and_check(const std::string& kind, long wanted, const std::function<void()>& check,
                        std::string* max_line = nullptr,
                        const std::function<void(runtime::run_request&)>& adjust = {}) {
        runtime::run_request filling =
            request({child(), "quota-fill", kind, std::to_string(wanted)}, sandbox_mode::read_only);
        if (adjust) adjust(filling);
        held_run command(selection_->provider, std::move(filling), path_options());
        const std::optional<std::string> line = command.wait_for_line_starting("HELD ");
        if (line) check();
        record_ = command.release();
        EXPECT_TRUE(line.has_value()) << describe(record_);
        EXPECT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
        if (max_line != nullptr) {
            std::istringstream in(record_.stdout_output.text);
            std::string each;
            while (std::getline(in, each)) {
                if (each.rfind("MAX ", 0) == 0) *max_line = each.substr(4);
            }
        }
        return line ? parse_held(*line) : held{};
    }

    // Whether what the command takes is counted apart from cordon's uid: under bwrap in the
    // run's user namespace; on the Landlock rung, which has no user namespace of the run's own,
    // when cordon runs as root and the command runs as a uid of its own (sandbox/identity.hpp).
    // Before that uid, the Landlock rung's command was root, and the instances it took were
    // every root process's on the host.
    [[nodiscard]] bool counted_apart() const {
        return kind_ == backend_kind::bwrap || ::geteuid() == 0;
    }

    // The count stopped at the limit the run has: the one cordon writes in bwrap's user namespace
    // (quotas_per_run), or the host's limit for the run's own uid on the Landlock rung (the
    // record then says the quotas are the uid's, and which uid that was).
    void expect_limit_of_its_own(const held& taken, const std::string& max, const char* limit) {
        if (kind_ == backend_kind::bwrap) {
            EXPECT_EQ(max, value_of(limit));
            EXPECT_TRUE(record_.sandbox.quotas_per_run);
        } else {
            EXPECT_EQ(max, read_file(std::string("/proc/sys/user/") + limit).substr(0, max.size()));
            EXPECT_FALSE(record_.sandbox.quotas_per_run);
            ASSERT_TRUE(record_.sandbox.identity.has_value());
            EXPECT_TRUE(record_.sandbox.identity->reserved) << record_.sandbox.identity->reason;
            EXPECT_NE(record_.sandbox.identity->uid, 0U);
        }
        EXPECT_LE(taken.count, std::stol(max));
    }

    runtime::run_record record_;
};

TEST_P(KernelQuotas, InotifyInstancesTheCommandTakesLeaveTheHostItsOwn) {
    if (!counted_apart()) {
        // No user namespace of the run's own and no uid of its own: the instances count against
        // cordon's uid's own limit (the deployment with a uid of cordon's commands' own is the
        // bound, docs/sandbox.md). Take a few only, and check the record says so.
        std::string max;
        const held taken = fill_and_check(
            "inotify", 2, [] {}, &max);
        EXPECT_EQ(taken.count, 2);
        EXPECT_EQ(max, read_file("/proc/sys/user/max_inotify_instances").substr(0, max.size()));
        EXPECT_FALSE(record_.sandbox.quotas_per_run);
        return;
    }
    int host_error = 0;
    std::string max;
    const held taken = fill_and_check(
        "inotify", 200,
        [&host_error] {
            const int fd = ::inotify_init1(IN_CLOEXEC);
            host_error = fd < 0 ? errno : 0;
            if (fd >= 0) ::close(fd);
        },
        &max);
    EXPECT_EQ(host_error, 0) << "the host's inotify_init1 while the run held all it could: "
                             << std::strerror(host_error);
    EXPECT_EQ(taken.refusal, "EMFILE");
    EXPECT_GT(taken.count, 0);
    expect_limit_of_its_own(taken, max, "max_inotify_instances");
}

TEST_P(KernelQuotas, FanotifyGroupsTheCommandTakesLeaveTheHostItsOwn) {
    if (!counted_apart()) {
        // As for inotify: nothing of the run's own to bound them with; the record says so.
        const held taken = fill_and_check("fanotify", 0, [] {});
        EXPECT_EQ(taken.count, 0);
        EXPECT_FALSE(record_.sandbox.quotas_per_run);
        return;
    }
    int host_error = 0;
    std::string max;
    const held taken = fill_and_check(
        "fanotify", 200,
        [&host_error] {
            const int fd =
                ::fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC, O_RDONLY);
            host_error = fd < 0 ? errno : 0;
            if (fd >= 0) ::close(fd);
        },
        &max);
    if (taken.count == 0 && taken.refusal != "EMFILE") {
        // A kernel without unprivileged fanotify (before Linux 5.13): the command cannot take
        // any, and the host's groups are its own.
        EXPECT_EQ(taken.refusal, "EPERM");
        return;
    }
    EXPECT_EQ(host_error, 0) << "the host's fanotify_init while the run held all it could: "
                             << std::strerror(host_error);
    EXPECT_EQ(taken.refusal, "EMFILE");
    expect_limit_of_its_own(taken, max, "max_fanotify_groups");
}

// Queued signals are counted per uid and checked against the receiver's RLIMIT_SIGPENDING,
// which the walls lower on every rung: the run's share of the uid's count is bounded with or
// without a user namespace of its own.
TEST_P(KernelQuotas, SignalsTheCommandQueuesLeaveTheHostItsOwn) {
    int host_error = 0;
    const held taken = fill_and_check("sigqueue", 1'000'000, [&host_error] {
        // A process of this uid queues a few signals to itself, as the command did (a few: the
        // uid's count moves with the host's other processes, by a signal or two).
        const pid_t pid = ::fork();
        if (pid == 0) {
            sigset_t rt;
            sigemptyset(&rt);
            sigaddset(&rt, SIGRTMIN);
            ::sigprocmask(SIG_BLOCK, &rt, nullptr);
            for (int i = 0; i < 16; ++i) {
                if (::sigqueue(::getpid(), SIGRTMIN, sigval{}) != 0) ::_exit(errno);
            }
            ::_exit(0);
        }
        int status = 0;
        while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        host_error = pid < 0 ? errno : WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    });
    EXPECT_EQ(host_error, 0) << "the host's sigqueue while the run held all it could: "
                             << std::strerror(host_error);
    EXPECT_EQ(taken.refusal, "EAGAIN");
    // Under bwrap the run's user namespace counts its own signals from zero. Without one (the
    // Landlock rung) the limit is checked against the uid's whole count, which other processes
    // of the uid (a concurrent test among them) may already hold past it: the run may get none.
    if (kind_ == backend_kind::bwrap) {
        EXPECT_GT(taken.count, 0);
    }
    EXPECT_LE(taken.count, 1024) << "the run's RLIMIT_SIGPENDING";
}

// fs.aio-max-nr is one count for the whole host, with no limit per uid or per run: the filter
// refuses io_setup (ENOSYS, the answer of a kernel without AIO, on which libaio's users fall back
// to threads), and the host's own contexts are never at stake.
TEST_P(KernelQuotas, AioContextsAreRefusedSoTheHostKeepsItsOwn) {
    int host_error = 0;
    const held taken = fill_and_check("aio", 1'000'000, [&host_error] {
        unsigned long context = 0;
        host_error = ::syscall(SYS_io_setup, 1, &context) == 0 ? 0 : errno;
        if (host_error == 0) (void)::syscall(SYS_io_destroy, context);
    });
    EXPECT_EQ(host_error, 0) << "the host's io_setup while the run held all it could: "
                             << std::strerror(host_error);
    EXPECT_EQ(taken.count, 0);
    EXPECT_EQ(taken.refusal, "ENOSYS");
}

// kernel.pty.max counts every pseudo-terminal of the host. Under bwrap the run's are its own
// devpts instance's, which the kernel keeps kernel.pty.reserve below the maximum: the host's
// instance keeps that many. The Landlock rung does not grant /dev/ptmx at all. Either way the
// host opens one while the run holds all it could. (For the second or so it holds them, a bwrap
// run of another suite could open no pty inside its sandbox; none of the suites does.)
TEST_P(KernelQuotas, PseudoTerminalsTheCommandTakesLeaveTheHostSome) {
    int host_error = 0;
    const held taken = fill_and_check(
        "pty", 1'000'000,
        [&host_error] {
            const int fd = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
            host_error = fd < 0 ? errno : 0;
            if (fd >= 0) ::close(fd);
        },
        nullptr,
        [](runtime::run_request& filling) { filling.mode = sandbox_mode::workspace_write; });
    EXPECT_EQ(host_error, 0) << "the host's posix_openpt while the run held all it could: "
                             << std::strerror(host_error);
    if (kind_ == backend_kind::bwrap) {
        const long max = std::stol(read_file("/proc/sys/kernel/pty/max"));
        const long reserve = std::stol(read_file("/proc/sys/kernel/pty/reserve"));
        EXPECT_EQ(taken.refusal, "ENOSPC") << describe(record_);
        EXPECT_LE(taken.count, max - reserve);
    } else {
        EXPECT_EQ(taken.count, 0);
        EXPECT_EQ(taken.refusal, "EACCES") << describe(record_);
    }
}

// Socket buffers count against the host's net.ipv4.tcp_mem, whose pressure falls on every TCP
// socket of the host. A command that writes 256 MiB into loopback connections it never reads
// has them charged to its run: under cgroup v1 through memory.kmem.tcp.limit_in_bytes (without
// it, v1 charges sockets to no limit at all and the 256 MiB were all taken), under v2 through
// memory.max. The kernel still lets each connection queue a little past the limit, so the bound
// leaves room for that (256 connections at most).
TEST_P(KernelQuotas, SocketBuffersCountAgainstTheRunsMemory) {
    const held taken = fill_and_check(
        "tcp-queue", 256, [] {}, nullptr,
        [](runtime::run_request& filling) {
            filling.max_memory = std::uint64_t{64} << 20;
            filling.network.policy = sandbox::network_policy::allow;
        });
    EXPECT_EQ(taken.refusal, "NONE") << describe(record_);
    EXPECT_GT(taken.count, 0) << describe(record_);
    EXPECT_LT(taken.count, 128) << "MiB queued on loopback by a run limited to 64 MiB";
}

// The kernel lets each socket queue a little past the run's bound, so many connections hold far
// more (18,000 of one run held 1.48 GiB under a 256 MiB limit and squeezed the host's TCP): the
// run's socket memory is watched, and past twice its bound the whole run ends, as at its memory
// limit.
TEST_P(KernelQuotas, ARunWhoseManySocketsPassTheirBoundIsEnded) {
    rlimit descriptors{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &descriptors), 0);
    if (descriptors.rlim_max < 8192) GTEST_SKIP() << "a hard descriptor limit below 8192";
    runtime::run_request filling =
        request({child(), "quota-fill", "tcp-connections", "3000"}, sandbox_mode::read_only);
    filling.max_memory = std::uint64_t{64} << 20;
    filling.network.policy = sandbox::network_policy::allow;
    held_run command(selection_->provider, std::move(filling), path_options());
    const bool ended = command.ended_within(generous);
    record_ = command.release();
    EXPECT_TRUE(ended) << "the run held its sockets until its stdin closed\n" << describe(record_);
    EXPECT_EQ(record_.outcome.kind, classify::outcome_kind::out_of_memory) << describe(record_);
    EXPECT_TRUE(record_.limits_hit.sockets) << describe(record_);
    EXPECT_FALSE(record_.limits_hit.memory) << describe(record_);
}

// Without a limit of its own a run's memory limit is half the host's, far above tcp_mem: its
// sockets get a quarter of tcp_mem's first threshold (runtime::socket_memory_limit), below the
// point where the kernel starts squeezing the host's sockets.
TEST_P(KernelQuotas, SocketBuffersOfADefaultRunStayBelowTheHostsTcpPressure) {
    const std::optional<std::uint64_t> memory = runtime::default_max_memory();
    ASSERT_TRUE(memory.has_value());
    const long share = static_cast<long>(runtime::socket_memory_limit(*memory) >> 20);
    if (share * 3 / 2 > 2048) GTEST_SKIP() << "this host's tcp_mem would take too long to fill";
    const held taken = fill_and_check(
        "tcp-queue", share * 3 / 2, [] {}, nullptr,
        [](runtime::run_request& filling) {
            filling.network.policy = sandbox::network_policy::allow;
        });
    EXPECT_EQ(taken.refusal, "NONE") << describe(record_);
    EXPECT_LT(taken.count, share + 64)
        << "MiB queued on loopback; the run's socket share is " << share << " MiB";
}

CORDON_HOSTILE_BACKENDS(KernelQuotas);

}  // namespace
}  // namespace cordon::hostile
