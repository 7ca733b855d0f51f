// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The backends as pure argv transformers (no process, no I/O): golden argv and profiles for every
// backend and mode, the stderr dialects, the status channel, and the contract violations that
// must throw instead of producing an argv.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "cordon/confined_argv.hpp"
#include "cordon/sandbox_error.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/launcher_status.hpp"
#include "sandbox/network_plan.hpp"
#include "sandbox/status_channel.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using strings = std::vector<std::string>;

const strings sample_command{"bash", "-c", "echo hi > out"};
const sandbox_policy read_only{sandbox_mode::read_only, "/work/ws"};
const sandbox_policy workspace_write{sandbox_mode::workspace_write, "/work/ws"};

strings concat(strings head, const strings& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
}

// ---- the shared launcher arguments ---------------------------------------------------------

// What both Linux backends hand cordon-landlock: the status and environment channels, the root
// read rules, /dev node by node (never as a tree), and the workspace by descriptor.
const strings launcher_read_only{"--status-fd",     "3",           "--env-fd", "4",
                                 "--deny-metadata", "--read-root", "--rw",     "/dev/null",
                                 "--rw-try",        "/dev/zero",   "--rw-try", "/dev/full",
                                 "--ro-try",        "/dev/random", "--ro-try", "/dev/urandom"};

// The launcher's network flags under the default network policy (deny): inside bwrap, whose
// namespace it is, only the unix-socket refusal; on the Landlock rung without a namespace of its
// own (the profile's default: cordon without CAP_SYS_ADMIN), the socket refusals.
strings with_network_flags(strings launcher, const strings& flags) {
    launcher.insert(std::find(launcher.begin(), launcher.end(), "--read-root"), flags.begin(),
                    flags.end());
    return launcher;
}
// Each followed by the network witness's channel (sandbox/walls.hpp).
const strings bwrap_network_flags{"--deny-unix-sockets", "--namespaced-sockets-only",
                                  "--witness-fd", "42"};
const strings landlock_network_flags{"--deny-unix-sockets", "--deny-sockets", "--witness-fd", "42"};

profile host_with_abi(int abi, fs::path workdir = {}) {
    profile out;
    out.landlock_abi = abi;
    out.workdir = std::move(workdir);
    out.launcher_image = std::make_shared<const unique_fd>();
    out.workspace = std::make_shared<const unique_fd>();
    out.user_sysctls = std::make_shared<const unique_fd>();
    return out;
}

TEST(LauncherArguments, ReadOnlyOutsideBwrap) {
    EXPECT_EQ(launcher_arguments(sandbox_mode::read_only, false, true), launcher_read_only);
}

TEST(LauncherArguments, WorkspaceWriteAddsTheWorkspaceDescriptorAndTmpOnlyWhenHost) {
    strings expected = launcher_read_only;
    expected.erase(std::find(expected.begin(), expected.end(), "--deny-metadata"));
    expected.insert(expected.end(), {"--rw-fd", "5"});
    // The default private /tmp is a directory of the run's own, granted by descriptor.
    EXPECT_EQ(launcher_arguments(sandbox_mode::workspace_write, false, true), expected);
    launcher_paths paths;
    paths.tmp = tmp_policy::private_tmp;
    paths.writable = 2;
    strings with_private = expected;
    with_private.insert(with_private.end(), {"--rw-fd", "8", "--rw-fd", "9"});
    EXPECT_EQ(launcher_arguments(sandbox_mode::workspace_write, false, true, paths), with_private);
    paths.tmp = tmp_policy::host;
    paths.writable = 0;
    strings host = expected;
    host.insert(host.end() - 2, {"--rw", "/tmp"});
    EXPECT_EQ(launcher_arguments(sandbox_mode::workspace_write, false, true, paths), host);
    paths.tmp = tmp_policy::none;
    EXPECT_EQ(launcher_arguments(sandbox_mode::workspace_write, false, true, paths), expected);
}

TEST(LauncherArguments, DeniedReadsAndTheirExceptionsReachTheLauncher) {
    launcher_paths paths;
    paths.deny_read = {"/home/u/.ssh", "/home/u/.netrc"};
    paths.allow_read = {"/home/u/.ssh/known_hosts"};
    const strings args = launcher_arguments(sandbox_mode::read_only, false, true, paths);
    const auto read_root = std::find(args.begin(), args.end(), "--read-root");
    ASSERT_NE(read_root, args.end());
    EXPECT_EQ((strings(read_root + 1, read_root + 7)),
              (strings{"--deny-read", "/home/u/.ssh", "--deny-read", "/home/u/.netrc", "--ro-try",
                       "/home/u/.ssh/known_hosts"}));
}

TEST(LauncherArguments, InsideBwrapTheIpcNamespaceAndPrivateDevNodesAreBwraps) {
    const strings inside = launcher_arguments(sandbox_mode::read_only, true, true);
    EXPECT_THAT(inside, ::testing::Contains("--private-ipc"));
    // bwrap's exit status cannot tell a signal from an exit of 128+N: the launcher reports it.
    EXPECT_THAT(inside, ::testing::Contains("--report-ending"));
    // The sandbox's user namespace gets limits of its own, written through cordon's proc.
    const auto quota = std::find(inside.begin(), inside.end(), "--quota-fd");
    ASSERT_NE(quota, inside.end());
    ASSERT_NE(quota + 1, inside.end());
    EXPECT_EQ(*(quota + 1), std::to_string(user_sysctls_fd));
    EXPECT_THAT(inside, ::testing::Contains("/dev/shm"));
    EXPECT_THAT(inside, ::testing::Contains("/dev/pts"));
    const strings outside = launcher_arguments(sandbox_mode::read_only, false, true);
    EXPECT_THAT(outside, ::testing::Not(::testing::Contains("--private-ipc")));
    EXPECT_THAT(outside, ::testing::Not(::testing::Contains("--report-ending")));
    EXPECT_THAT(outside, ::testing::Not(::testing::Contains("--quota-fd")));
    EXPECT_THAT(outside, ::testing::Not(::testing::Contains("/dev/shm")));
    EXPECT_THAT(outside, ::testing::Not(::testing::Contains("/dev/pts")));
}

TEST(LauncherArguments, DevIsNeverGrantedAsATree) {
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        for (bool inside : {false, true}) {
            const strings args = launcher_arguments(mode, inside, true);
            for (std::size_t i = 0; i + 1 < args.size(); ++i) {
                if (args[i].rfind("--r", 0) != 0) continue;
                EXPECT_NE(args[i + 1], "/") << args[i];
                EXPECT_NE(args[i + 1], "/dev") << args[i];
            }
        }
    }
}

