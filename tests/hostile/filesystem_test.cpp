// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Writes that no mount flag governs: procfs and sysfs files whose write permission is decided by
// uid rather than capability, a FIFO or a device node that a read-only mount does not stop, and a
// mount that appears while the command runs (bwrap's read-only remount covered only what existed
// when it set up).
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hostile_support.hpp"

namespace cordon::hostile {
namespace {

using ::testing::IsEmpty;

// Regular files with any write bit beneath `dir` (symlinks never followed), at most `depth`
// levels down and `cap` files in all; `skip` names entries of `dir` itself to leave out.
void collect_writable(const fs::path& dir, int depth, std::size_t cap, strings& out,
                      const std::function<bool(const std::string&)>& skip = {}) {
    if (depth < 0 || out.size() >= cap) return;
    DIR* handle = ::opendir(dir.c_str());
    if (handle == nullptr) return;
    std::vector<std::pair<std::string, bool>> entries;  // name, is directory
    while (dirent* entry = ::readdir(handle)) {
        const std::string name = entry->d_name;
        if (name == "." || name == ".." || (skip && skip(name))) continue;
        struct stat st {};
        if (::fstatat(::dirfd(handle), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            entries.emplace_back(name, true);
        } else if (S_ISREG(st.st_mode) && (st.st_mode & 0222) != 0) {
            entries.emplace_back(name, false);
        }
    }
    ::closedir(handle);
    for (const auto& [name, directory] : entries) {
        if (out.size() >= cap) return;
        if (directory) {
            // debugfs and tracefs files may act on open(2) itself (their drivers' open hooks run
            // before any write): an attack that succeeded there would not be harmless.
            const fs::path sub = dir / name;
            if (sub == "/sys/kernel/debug" || sub == "/sys/kernel/tracing") continue;
            collect_writable(sub, depth - 1, cap, out);
        } else {
            out.push_back((dir / name).string());
        }
    }
}

// What a uid-0 command would try: every writable file of /proc outside the per-process
// directories (/proc/sys/**, /proc/sysrq-trigger, /proc/irq/**, /proc/bus/**, /proc/fs/**, ...),
// and every writable file of /sys (its kernel, power, module parameters, devices, which the
// /sys/class and /sys/bus symlinks lead to, and the cgroup trees) but debugfs and tracefs.
strings writable_proc_and_sys_files() {
    strings out;
    const auto per_process = [](const std::string& name) {
        return name == "self" || name == "thread-self" ||
               name.find_first_not_of("0123456789") == std::string::npos;
    };
    collect_writable("/proc", 16, 50'000, out, per_process);
    collect_writable("/sys", 24, 100'000, out);
    return out;
}

std::string joined(const strings& lines, std::size_t limit = 40) {
    std::string out;
    for (std::size_t i = 0; i < lines.size() && i < limit; ++i)
        out += "  " + lines[i] + "\n";
    if (lines.size() > limit) out += "  ... " + std::to_string(lines.size() - limit) + " more\n";
    return out;
}

// ---- 1. procfs and sysfs ------------------------------------------------------------------------

class ProcAndSysfsWrites : public BackendAndModeTest {};

TEST_P(ProcAndSysfsWrites, NoWritableFileUnderProcOrSysOpensForWriting) {
    const strings targets = writable_proc_and_sys_files();
    ASSERT_FALSE(targets.empty()) << "no writable file found under /proc or /sys";
    std::string list;
    for (const auto& target : targets)
        list += target + "\n";

    const attempts seen = attack({"open-write"}, list);
    EXPECT_THAT(seen.allowed, IsEmpty())
        << seen.allowed.size() << " of " << targets.size() << " opened for writing:\n"
        << joined(seen.allowed);
    strings unreported;
    for (const auto& target : targets) {
        if (!seen.denied.contains("open-write " + target)) unreported.push_back(target);
    }
    EXPECT_THAT(unreported, IsEmpty()) << "no verdict for:\n" << joined(unreported);
}

TEST_P(ProcAndSysfsWrites, CorePatternCannotBeRewrittenWithItsOwnValue) {
    const fs::path core_pattern = "/proc/sys/kernel/core_pattern";
    const auto before = read_file_if_present(core_pattern);
    ASSERT_TRUE(before.has_value());

    // The same file through the process's root links: /proc/self/root and /proc/1/root (the
    // host's init under Landlock, bwrap's init inside bwrap).
    const strings spellings{core_pattern.string(), "/proc/self/root" + core_pattern.string(),
                            "/proc/thread-self/root" + core_pattern.string(),
                            "/proc/1/root" + core_pattern.string()};
    strings args{"rewrite-same"};
    args.insert(args.end(), spellings.begin(), spellings.end());
    const attempts seen = attack(args);
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    for (const auto& path : spellings) {
        EXPECT_TRUE(denial_of(seen, "open-write " + path).has_value()) << path;
    }
    EXPECT_EQ(read_file_if_present(core_pattern), before);
}

CORDON_HOSTILE_BOTH_MODES(ProcAndSysfsWrites);

// ---- 2. FIFOs and device nodes outside /dev -----------------------------------------------------

class UngovernedWrites : public BackendAndModeTest {};

// A FIFO on a read-only mount still opens for writing (the mount governs only regular files,
// directories and symlinks); Landlock must refuse it.
TEST_P(UngovernedWrites, HostFifoOutsideTheWorkspaceReceivesNothing) {
    const fs::path fifo = tree_.outside() / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0) << std::strerror(errno);
    ASSERT_EQ(::chmod(fifo.c_str(), 0666), 0);
    // The reader is attached, so a non-blocking open for writing would succeed if allowed.
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(reader, 0) << std::strerror(errno);

    const attempts seen = attack({"write-existing", "pwned", fifo.string()});
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_TRUE(denial_of(seen, "write " + fifo.string()).has_value()) << describe(record_);

    char buf[64];
    const ssize_t received = ::read(reader, buf, sizeof buf);
    EXPECT_LE(received, 0) << "the host reader received "
                           << std::string(buf,
                                          static_cast<std::size_t>(std::max<ssize_t>(received, 0)));
    ::close(reader);
}

// A device node outside /dev (mknod needs root; the command has no capability to make one, but a
// host may have one lying around): a copy of /dev/null's 1:3, and a copy of a pty slave whose
// master the test holds, so that a write would be seen.
TEST_P(UngovernedWrites, DeviceNodeCopiesOutsideDevRefuseWrites) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: mknod of a character device";
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(master, 0) << std::strerror(errno);
    ASSERT_EQ(::grantpt(master), 0);
    ASSERT_EQ(::unlockpt(master), 0);
    const std::string slave_path = ::ptsname(master);
    // Held open on the host so that the slave side never hangs up while the command runs.
    const int slave = ::open(slave_path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    ASSERT_GE(slave, 0) << std::strerror(errno);
    struct stat slave_stat {};
    ASSERT_EQ(::fstat(slave, &slave_stat), 0);

    const fs::path null_copy = tree_.outside() / "null";
    const fs::path pty_copy = tree_.outside() / "pty";
    ASSERT_EQ(::mknod(null_copy.c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0)
        << std::strerror(errno);
    ASSERT_EQ(::mknod(pty_copy.c_str(), S_IFCHR | 0666, slave_stat.st_rdev), 0)
        << std::strerror(errno);
    ::chmod(null_copy.c_str(), 0666);
    ::chmod(pty_copy.c_str(), 0666);

    const attempts seen =
        attack({"write-existing", "pwned", null_copy.string(), pty_copy.string()});
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_TRUE(denial_of(seen, "write " + null_copy.string()).has_value()) << describe(record_);
    EXPECT_TRUE(denial_of(seen, "write " + pty_copy.string()).has_value()) << describe(record_);

    char buf[64];
    const ssize_t received = ::read(master, buf, sizeof buf);
    EXPECT_LE(received, 0) << "the pty master received "
                           << std::string(buf,
                                          static_cast<std::size_t>(std::max<ssize_t>(received, 0)));
    ::close(slave);
    ::close(master);
}

CORDON_HOSTILE_BOTH_MODES(UngovernedWrites);

// ---- 2b. ioctls that change an inode through a read-only descriptor ---------------------------

class InodeIoctls : public BackendTest {};

// Landlock does not govern ioctls on regular files, and filesystems keep adding ones that change
// an inode through a read-only fd: under read-only everything but the terminal and socket
// families and the inode getters is refused. The file is the test's own, so an ioctl that got
// through would only change the test's file.
TEST_P(InodeIoctls, ReadOnlyRefusesEveryInodeSetterAndKeepsTheGetters) {
    const fs::path file = tree_.outside() / "file";
    std::ofstream(file) << "x\n";
    const strings setters{
        "40086602",  // FS_IOC_SETFLAGS (chattr)
        "40046602",  // FS_IOC32_SETFLAGS
        "40087602",  // FS_IOC_SETVERSION
        "40047602",  // FS_IOC32_SETVERSION
        "40086604",  // EXT4_IOC_SETVERSION
        "401c5820",  // FS_IOC_FSSETXATTR
        "40806685",  // FS_IOC_ENABLE_VERITY
        "40049409",  // FICLONE
        "50009401",  // BTRFS_IOC_SNAP_CREATE
    };
    const strings getters{"80086601", "80087601", "801c581f", "5401", "541b", "5421", "8912"};
    strings args{"ioctl", file.string()};
    args.insert(args.end(), setters.begin(), setters.end());
    args.insert(args.end(), getters.begin(), getters.end());
    runtime::run_request req = request({child()}, sandbox_mode::read_only);
    req.argv.insert(req.argv.end(), args.begin(), args.end());
    const runtime::run_record record = run(std::move(req));
    ASSERT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    const attempts seen = parse_attempts(record.stdout_output.text);
    for (const auto& request : setters) {
        EXPECT_EQ(denial_of(seen, "ioctl " + request), std::optional<std::string>("EPERM"))
            << request << "\n"
            << describe(record);
    }
    for (const auto& request : getters) {
        EXPECT_FALSE(denial_of(seen, "ioctl " + request).has_value()) << request;
    }
}

CORDON_HOSTILE_BACKENDS(InodeIoctls);

// ---- 3. a mount that appears during the run -----------------------------------------------------

// Mount points made by the test, lazily unmounted in reverse order at scope end.
class mount_guard {
public:
    mount_guard() = default;
    ~mount_guard() {
        for (auto it = points_.rbegin(); it != points_.rend(); ++it) {
            if (::umount2(it->c_str(), 0) != 0) ::umount2(it->c_str(), MNT_DETACH);
        }
    }
    mount_guard(const mount_guard&) = delete;
    mount_guard& operator=(const mount_guard&) = delete;
    void add(const fs::path& point) { points_.push_back(point); }

private:
    std::vector<fs::path> points_;
};

class MountDuringTheRun : public BackendAndModeTest {};

// The test makes a shared tmpfs outside the workspace, starts a command that waits, and mounts a
// second tmpfs beneath the shared one while the command runs. Under bwrap the new mount
// propagates into the sandbox read-write (bwrap remounted read-only only what existed at setup);
// Landlock must still refuse the write.
TEST_P(MountDuringTheRun, WriteIntoAMountThatAppearsMidRunFails) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: mounts a tmpfs and makes it shared";
    // The shared tmpfs stands for the host's shared propagation; made here, inside a namespace of
    // the test's own, it propagates into the run as a host mount would.
    ASSERT_TRUE(in_private_mount_namespace());
    const fs::path shared = tree_.outside() / "shared";
    fs::create_directories(shared);
    mount_guard mounts;
    ASSERT_EQ(::mount("cordon-hostile", shared.c_str(), "tmpfs", 0, "size=1m,mode=0755"), 0)
        << std::strerror(errno);
    mounts.add(shared);
    ASSERT_EQ(::mount(nullptr, shared.c_str(), nullptr, MS_SHARED, nullptr), 0)
        << std::strerror(errno);
    const fs::path inner = shared / "inner";
    fs::create_directories(inner);
    const fs::path ready = inner / "ready";
    const fs::path target = inner / "pwned";

    runtime::run_record record;
    {
        background_run command(selection_->provider,
                               request({child(), "wait-then-create", ready.string(),
                                        target.string(), std::to_string(child_wait_ms)}));
        ASSERT_TRUE(command.wait_for_line("WAITING")) << "the command never started";
        ASSERT_EQ(::mount("cordon-hostile-inner", inner.c_str(), "tmpfs", 0, "size=1m,mode=0777"),
                  0)
            << std::strerror(errno);
        mounts.add(inner);
        write_file(ready, "");
        record = command.finish();
    }
    const attempts seen = parse_attempts(record.stdout_output.text);
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    // The command saw the new mount: the attack was really made against it.
    EXPECT_THAT(seen.other, ::testing::Contains("READY")) << describe(record);
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record);
    EXPECT_TRUE(denial_of(seen, "create " + target.string()).has_value()) << describe(record);
    std::error_code ec;
    EXPECT_FALSE(fs::exists(target, ec)) << target << " was created on the host";
}

CORDON_HOSTILE_BOTH_MODES(MountDuringTheRun);

}  // namespace
}  // namespace cordon::hostile
