// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Process containment: a command shares cordon's uid (often root), so every check the kernel makes
// by uid alone (signals, priorities, limits, scheduling, ptrace-style reads) would let it reach
// cordon, its own runner and the rest of the host; and a command must not leave the run's tree or
// cgroup (clone3's CLONE_INTO_CGROUP, a user namespace, a daemon, a fork bomb).
#include <linux/ioprio.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "hostile_support.hpp"
#include "runtime/cgroup.hpp"

namespace cordon::hostile {
namespace {

using ::testing::IsEmpty;

// The attributes of this process that the command tries to "set to what they already are".
struct own_attributes {
    rlimit core{};
    int nice = 0;
    int policy = 0;
    long ioprio = 0;
    bool operator==(const own_attributes& other) const {
        return core.rlim_cur == other.core.rlim_cur && core.rlim_max == other.core.rlim_max &&
               nice == other.nice && policy == other.policy && ioprio == other.ioprio;
    }
};

own_attributes own() {
    own_attributes out;
    ::getrlimit(RLIMIT_CORE, &out.core);
    errno = 0;
    out.nice = ::getpriority(PRIO_PROCESS, 0);
    out.policy = ::sched_getscheduler(0);
    out.ioprio = ::syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
    return out;
}

// Where the cgroup v2 hierarchy is mounted ("" when it is not).
fs::path cgroup2_root() {
    std::ifstream mountinfo("/proc/self/mountinfo");
    std::string line;
    while (std::getline(mountinfo, line)) {
        const auto separator = line.find(" - ");
        if (separator == std::string::npos || line.compare(separator + 3, 8, "cgroup2 ") != 0) {
            continue;
        }
        std::istringstream head(line.substr(0, separator));
        std::string id, parent, device, root, point;
        head >> id >> parent >> device >> root >> point;
        return point;
    }
    return {};
}

// Whether runs get a cgroup of their own here (root, or a delegated subtree).
bool cgroups_available(std::string* why) {
    auto host = runtime::cgroup_host::create({.reap_stale = false, .lock_directory = {}});
    if (auto* reason = std::get_if<std::string>(&host)) {
        *why = *reason;
        return false;
    }
    return true;
}

// ---- 6. other processes -------------------------------------------------------------------------

class ProcessContainment : public BackendAndModeTest {};

TEST_P(ProcessContainment, HostProcessesCannotBeSignalledTunedOrRead) {
    const own_attributes before = own();
    const fs::path targets = tree_.outside() / "targets";
    runtime::run_record record;
    std::vector<pid_t> pids{::getpid(), 1};
    {
        background_run command(
            selection_->provider,
            request({child(), "proc-attack", targets.string(), std::to_string(child_wait_ms)}));
        ASSERT_TRUE(command.wait_for_line("WAITING")) << "the command never started";
        // cordon (this process), the host's pid 1, and the runner processes between cordon and
        // the command (under bwrap: bwrap and its init); the command itself is not a target.
        const fs::path command_image = fs::canonical(child());
        for (pid_t pid : descendants_of(::getpid())) {
            std::error_code ec;
            const fs::path image = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
            if (!ec && image != command_image) pids.push_back(pid);
        }
        std::string list;
        for (pid_t pid : pids)
            list += std::to_string(pid) + "\n";
        publish_file(targets, list);
        record = command.finish();
    }
    const attempts seen = parse_attempts(record.stdout_output.text);
    ASSERT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    ASSERT_THAT(seen.other, ::testing::Not(::testing::Contains("TIMEOUT"))) << describe(record);

    // Signals are the Landlock scope's (ABI 6); without it, a command can signal processes of
    // its uid, which cordon reports as partial enforcement.
    const bool scoped = landlock_abi() >= 6;
    strings calls{"pidfd_getfd",        "prlimit64",      "setpriority",
                  "sched_setscheduler", "sched_setparam", "sched_setattr",
                  "ioprio_set",         "ptrace-seize",   "process_vm_readv"};
    if (scoped) calls.insert(calls.end(), {"kill", "pidfd_send_signal"});
    for (pid_t pid : pids) {
        SCOPED_TRACE("target pid " + std::to_string(pid));
        const std::string id = std::to_string(pid);
        for (const auto& call : calls) {
            EXPECT_TRUE(denial_of(seen, call + " " + id).has_value()) << call << " " << id;
        }
        for (const char* file : {"mem", "environ"}) {
            const std::string what = "open /proc/" + id + "/" + file;
            EXPECT_TRUE(denial_of(seen, what).has_value()) << what;
        }
        for (const char* file : {"oom_score_adj", "oom_adj", "comm", "timerslack_ns",
                                 "coredump_filter", "autogroup", "clear_refs"}) {
            const std::string what = "open-write /proc/" + id + "/" + file;
            EXPECT_TRUE(denial_of(seen, what).has_value()) << what;
        }
    }
    // A pidfd is only a handle: opening one is not an attack. Everything else must have failed.
    strings succeeded;
    for (const auto& what : seen.allowed) {
        const bool signal = what.rfind("kill ", 0) == 0 || what.rfind("pidfd_send_signal ", 0) == 0;
        if (what.rfind("pidfd_open ", 0) != 0 && (scoped || !signal)) succeeded.push_back(what);
    }
    EXPECT_THAT(succeeded, IsEmpty()) << describe(record);
    // Ids that own no process: only the filter answers EPERM (the kernel would say ESRCH).
    EXPECT_EQ(denial_of(seen, "setpriority-user"), std::optional<std::string>("EPERM"));
    EXPECT_EQ(denial_of(seen, "setpriority-pgrp"), std::optional<std::string>("EPERM"));
    EXPECT_TRUE(before == own()) << "this process's limits, priority or scheduling changed";
}

CORDON_HOSTILE_BOTH_MODES(ProcessContainment);

// ---- 7. leaving the run -------------------------------------------------------------------------

class LeavingTheRun : public BackendAndModeTest {
protected:
    void SetUp() override {
        BackendAndModeTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        std::string why;
        cgroups_ = cgroups_available(&why);
        no_cgroups_ = why;
    }
    // Containment of setsid() and of limits needs the run's own cgroup.
    void require_cgroups() {
        if (!cgroups_ && ::geteuid() != 0) {
            GTEST_SKIP() << "needs root (or a delegated cgroup) for run cgroups: " << no_cgroups_;
        }
        ASSERT_TRUE(cgroups_) << no_cgroups_;
    }
    bool cgroups_ = false;
    std::string no_cgroups_;
};

TEST_P(LeavingTheRun, Clone3IsUnavailableWithOrWithoutCloneIntoCgroup) {
    const fs::path root = cgroup2_root();
    ASSERT_FALSE(root.empty()) << "no cgroup v2 hierarchy is mounted";
    const attempts seen = attack({"clone3", root.string()});
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_EQ(denial_of(seen, "clone3"), std::optional<std::string>("ENOSYS")) << describe(record_);
    // Into the host's root cgroup: out of the run's kill and limits.
    EXPECT_EQ(denial_of(seen, "clone3-into-cgroup"), std::optional<std::string>("ENOSYS"))
        << describe(record_);
}

// The run's cgroup, its ancestors and the hierarchy's root: joining another cgroup or raising
// the run's own limit takes a write to one of these files.
TEST_P(LeavingTheRun, NoCgroupMembershipOrLimitFileOpensForWriting) {
    const attempts seen = attack({"cgroup-escape"});
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_FALSE(seen.denied.empty()) << "no cgroup file was tried\n" << describe(record_);
    if (kind_ == backend_kind::landlock && cgroups_) {
        // Without a cgroup namespace the run's own directory is in the list.
        const bool own = std::any_of(seen.denied.begin(), seen.denied.end(), [](const auto& d) {
            return d.first.find("/run-") != std::string::npos &&
                   d.first.find("/cgroup.procs") != std::string::npos;
        });
        EXPECT_TRUE(own) << describe(record_);
    }
}

TEST_P(LeavingTheRun, NoNewUserNamespace) {
    const attempts seen = attack({"userns"});
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_TRUE(denial_of(seen, "unshare-newuser").has_value()) << describe(record_);
    EXPECT_TRUE(denial_of(seen, "clone-newuser").has_value()) << describe(record_);
}

// This process is the command's parent under the Landlock rung; it reaps only the command, so a
// child handed to it with CLONE_PARENT would stay a zombie for as long as this process lives.
TEST_P(LeavingTheRun, NoChildCanBeHandedToCordon) {
    const attempts seen = attack({"clone-parent"});
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_EQ(denial_of(seen, "clone-parent"), std::optional<std::string>("EPERM"))
        << describe(record_);
    EXPECT_THAT(test::zombie_children(), IsEmpty());
}

TEST_P(LeavingTheRun, ADaemonDoesNotOutliveTheRun) {
    require_cgroups();
    if (IsSkipped() || HasFatalFailure()) return;
    const std::string marker = "cordon-hostile-daemon-" + unique_suffix();
    const attempts seen = attack({"daemonize-exec", marker, "60000"});
    const auto announced = std::find_if(seen.other.begin(), seen.other.end(),
                                        [](const auto& l) { return l.rfind("DAEMON ", 0) == 0; });
    EXPECT_NE(announced, seen.other.end()) << "the daemon never started\n" << describe(record_);
    EXPECT_THAT(survivors_after(marker), IsEmpty())
        << "the daemon (double fork + setsid) outlived the run";
}

TEST_P(LeavingTheRun, AForkBombStopsAtTheProcessLimit) {
    require_cgroups();
    if (IsSkipped() || HasFatalFailure()) return;
    const std::string marker = "cordon-hostile-bomb-" + unique_suffix();
    runtime::run_request req = request({child(), "fork-bomb", "1000", "30000", marker});
    req.max_processes = 64;
    const runtime::run_record record = run(std::move(req));
    ASSERT_NE(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
    const attempts seen = parse_attempts(record.stdout_output.text);
    EXPECT_EQ(denial_of(seen, "fork"), std::optional<std::string>("EAGAIN")) << describe(record);
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record);
    EXPECT_EQ(record.limits.max_processes, std::optional<std::uint64_t>(64));
    EXPECT_TRUE(record.limits_hit.processes) << describe(record);
    EXPECT_THAT(survivors_after(marker), IsEmpty()) << "forked children outlived the run";
}

CORDON_HOSTILE_BOTH_MODES(LeavingTheRun);

// With tmp = host a workspace-write run writes the host's /tmp: a cgroup hierarchy mounted there
// would let the command move itself out of its run's cgroup and outlive it, a procfs its sysctls,
// an mqueue filesystem host IPC. Such a run is refused on both rungs, as a workspace holding one
// is; a private /tmp (bwrap's tmpfs, the Landlock rung's own directory) holds none of them, so the
// default run goes ahead.
class KernelStateUnderTmp : public BackendTest {};

TEST_P(KernelStateUnderTmp, APseudoFilesystemUnderTheHostTmpRefusesAHostTmpRun) {
    if (::geteuid() != 0) GTEST_SKIP() << "mounts need root";
    ASSERT_TRUE(in_private_mount_namespace());
    for (const std::string type : {"cgroup2", "proc", "mqueue"}) {
        SCOPED_TRACE(type);
        const fs::path point = "/tmp/cordon-hostile-" + type + "-" + unique_suffix();
        fs::create_directories(point);
        ASSERT_EQ(::mount(type.c_str(), point.c_str(), type.c_str(), 0, nullptr), 0)
            << std::strerror(errno);
        const std::string token = "ran-" + unique_suffix();
        runtime::run_request host_tmp = request({"echo", token}, sandbox_mode::workspace_write);
        host_tmp.rules.tmp = sandbox::tmp_policy::host;
        const runtime::run_record record = run(std::move(host_tmp));
        EXPECT_EQ(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
        EXPECT_THAT(record.outcome.message,
                    ::testing::HasSubstr("holds the " + type + " filesystem at " + point.string()))
            << describe(record);
        EXPECT_THAT(record.stdout_output.text, ::testing::Not(::testing::HasSubstr(token)));
        const runtime::run_record private_tmp =
            run(request({"echo", token}, sandbox_mode::workspace_write));
        EXPECT_EQ(private_tmp.outcome.exit_code, std::optional<int>(0)) << describe(private_tmp);
        EXPECT_THAT(private_tmp.stdout_output.text, ::testing::HasSubstr(token));
        ::umount2(point.c_str(), MNT_DETACH);
        fs::remove(point);
    }
}

CORDON_HOSTILE_BACKENDS(KernelStateUnderTmp);

}  // namespace
}  // namespace cordon::hostile