TEST(LauncherArguments, WithoutLandlockTheLauncherIsStillTheLastRunner) {
    const strings args = launcher_arguments(sandbox_mode::read_only, true, false);
    EXPECT_THAT(args, ::testing::Contains("--no-landlock"));
    EXPECT_THAT(args, ::testing::Contains("--env-fd"));
    EXPECT_THAT(args, ::testing::Contains("--deny-metadata"));
}

// ---- bwrap ----------------------------------------------------------------------------------

// A confined run's network is denied unless the policy says otherwise: bwrap's own namespace.
const strings bwrap_namespaces{"--unshare-user",
                               "--disable-userns",
                               "--unshare-pid",
                               "--unshare-ipc",
                               "--unshare-uts",
                               "--unshare-net",
                               "--unshare-cgroup-try",
                               "--new-session",
                               "--cap-drop",
                               "ALL",
                               "--cap-add",
                               "CAP_SYS_RESOURCE",
                               "--cap-add",
                               "CAP_SETPCAP",
                               "--die-with-parent",
                               "--ro-bind",
                               "/",
                               "/",
                               "--dev",
                               "/dev",
                               "--proc",
                               "/proc",
                               "--remount-ro",
                               "/proc",
                               "--size",
                               "268435456",
                               "--tmpfs",
                               "/dev/shm"};

TEST(BwrapBackend, ReadOnlyGoldenArgv) {
    confined_argv out = bwrap_confine("/usr/bin/bwrap", sample_command, read_only,
                                      host_with_abi(7, "/work/ws/sub"));
    strings expected = concat({"/usr/bin/bwrap"}, bwrap_namespaces);
    expected = concat(expected, {"--chdir", "/work/ws/sub", "--", "/proc/self/fd/6"});
    strings launcher = with_network_flags(launcher_read_only, bwrap_network_flags);
    launcher.insert(launcher.begin() + 4, {"--private-ipc", "--report-ending", "--quota-fd", "40"});
    launcher.insert(launcher.end(), {"--rw-try", "/dev/shm", "--rw-try", "/dev/pts"});
    expected = concat(concat(expected, launcher), concat({"--"}, sample_command));
    EXPECT_THAT(out.argv, ElementsAreArray(expected));
    EXPECT_EQ(out.backend, backend_kind::bwrap);
    EXPECT_EQ(out.level, enforcement::full);
    EXPECT_TRUE(out.gaps.empty());
    EXPECT_TRUE(out.quotas_per_run);
}

TEST(BwrapBackend, WorkspaceWriteGoldenArgvBindsTheDescriptor) {
    confined_argv out =
        bwrap_confine("/opt/bin/bwrap", sample_command, workspace_write, host_with_abi(7));
    strings expected = concat({"/opt/bin/bwrap"}, bwrap_namespaces);
    expected = concat(expected, {"--size", "536870912", "--tmpfs", "/tmp", "--bind-fd", "7",
                                 "/work/ws", "--chdir", "/work/ws", "--", "/proc/self/fd/6"});
    expected = concat(
        expected, with_network_flags(launcher_arguments(sandbox_mode::workspace_write, true, true),
                                     bwrap_network_flags));
    expected = concat(concat(expected, {"--"}), sample_command);
    EXPECT_THAT(out.argv, ElementsAreArray(expected));
    EXPECT_EQ(out.level, enforcement::full);
}

// Every tmpfs bwrap mounts has a size, and together they stay within what the policy gives them
// (the run's memory limit), so that filling them ends in ENOSPC inside the run's cgroup.
TEST(BwrapBackend, EveryTmpfsIsSizedWithinTheRunsMemory) {
    for (const sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        sandbox_policy policy{mode, "/work/ws"};
        policy.tmpfs_bytes = 64ULL << 20;
        const confined_argv out =
            bwrap_confine("/usr/bin/bwrap", sample_command, policy, host_with_abi(7));
        const auto end = std::find(out.argv.begin(), out.argv.end(), "--");
        std::uint64_t total = 0;
        int mounts = 0;
        for (auto it = out.argv.begin(); it != end; ++it) {
            if (*it != "--tmpfs") continue;
            ++mounts;
            ASSERT_GE(it - out.argv.begin(), 2);
            ASSERT_EQ(*(it - 2), "--size") << *(it + 1);
            total += std::stoull(*(it - 1));
        }
        EXPECT_EQ(mounts, mode == sandbox_mode::read_only ? 1 : 2);
        EXPECT_LT(total, policy.tmpfs_bytes);
    }
}

TEST(BwrapBackend, WithoutBindFdTheWorkspaceIsBoundByPath) {
    profile host = host_with_abi(7);
    host.bind_fd = false;
    confined_argv out = bwrap_confine("/usr/bin/bwrap", sample_command, workspace_write, host);
    auto bind = std::find(out.argv.begin(), out.argv.end(), "--bind");
    ASSERT_NE(bind, out.argv.end());
    EXPECT_EQ(*(bind + 1), "/work/ws");
    EXPECT_EQ(*(bind + 2), "/work/ws");
    EXPECT_EQ(std::find(out.argv.begin(), out.argv.end(), "--bind-fd"), out.argv.end());
    // The inner launcher still grants the workspace from the checked descriptor.
    EXPECT_THAT(out.argv, ::testing::Contains("--rw-fd"));
}

TEST(BwrapBackend, PassesTheLauncherImageAndTheWorkspaceDescriptors) {
    const profile host = host_with_abi(7);
    confined_argv ro = bwrap_confine("/usr/bin/bwrap", sample_command, read_only, host);
    ASSERT_EQ(ro.fds.size(), 2u);
    EXPECT_EQ(ro.fds[0].child_fd, launcher_image_fd);
    EXPECT_EQ(ro.fds[0].fd, host.launcher_image);
    EXPECT_EQ(ro.fds[1].child_fd, user_sysctls_fd);
    EXPECT_EQ(ro.fds[1].fd, host.user_sysctls);
    confined_argv ww = bwrap_confine("/usr/bin/bwrap", sample_command, workspace_write, host);
    std::vector<int> numbers;
    for (const auto& passed : ww.fds) {
        numbers.push_back(passed.child_fd);
        EXPECT_EQ(passed.fd, passed.child_fd == launcher_image_fd ? host.launcher_image
                             : passed.child_fd == user_sysctls_fd ? host.user_sysctls
                                                                  : host.workspace);
    }
    EXPECT_THAT(numbers, ::testing::UnorderedElementsAre(workspace_bind_fd, workspace_fd,
                                                         launcher_image_fd, user_sysctls_fd));
    EXPECT_EQ(ww.environment_fd, command_environment_fd);
}

TEST(BwrapBackend, WorkspaceUnderTmpIsBoundAfterTheTmpfs) {
    // The bind must follow the tmpfs, or the private /tmp would hide the workspace.
    confined_argv out = bwrap_confine("/usr/bin/bwrap", sample_command,
                                      {sandbox_mode::workspace_write, "/tmp/ws"}, host_with_abi(7));
    auto tmpfs = std::find(out.argv.begin(), out.argv.end(), "/tmp");
    auto bind = std::find(out.argv.begin(), out.argv.end(), "--bind-fd");
    ASSERT_NE(tmpfs, out.argv.end());
    ASSERT_NE(bind, out.argv.end());
    EXPECT_LT(tmpfs, bind);
    EXPECT_EQ(*(bind + 2), "/tmp/ws");
}

TEST(BwrapBackend, CallerArgvIsPassedVerbatimAfterTheLastSeparator) {
    const strings tricky{"--", "--bind", "/", "/", "arg with spaces", ""};
    confined_argv out = bwrap_confine("/usr/bin/bwrap", tricky, read_only, host_with_abi(7));
    // bwrap's own "--" comes before the launcher, the launcher's before the command.
    auto bwrap_end = std::find(out.argv.begin(), out.argv.end(), "--");
    ASSERT_NE(bwrap_end, out.argv.end());
    EXPECT_EQ(*(bwrap_end + 1), "/proc/self/fd/6");
    auto launcher_end = std::find(bwrap_end + 1, out.argv.end(), "--");
    ASSERT_NE(launcher_end, out.argv.end());
    EXPECT_EQ(strings(launcher_end + 1, out.argv.end()), tricky);
    EXPECT_EQ(std::find(out.argv.begin(), bwrap_end, "--bind"), bwrap_end);
}

TEST(BwrapBackend, DialectsAndStatusChannel) {
    confined_argv out =
        bwrap_confine("/usr/bin/bwrap", sample_command, read_only, host_with_abi(7));
    // A read-only mount answers EROFS; Landlock inside answers EACCES where a mount does not
    // govern the write; a link or rename across binds answers EXDEV; the metadata filter answers
    // EPERM.
    EXPECT_THAT(out.denial_signatures,
                ElementsAre("read-only file system", "permission denied",
                            "invalid cross-device link", "operation not permitted"));
    EXPECT_THAT(
        bwrap_confine("/b", sample_command, workspace_write, host_with_abi(7)).denial_signatures,
        ElementsAre("read-only file system", "permission denied", "invalid cross-device link"));
    ASSERT_EQ(out.runner_failure_rules.size(), 2u);
    EXPECT_THAT(out.runner_failure_rules[0].fatal_signatures, ElementsAre("bwrap: "));
    EXPECT_THAT(out.runner_failure_rules[1].fatal_signatures, ElementsAre("cordon-landlock: "));
    ASSERT_TRUE(out.status.has_value());
    EXPECT_EQ(out.status->child_fd, runner_status_fd);
    EXPECT_EQ(out.environment_fd, command_environment_fd);
}

// ---- cordon-landlock ------------------------------------------------------------------------

TEST(LandlockBackend, ReadOnlyGoldenArgv) {
    const profile host = host_with_abi(7);
    confined_argv out =
        landlock_confine("/opt/cordon/bin/cordon-landlock", sample_command, read_only, host);
    EXPECT_THAT(out.argv,
                ElementsAreArray(
                    concat(concat({"/opt/cordon/bin/cordon-landlock"},
                                  with_network_flags(launcher_read_only, landlock_network_flags)),
                           concat({"--"}, sample_command))));
    EXPECT_EQ(out.backend, backend_kind::landlock);
    // Partial by the host's processes alone (no pid namespace): the record names it.
    EXPECT_EQ(out.level, enforcement::partial);
    EXPECT_THAT(out.gaps, ElementsAre(HasSubstr("/proc/PID/cmdline")));
    EXPECT_EQ(out.runner, host.launcher_image);
    EXPECT_TRUE(out.fds.empty());
    // No user namespace of the run's own: inotify and fanotify count against the uid's limits.
    EXPECT_FALSE(out.quotas_per_run);
}

TEST(PolicyParts, KernelQuotasAreTheRunsOwnUnderBwrapOnly) {
    const auto quotas = [](backend_kind kind) {
        for (const policy_part& part : policy_parts(kind)) {
            if (part.part == "kernel quotas") return std::optional<bool>(part.enforced);
        }
        return std::optional<bool>();
    };
    EXPECT_EQ(quotas(backend_kind::bwrap), std::optional<bool>(true));
    EXPECT_EQ(quotas(backend_kind::landlock), std::optional<bool>(false));
    EXPECT_EQ(quotas(backend_kind::seatbelt), std::optional<bool>(false));
}

// Whether the host's processes are out of sight is said for every rung: only bwrap's pid namespace
// hides them (the Landlock rung names what of them the command can still read).
TEST(PolicyParts, OnlyBwrapHidesTheHostsProcesses) {
    for (backend_kind kind :
         {backend_kind::bwrap, backend_kind::landlock, backend_kind::seatbelt}) {
        std::optional<bool> hidden;
        std::string how;
        for (const policy_part& part : policy_parts(kind)) {
            if (part.part == "host processes") {
                hidden = part.enforced;
                how = part.how;
            }
        }
        EXPECT_EQ(hidden, std::optional<bool>(kind == backend_kind::bwrap)) << to_string(kind);
        if (kind == backend_kind::landlock) {
            EXPECT_NE(how.find("/proc/PID/cmdline"), std::string::npos);
        }
    }
}

// Landlock does not govern chmod/chown/utime/xattr; under workspace-write no filter can tell the
// workspace's paths from the rest, so the run is partial whatever the ABI.
TEST(LandlockBackend, WorkspaceWriteGoldenArgvIsPartial) {
    const profile host = host_with_abi(7);
    confined_argv out = landlock_confine("/l", sample_command, workspace_write, host);
    EXPECT_THAT(
        out.argv,
        ElementsAreArray(concat(
            concat({"/l"}, with_network_flags(
                               launcher_arguments(sandbox_mode::workspace_write, false, true),
                               landlock_network_flags)),
            concat({"--"}, sample_command))));
    EXPECT_EQ(out.level, enforcement::partial);
    ASSERT_EQ(out.fds.size(), 1u);
    EXPECT_EQ(out.fds[0].child_fd, workspace_fd);
    EXPECT_EQ(out.fds[0].fd, host.workspace);
}

TEST(LandlockBackend, DialectsAndStatusChannel) {
    confined_argv out = landlock_confine("/l", sample_command, read_only, host_with_abi(7));
    // Read-only adds the metadata filter's EPERM to the dialect; workspace-write has no filter.
    // A refused REFER (a link or rename from a hierarchy that does not grant it) answers EXDEV.
    EXPECT_THAT(out.denial_signatures, ElementsAre("permission denied", "invalid cross-device link",
                                                   "operation not permitted"));
    EXPECT_THAT(
        landlock_confine("/l", sample_command, workspace_write, host_with_abi(7)).denial_signatures,
        ElementsAre("permission denied", "invalid cross-device link"));
    ASSERT_EQ(out.runner_failure_rules.size(), 1u);
    EXPECT_THAT(out.runner_failure_rules[0].allowed_exit_codes, ElementsAre(125));
    EXPECT_EQ(out.runner_failure_rules[0].allowed_exit_codes[0], launcher_failure_exit);
    EXPECT_THAT(out.runner_failure_rules[0].fatal_signatures, ElementsAre("cordon-landlock: "));
    EXPECT_THAT(out.runner_failure_rules[0].informational_lines,
                ElementsAre("cordon-landlock: partial enforcement (older Landlock ABI)"));
    EXPECT_EQ(launcher_notice_line, "cordon-landlock: partial enforcement (older Landlock ABI)");
    ASSERT_TRUE(out.status.has_value());
    EXPECT_EQ(out.status->child_fd, 3);
    // The argv tells the launcher the same fd the executor places the pipe at.
    EXPECT_EQ(out.argv[1], "--status-fd");
    EXPECT_EQ(out.argv[2], std::to_string(out.status->child_fd));
}

// ---- enforcement ----------------------------------------------------------------------------

// Full needs bwrap (its pid namespace) and Landlock's scopes; the Landlock rung and Seatbelt name
// the host's processes in every record.
TEST(Enforcement, FullNeedsLandlockScopesAndAPidNamespace) {
    struct row {
        backend_kind kind;
        sandbox_mode mode;
        int abi;
        enforcement level;
        std::size_t gaps;
    };
    const row table[] = {
        {backend_kind::bwrap, sandbox_mode::read_only, 7, enforcement::full, 0},
        {backend_kind::bwrap, sandbox_mode::workspace_write, 6, enforcement::full, 0},
        {backend_kind::bwrap, sandbox_mode::read_only, 5, enforcement::partial, 1},
        {backend_kind::bwrap, sandbox_mode::read_only, 3, enforcement::partial, 2},
        {backend_kind::bwrap, sandbox_mode::read_only, 0, enforcement::partial, 1},
        {backend_kind::landlock, sandbox_mode::read_only, 7, enforcement::partial, 1},
        {backend_kind::landlock, sandbox_mode::read_only, 6, enforcement::partial, 1},
        {backend_kind::landlock, sandbox_mode::read_only, 5, enforcement::partial, 2},
        {backend_kind::landlock, sandbox_mode::read_only, 4, enforcement::partial, 3},
        {backend_kind::landlock, sandbox_mode::workspace_write, 7, enforcement::partial, 2},
        {backend_kind::landlock, sandbox_mode::workspace_write, 3, enforcement::partial, 4},
        {backend_kind::seatbelt, sandbox_mode::workspace_write, 0, enforcement::partial, 1},
    };
    for (const row& r : table) {
        const auto assessment = assess(r.kind, r.mode, r.abi);
        EXPECT_EQ(assessment.level, r.level)
            << to_string(r.kind) << ' ' << to_string(r.mode) << " abi " << r.abi;
        EXPECT_EQ(assessment.gaps.size(), r.gaps)
            << to_string(r.kind) << ' ' << to_string(r.mode) << " abi " << r.abi;
    }
}

TEST(Enforcement, TheConfinedArgvCarriesTheAssessment) {
    confined_argv out = bwrap_confine("/b", sample_command, read_only, host_with_abi(5));
    EXPECT_EQ(out.level, enforcement::partial);
    ASSERT_EQ(out.gaps.size(), 1u);
    EXPECT_THAT(out.gaps[0], ::testing::HasSubstr("abstract unix sockets"));
    EXPECT_THAT(bwrap_confine("/b", sample_command, read_only, host_with_abi(0)).argv,
                ::testing::Contains("--no-landlock"));
}

// ---- the network policy ---------------------------------------------------------------------

sandbox_policy with_network(sandbox_policy policy, network_rules network) {
    policy.network = std::move(network);
    return policy;
}

network_rules allow_network() {
    network_rules out;
    out.policy = network_policy::allow;
    return out;
}

// The arguments between cordon-landlock's image and its "--", inside bwrap or not.
strings launcher_part(const strings& argv, const std::string& runner) {
    const auto begin = std::find(argv.begin(), argv.end(), runner);
    const auto end = std::find(begin, argv.end(), "--");
    return strings(begin == argv.end() ? begin : begin + 1, end);
}

bool has(const strings& argv, const std::string& flag) {
    return std::find(argv.begin(), argv.end(), flag) != argv.end();
}

TEST(Network, BwrapDenyIsANetworkNamespaceAndNoUnixSockets) {
    const confined_argv out = bwrap_confine("/b", sample_command, read_only, host_with_abi(7));
    // bwrap's own namespace, beside the others; the launcher makes none of its own.
    ASSERT_GT(out.argv.size(), 7u);
    EXPECT_EQ(out.argv[5], "--unshare-uts");
    EXPECT_EQ(out.argv[6], "--unshare-net");
    const strings launcher = launcher_part(out.argv, "/proc/self/fd/6");
    EXPECT_TRUE(has(launcher, "--deny-unix-sockets"));
    EXPECT_FALSE(has(launcher, "--unshare-net"));
    EXPECT_FALSE(has(launcher, "--deny-sockets"));
    // A namespace does not separate vsock and the like: only the families it does.
    EXPECT_TRUE(has(launcher, "--namespaced-sockets-only"));
    EXPECT_EQ(out.network.policy, network_policy::deny);
    EXPECT_EQ(out.network.level, network_enforcement::full);
    EXPECT_TRUE(out.network.missing.empty());
    EXPECT_EQ(out.level, enforcement::full);
}

TEST(Network, AllowIsTheHostsNetworkOnEveryBackend) {
    const sandbox_policy policy = with_network(read_only, allow_network());
    const confined_argv bwrap = bwrap_confine("/b", sample_command, policy, host_with_abi(7));
    EXPECT_FALSE(has(bwrap.argv, "--unshare-net"));
    EXPECT_FALSE(has(bwrap.argv, "--deny-unix-sockets"));
    const confined_argv landlock = landlock_confine("/l", sample_command, policy, host_with_abi(7));
    EXPECT_THAT(landlock.argv, ElementsAreArray(concat(concat({"/l"}, launcher_read_only),
                                                       concat({"--"}, sample_command))));
    for (const confined_argv* out : {&bwrap, &landlock}) {
        EXPECT_EQ(out->network.policy, network_policy::allow);
        EXPECT_EQ(out->network.level, network_enforcement::none);
    }
    EXPECT_EQ(bwrap.level, enforcement::full);
    // The network adds no gap; the Landlock rung's one is its missing pid namespace.
    EXPECT_THAT(landlock.gaps, ElementsAre(HasSubstr("no pid namespace")));
    EXPECT_EQ(to_string(network_enforcement::none), "none");
}

TEST(Network, LandlockDenyMakesANamespaceWhereItCan) {
    profile host = host_with_abi(7);
    host.network_namespace = true;
    const confined_argv out = landlock_confine("/l", sample_command, read_only, host);
    const strings launcher = launcher_part(out.argv, "/l");
    EXPECT_TRUE(has(launcher, "--unshare-net"));
    EXPECT_TRUE(has(launcher, "--deny-unix-sockets"));
    EXPECT_FALSE(has(launcher, "--deny-sockets"));
    EXPECT_TRUE(has(launcher, "--namespaced-sockets-only"));
    // The forked child raises the same walls as the launcher.
    ASSERT_TRUE(out.in_child.has_value());
    EXPECT_TRUE(out.in_child->network.unshare_net);
    EXPECT_TRUE(out.in_child->network.deny_unix_sockets);
    EXPECT_FALSE(out.in_child->network.deny_sockets);
    EXPECT_TRUE(out.in_child->network.namespaced_sockets_only);
    EXPECT_EQ(out.network.level, network_enforcement::full);
}

TEST(Network, LandlockDenyWithoutANamespaceRefusesSocketsAndIsPartialBelowAbi4) {
    const confined_argv full = landlock_confine("/l", sample_command, read_only, host_with_abi(6));
    const strings launcher = launcher_part(full.argv, "/l");
    EXPECT_FALSE(has(launcher, "--unshare-net"));
    EXPECT_TRUE(has(launcher, "--deny-sockets"));
    EXPECT_TRUE(has(launcher, "--deny-unix-sockets"));
    EXPECT_FALSE(has(launcher, "--local-binding"));
    ASSERT_TRUE(full.in_child.has_value());
    EXPECT_TRUE(full.in_child->network.deny_sockets);
    EXPECT_EQ(full.network.level, network_enforcement::full);

    // ABI 3 has no TCP rights: the filter alone, a wall short.
    const confined_argv old = landlock_confine("/l", sample_command, read_only, host_with_abi(3));
    EXPECT_EQ(old.network.level, network_enforcement::partial);
    EXPECT_THAT(old.network.missing, ElementsAre(::testing::HasSubstr("no network rights")));
    EXPECT_THAT(old.gaps, ::testing::Contains(::testing::HasSubstr("no network rights")));

    // Listening without a namespace is on the host's interfaces: named.
    network_rules binding;
    binding.allow_local_binding = true;
    const confined_argv bound =
        landlock_confine("/l", sample_command, with_network(read_only, binding), host_with_abi(7));
    EXPECT_TRUE(has(launcher_part(bound.argv, "/l"), "--local-binding"));
    EXPECT_EQ(bound.network.level, network_enforcement::partial);
    EXPECT_THAT(bound.network.missing, ElementsAre(::testing::HasSubstr("host's interfaces")));
    // With a namespace the loopback is the run's own: nothing to add.
    profile own = host_with_abi(7);
    own.network_namespace = true;
    const confined_argv inside =
        landlock_confine("/l", sample_command, with_network(read_only, binding), own);
    EXPECT_FALSE(has(inside.argv, "--local-binding"));
    EXPECT_EQ(inside.network.level, network_enforcement::full);
}

TEST(Network, AListedUnixSocketLiftsTheUnixRefusalAsAWholeAndIsPartial) {
    network_rules listed;
    listed.allow_unix_sockets = {"/run/listed.sock"};
    const sandbox_policy policy = with_network(workspace_write, listed);
    const confined_argv bwrap = bwrap_confine("/b", sample_command, policy, host_with_abi(7));
    EXPECT_FALSE(has(launcher_part(bwrap.argv, "/proc/self/fd/6"), "--deny-unix-sockets"));
    EXPECT_TRUE(has(bwrap.argv, "--unshare-net"));
    // Bound back over the private /tmp and any other mount of the profile.
    const auto bind = std::find(bwrap.argv.begin(), bwrap.argv.end(), "--bind-try");
    ASSERT_LT(bind + 2, bwrap.argv.end());
    EXPECT_EQ(*(bind + 1), "/run/listed.sock");
    EXPECT_EQ(*(bind + 2), "/run/listed.sock");
    EXPECT_EQ(bwrap.network.level, network_enforcement::partial);
    EXPECT_THAT(bwrap.network.missing,
                ElementsAre(::testing::HasSubstr("every host pathname unix socket")));

    const confined_argv landlock =
        landlock_confine("/l", sample_command, with_network(read_only, listed), host_with_abi(5));
    const strings launcher = launcher_part(landlock.argv, "/l");
    EXPECT_FALSE(has(launcher, "--deny-unix-sockets"));
    EXPECT_TRUE(has(launcher, "--deny-sockets"));
    // Below ABI 6 nothing scopes the abstract sockets either.
    EXPECT_EQ(landlock.network.missing.size(), 2u);
}

TEST(Network, SeatbeltCannotDenyTheNetwork) {
    const confined_argv out = seatbelt_confine("/s", sample_command, read_only, {});
    EXPECT_EQ(out.network.level, network_enforcement::partial);
    EXPECT_EQ(out.level, enforcement::partial);
    const confined_argv open =
        seatbelt_confine("/s", sample_command, with_network(read_only, allow_network()), {});
    EXPECT_EQ(open.network.level, network_enforcement::none);
    EXPECT_EQ(open.level, enforcement::full);
}

TEST(PolicyParts, EveryBackendSaysWhetherItDeniesTheNetwork) {
    for (backend_kind kind :
         {backend_kind::bwrap, backend_kind::landlock, backend_kind::seatbelt}) {
        std::optional<bool> deny;
        std::optional<bool> proxy;
        for (const policy_part& part : policy_parts(kind)) {
            if (part.part == "network deny") deny = part.enforced;
            if (part.part == "network proxy") proxy = part.enforced;
        }
        EXPECT_EQ(deny, std::optional<bool>(kind != backend_kind::seatbelt)) << to_string(kind);
        EXPECT_EQ(proxy, std::optional<bool>(kind != backend_kind::seatbelt)) << to_string(kind);
    }
}

network_rules proxy_network() {
    network_rules out;
    out.policy = network_policy::proxy;
    out.allowed_domains = {"registry.npmjs.org", "*.github.com:443"};
    out.denied_domains = {"gist.github.com"};
    return out;
}

// Under proxy, deny's walls and the forwarder: the launcher waits for the command (its forwarder
// runs meanwhile) and is handed the proxy's end at its fixed number.
TEST(Network, ProxyIsDenysNamespaceWithTheLaunchersForwarder) {
    const sandbox_policy policy = with_network(read_only, proxy_network());
    const std::vector<std::string> forwarder = {"--proxy-fd", std::to_string(proxy_forwarder_fd),
                                                "--proxy-port", std::to_string(proxy_port)};
    const confined_argv bwrap = bwrap_confine("/b", sample_command, policy, host_with_abi(7));
    EXPECT_EQ(bwrap.argv[6], "--unshare-net");
    const strings inside = launcher_part(bwrap.argv, "/proc/self/fd/6");
    EXPECT_TRUE(has(inside, "--deny-unix-sockets"));
    EXPECT_TRUE(has(inside, "--namespaced-sockets-only"));
    EXPECT_TRUE(has(inside, "--report-ending"));
    EXPECT_FALSE(has(inside, "--unshare-net"));
    EXPECT_NE(std::search(inside.begin(), inside.end(), forwarder.begin(), forwarder.end()),
              inside.end());
    // Connections that bypass the proxy are witnessed as under deny.
    const strings witness = {"--witness-fd", std::to_string(network_witness_fd)};
    EXPECT_NE(std::search(inside.begin(), inside.end(), witness.begin(), witness.end()),
              inside.end());
    EXPECT_TRUE(bwrap.network_witness);
    EXPECT_TRUE(bwrap.own_loopback);
    EXPECT_EQ(bwrap.network.policy, network_policy::proxy);
    EXPECT_EQ(bwrap.network.level, network_enforcement::full);
    EXPECT_EQ(bwrap.network.allowed_domains, proxy_network().allowed_domains);
    EXPECT_EQ(bwrap.network.denied_domains, proxy_network().denied_domains);

    profile own = host_with_abi(7);
    own.network_namespace = true;
    const confined_argv landlock = landlock_confine("/l", sample_command, policy, own);
    const strings launcher = launcher_part(landlock.argv, "/l");
    EXPECT_TRUE(has(launcher, "--unshare-net"));
    EXPECT_TRUE(has(launcher, "--report-ending"));
    EXPECT_FALSE(has(launcher, "--deny-sockets"));
    EXPECT_NE(std::search(launcher.begin(), launcher.end(), forwarder.begin(), forwarder.end()),
              launcher.end());
    // The forwarder is the launcher's: no in-child confinement, which has no process to run it.
    EXPECT_FALSE(landlock.in_child.has_value());
    EXPECT_EQ(landlock.network.level, network_enforcement::full);
    // Deny keeps the in-child path and the launcher's plain exec.
    const confined_argv deny = landlock_confine("/l", sample_command, read_only, own);
    EXPECT_TRUE(deny.in_child.has_value());
    EXPECT_FALSE(has(launcher_part(deny.argv, "/l"), "--report-ending"));
}

// Without a namespace there is no proxy: Landlock's port rules cannot tell one host from another,
// so a proxied run would be a run with every host or none. Refused, whatever accept_partial says.
TEST(Network, ProxyWithoutANamespaceIsRefusedNeverWidened) {
    sandbox_policy policy = with_network(read_only, proxy_network());
    policy.rules.accept_partial = true;
    const auto backends_of = [](const sandbox_unavailable_error& error) {
        std::string out;
        for (const auto& backend : error.backends())
            out += backend.backend + ": " + backend.reason;
        return out;
    };
    try {
        (void)landlock_confine("/l", sample_command, policy, host_with_abi(7));
        ADD_FAILURE() << "a proxied run without a namespace was confined";
    } catch (const sandbox_unavailable_error& error) {
        EXPECT_EQ(backends_of(error),
                  "landlock: network proxy needs a network namespace, and cordon cannot make one "
                  "without CAP_SYS_ADMIN (Landlock's port rules cannot tell one host from "
                  "another)");
    }
    try {
        (void)seatbelt_confine("/s", sample_command, policy, {});
        ADD_FAILURE() << "a proxied run was confined by Seatbelt";
    } catch (const sandbox_unavailable_error& error) {
        EXPECT_EQ(backends_of(error),
                  "seatbelt: network proxy needs a network namespace: cordon's Seatbelt profile "
                  "has no network rule");
    }
}

TEST(Network, TheProxyVariablesPointAtTheForwarder) {
    const std::vector<std::string> environment = proxy_environment();
    EXPECT_THAT(environment,
                ::testing::IsSupersetOf(
                    {"HTTP_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
                     "ALL_PROXY=socks5h://127.0.0.1:3128", "NO_PROXY=localhost,127.0.0.1,::1"}));
    EXPECT_EQ(environment.size(), 8u);
    for (const std::string& entry : environment)
        EXPECT_TRUE(is_proxy_variable(entry)) << entry;
    EXPECT_TRUE(is_proxy_variable("http_proxy=http://elsewhere"));
    EXPECT_TRUE(is_proxy_variable("NO_PROXY"));
    EXPECT_FALSE(is_proxy_variable("HTTP_PROXY_EXTRA=x"));
    EXPECT_FALSE(is_proxy_variable("PATH=/bin"));
}

// ---- what a profile hides -------------------------------------------------------------------

TEST(ProfileHides, BwrapWorkspaceWriteHidesTheHostTmpOutsideTheWorkspace) {
    const sandbox_policy ww{sandbox_mode::workspace_write, "/tmp/ws"};
    EXPECT_TRUE(profile_hides(backend_kind::bwrap, ww, "/tmp"));
    EXPECT_TRUE(profile_hides(backend_kind::bwrap, ww, "/tmp/other"));
    EXPECT_FALSE(profile_hides(backend_kind::bwrap, ww, "/tmp/ws"));
    EXPECT_FALSE(profile_hides(backend_kind::bwrap, ww, "/tmp/ws/sub"));
    EXPECT_FALSE(profile_hides(backend_kind::bwrap, ww, "/var/tmp"));
    EXPECT_FALSE(profile_hides(backend_kind::bwrap, {sandbox_mode::read_only, "/w"}, "/tmp/x"));
    EXPECT_FALSE(profile_hides(backend_kind::landlock, ww, "/tmp/other"));
}

// ---- Seatbelt -------------------------------------------------------------------------------

constexpr const char* seatbelt_read_only_profile =
    "(version 1) (allow default) (deny file-write*) (allow file-write* (literal \"/dev/null\"))";

TEST(SeatbeltBackend, ReadOnlyProfile) {
    EXPECT_EQ(seatbelt_profile(sandbox_mode::read_only, {}), seatbelt_read_only_profile);
    // Roots never widen a read-only profile.
    const std::vector<fs::path> roots{"/R1", "/R2"};
    EXPECT_EQ(seatbelt_profile(sandbox_mode::read_only, roots), seatbelt_read_only_profile);
}

TEST(SeatbeltBackend, WorkspaceWriteProfile) {
    const std::vector<fs::path> roots{"/Users/me/ws", "/private/tmp"};
    EXPECT_EQ(seatbelt_profile(sandbox_mode::workspace_write, roots),
              std::string(seatbelt_read_only_profile) +
                  " (allow file-write* (subpath \"/Users/me/ws\") (subpath \"/private/tmp\"))");
    const std::vector<fs::path> one{"/R1"};
    EXPECT_EQ(seatbelt_profile(sandbox_mode::workspace_write, one),
              std::string(seatbelt_read_only_profile) + " (allow file-write* (subpath \"/R1\"))");
}

TEST(SeatbeltBackend, RootsAreQuoted) {
    const std::vector<fs::path> roots{"/a \"b\"/c\\d"};
    EXPECT_EQ(seatbelt_profile(sandbox_mode::workspace_write, roots),
              std::string(seatbelt_read_only_profile) +
                  " (allow file-write* (subpath \"/a \\\"b\\\"/c\\\\d\"))");
}

TEST(SeatbeltBackend, ConfineGoldenArgv) {
    const std::vector<fs::path> roots{"/work/ws", "/private/tmp"};
    confined_argv ro = seatbelt_confine("/usr/bin/sandbox-exec", sample_command, read_only, {});
    EXPECT_THAT(ro.argv, ElementsAreArray(concat(
                             {"/usr/bin/sandbox-exec", "-p", seatbelt_read_only_profile, "--"},
                             sample_command)));
    confined_argv ww =
        seatbelt_confine("/usr/bin/sandbox-exec", sample_command, workspace_write, roots);
    EXPECT_THAT(ww.argv,
                ElementsAreArray(concat(
                    {"/usr/bin/sandbox-exec", "-p",
                     std::string(seatbelt_read_only_profile) +
                         " (allow file-write* (subpath \"/work/ws\") (subpath \"/private/tmp\"))",
                     "--"},
                    sample_command)));
    EXPECT_EQ(ww.backend, backend_kind::seatbelt);
    // The profile has no network rule: under the default network policy (deny), partial.
    EXPECT_EQ(ww.level, enforcement::partial);
    EXPECT_THAT(ww.gaps, ElementsAre(::testing::HasSubstr("no network rule")));
}

TEST(SeatbeltBackend, DialectsAndNoStatusChannel) {
    confined_argv out = seatbelt_confine("/usr/bin/sandbox-exec", sample_command, read_only, {});
    EXPECT_THAT(out.denial_signatures, ElementsAre("operation not permitted"));
    ASSERT_EQ(out.runner_failure_rules.size(), 1u);
    EXPECT_TRUE(out.runner_failure_rules[0].allowed_exit_codes.empty());
    EXPECT_THAT(out.runner_failure_rules[0].fatal_signatures, ElementsAre("sandbox-exec: "));
    EXPECT_TRUE(out.runner_failure_rules[0].informational_lines.empty());
    EXPECT_FALSE(out.status.has_value());
}

TEST(SbplQuote, EscapesQuoteAndBackslash) {
    EXPECT_EQ(sbpl_quote(""), "\"\"");
    EXPECT_EQ(sbpl_quote("/plain/path"), "\"/plain/path\"");
    EXPECT_EQ(sbpl_quote("a\"b"), "\"a\\\"b\"");
    EXPECT_EQ(sbpl_quote("a\\b"), "\"a\\\\b\"");
    EXPECT_EQ(sbpl_quote("\\\""), "\"\\\\\\\"\"");
    // A root ending in a backslash cannot swallow the closing quote.
    EXPECT_EQ(sbpl_quote("x\\"), "\"x\\\\\"");
    // Other characters, parentheses included, pass through: they are inert inside a string.
    EXPECT_EQ(sbpl_quote("(allow default)"), "\"(allow default)\"");
}

// ---- the dialect tables ---------------------------------------------------------------------

TEST(Dialects, SignaturesAreLowerCase) {
    // Matching is case-insensitive; the tables are spelled lower-case (docs/contract.md).
    for (auto kind : {backend_kind::bwrap, backend_kind::landlock, backend_kind::seatbelt}) {
        for (const auto& signature : denial_signatures(kind)) {
            for (char c : signature)
                EXPECT_FALSE(c >= 'A' && c <= 'Z') << signature;
        }
        for (const auto& rule : runner_failure_rules(kind)) {
            ASSERT_FALSE(rule.fatal_signatures.empty());
            for (const auto& signature : rule.fatal_signatures) {
                // The trailing space is significant (docs/contract.md).
                EXPECT_EQ(signature.back(), ' ') << signature;
            }
        }
    }
}

// ---- contract violations --------------------------------------------------------------------

TEST(BackendContract, DangerFullAccessThrows) {
    const sandbox_policy danger{sandbox_mode::danger_full_access, "/work/ws"};
    EXPECT_THROW((void)bwrap_confine("/b", sample_command, danger, host_with_abi(7)),
                 std::invalid_argument);
    EXPECT_THROW((void)landlock_confine("/l", sample_command, danger, host_with_abi(7)),
                 std::invalid_argument);
    EXPECT_THROW((void)seatbelt_confine("/s", sample_command, danger, {}), std::invalid_argument);
}

TEST(BackendContract, RelativeWorkspaceThrows) {
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        for (const char* root : {"work/ws", "", "./ws"}) {
            const sandbox_policy relative{mode, root};
            EXPECT_THROW((void)bwrap_confine("/b", sample_command, relative, host_with_abi(7)),
                         std::invalid_argument)
                << root;
            EXPECT_THROW((void)landlock_confine("/l", sample_command, relative, host_with_abi(7)),
                         std::invalid_argument)
                << root;
            EXPECT_THROW((void)seatbelt_confine("/s", sample_command, relative, {}),
                         std::invalid_argument)
                << root;
        }
    }
}

TEST(BackendContract, EmptyArgvThrows) {
    const strings empty;
    for (const auto& policy : {read_only, workspace_write}) {
        EXPECT_THROW((void)bwrap_confine("/b", empty, policy, host_with_abi(7)),
                     std::invalid_argument);
        EXPECT_THROW((void)landlock_confine("/l", empty, policy, host_with_abi(7)),
                     std::invalid_argument);
        EXPECT_THROW((void)seatbelt_confine("/s", empty, policy, {}), std::invalid_argument);
    }
}

// ---- the status channel ------------------------------------------------------------------------

launcher_status_record status_record(launcher_record_kind kind) {
    launcher_status_record out{};
    out.magic = launcher_status_magic;
    out.kind = static_cast<std::uint32_t>(kind);
    return out;
}

launcher_status_record ending_record(std::int32_t exit_code, std::int32_t signal) {
    launcher_status_record out = status_record(launcher_record_kind::ended);
    out.exit_code = exit_code;
    out.signal = signal;
    return out;
}

launcher_status_record failure_record(launcher_stage stage, int error) {
    launcher_status_record out = status_record(launcher_record_kind::failure);
    out.stage = static_cast<std::uint32_t>(stage);
    out.error = error;
    return out;
}

std::string channel(std::initializer_list<launcher_status_record> records) {
    std::string out;
    for (const auto& record : records)
        out.append(reinterpret_cast<const char*>(&record), sizeof record);
    return out;
}

using status_verdict = status_report::verdict;

TEST(StatusChannel, StartedThenEndedCarriesHowTheCommandEnded) {
    const auto started = status_record(launcher_record_kind::started);
    const status_report exited = decode_status(channel({started, ending_record(143, 0)}));
    EXPECT_EQ(exited.outcome, status_verdict::started);
    ASSERT_TRUE(exited.ended);
    EXPECT_EQ(exited.ended->exit_code, 143);
    EXPECT_EQ(exited.ended->signal, std::nullopt);

    const status_report signaled = decode_status(channel({started, ending_record(-1, SIGTERM)}));
    ASSERT_TRUE(signaled.ended);
    EXPECT_EQ(signaled.ended->exit_code, std::nullopt);
    EXPECT_EQ(signaled.ended->signal, SIGTERM);

    // Without --report-ending there is no `ended`: the runner's own status stands.
    EXPECT_FALSE(decode_status(channel({started})).ended);
}

TEST(StatusChannel, AnEndingOutOfPlaceOrOutOfRangeIsMalformed) {
    const auto started = status_record(launcher_record_kind::started);
    // Before `started`, after another ending, or followed by anything.
    EXPECT_EQ(decode_status(channel({ending_record(0, 0)})).outcome, status_verdict::malformed);
    EXPECT_EQ(decode_status(channel({started, ending_record(0, 0), ending_record(1, 0)})).outcome,
              status_verdict::malformed);
    EXPECT_EQ(decode_status(channel({started, ending_record(0, 0),
                                     failure_record(launcher_stage::exec, ENOENT)}))
                  .outcome,
              status_verdict::malformed);
    // An exit status is 0-255 and a signal 1-64; a record claiming otherwise was not written by
    // a launcher that saw the command end.
    for (const auto& [exit_code, signal] :
         std::vector<std::pair<int, int>>{{-1, 0}, {256, 0}, {0, 65}, {0, -9}}) {
        SCOPED_TRACE(std::to_string(exit_code) + "/" + std::to_string(signal));
        const status_report report =
            decode_status(channel({started, ending_record(exit_code, signal)}));
        EXPECT_EQ(report.outcome, status_verdict::malformed);
        EXPECT_FALSE(report.ended);
    }
}

// --report-ending's child blocks every signal until it has written `started`: only a SIGKILL of
// the child alone (the OOM killer, a cgroup.kill that reached it before its parent) leaves an
// `ended` record without one. The command never ran; that proves no more than silence, and is
// never a malformed channel (which would outrank cordon's own deadline as a runner failure).
TEST(StatusChannel, AnEndingBySignalBeforeStartedIsSilenceWithTheEnding) {
    for (const int signal : {SIGKILL, SIGTERM}) {
        SCOPED_TRACE(signal);
        const status_report report = decode_status(channel({ending_record(-1, signal)}));
        EXPECT_EQ(report.outcome, status_verdict::silent);
        ASSERT_TRUE(report.ended);
        EXPECT_EQ(report.ended->signal, signal);
        EXPECT_EQ(report.ended->exit_code, std::nullopt);
    }
    // An exit without `started` is not something the launcher writes: the child exits only
    // through exec or a failure record.
    EXPECT_EQ(decode_status(channel({ending_record(0, 0)})).outcome, status_verdict::malformed);
    EXPECT_EQ(decode_status(channel({ending_record(3, SIGKILL)})).outcome,
              status_verdict::malformed);
    // Nothing may follow it.
    EXPECT_EQ(decode_status(channel({ending_record(-1, SIGKILL),
                                     status_record(launcher_record_kind::started)}))
                  .outcome,
              status_verdict::malformed);
}

TEST(StatusChannel, AfterStartedOnlyTheCommandsExecMayFail) {
    const auto started = status_record(launcher_record_kind::started);
    const status_report exec =
        decode_status(channel({started, failure_record(launcher_stage::exec, ENOENT)}));
    EXPECT_EQ(exec.outcome, status_verdict::failed);
    EXPECT_EQ(exec.stage, launcher_stage::exec);
    EXPECT_EQ(exec.error, ENOENT);
    for (auto stage : {launcher_stage::ruleset, launcher_stage::spawn, launcher_stage::seccomp}) {
        EXPECT_EQ(decode_status(channel({started, failure_record(stage, EPERM)})).outcome,
                  status_verdict::malformed);
    }
    // Before `started`, any stage may fail: forking the command under a process limit, say.
    const status_report spawn =
        decode_status(channel({failure_record(launcher_stage::spawn, EAGAIN)}));
    EXPECT_EQ(spawn.outcome, status_verdict::failed);
    EXPECT_EQ(spawn.stage, launcher_stage::spawn);
}

}  // namespace
}  // namespace cordon::sandbox
