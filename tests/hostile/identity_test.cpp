// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// 9. Who the command is on the host (docs/sandbox.md, "Identity"). Cordon as root gives its
// confined commands a uid and gid of their own from a range it reserves (sandbox/identity.hpp),
// and shows them the workspace, the writable roots and its homes through idmapped mounts as their
// owner's. Before that, a command cordon ran as root was root on the host, without capabilities:
// every check the kernel makes by uid alone let it through (a lease on a file root owns, a 0600
// socket or FIFO of root's, a 0600 file root owns, root's per-uid counts of inotify instances and
// fanotify groups). Each test attacks as that command would, checks that the attempt failed and
// the host shows nothing, and that the record names the uid the command saw as its own.
//
// Every test needs cordon to run as root (it does in CI); as any other user cordon runs its
// commands as that user, and these tests skip.
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "hostile_support.hpp"

namespace cordon::hostile {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// A user and a group no process of the host has: the workspace's owner in the tests that give it
// one other than root.
constexpr uid_t workspace_owner = 1234;
constexpr gid_t workspace_group = 1235;

// The errno name of the DENIED line for exactly `what`, or nullopt (denial_of() would also take a
// step of it, such as "lease PATH (open)").
std::optional<std::string> exact_denial(const attempts& seen, const std::string& what) {
    const auto found = seen.denied.find(what);
    if (found == seen.denied.end()) return std::nullopt;
    return found->second;
}

// A unix stream socket listening at `path`, non-blocking; closed and removed at scope end.
class listening_socket {
public:
    explicit listening_socket(const fs::path& path) : path_(path) {
        fd_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (!fd_) throw std::system_error(errno, std::generic_category(), "socket");
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        const std::string name = path.string();
        if (name.size() >= sizeof address.sun_path) throw std::length_error(name);
        std::memcpy(address.sun_path, name.c_str(), name.size() + 1);
        if (::bind(fd_.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
            throw std::system_error(errno, std::generic_category(), "bind " + name);
        }
        if (::listen(fd_.get(), 8) != 0) {
            throw std::system_error(errno, std::generic_category(), "listen");
        }
    }
    ~listening_socket() {
        std::error_code ignored;
        fs::remove(path_, ignored);
    }
    listening_socket(const listening_socket&) = delete;
    listening_socket& operator=(const listening_socket&) = delete;
    [[nodiscard]] int fd() const { return fd_.get(); }

private:
    fs::path path_;
    runtime::unique_fd fd_;
};

class CommandIdentity : public BackendTest {
protected:
    void SetUp() override {
        if (::geteuid() != 0)
            GTEST_SKIP() << "needs root (cordon's identity applies to cordon as root)";
        BackendTest::SetUp();
    }

    // `args` of the test child, after `id -u` and `id -g` print the ids the command has.
    [[nodiscard]] static strings saying_its_ids(strings args) {
        strings argv{"sh", "-c", "id -u && id -g && exec \"$0\" \"$@\"", child()};
        argv.insert(argv.end(), args.begin(), args.end());
        return argv;
    }

    // The record names a uid and gid of the reserved range, not root's, and they are the ones the
    // command saw: the first two lines of its stdout (saying_its_ids).
    void expect_its_own_ids(const runtime::run_record& record) {
        ASSERT_TRUE(record.sandbox.identity.has_value()) << describe(record);
        const sandbox::run_identity& identity = *record.sandbox.identity;
        EXPECT_TRUE(identity.reserved) << identity.reason;
        EXPECT_EQ(identity.reason, "");
        EXPECT_NE(identity.uid, 0U);
        EXPECT_NE(identity.gid, 0U);
        std::istringstream out(record.stdout_output.text);
        std::string uid;
        std::string gid;
        std::getline(out, uid);
        std::getline(out, gid);
        EXPECT_EQ(uid, std::to_string(identity.uid)) << describe(record);
        EXPECT_EQ(gid, std::to_string(identity.gid)) << describe(record);
    }

    // Runs the test child with `args` in `mode`; it must have run to its end.
    attempts attack(strings args, sandbox_mode mode,
                    const std::function<void(runtime::run_request&)>& adjust = {}) {
        runtime::run_request req = request(saying_its_ids(std::move(args)), mode);
        if (adjust) adjust(req);
        record_ = run(std::move(req));
        EXPECT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
        expect_its_own_ids(record_);
        return parse_attempts(record_.stdout_output.text);
    }

    // Runs quota-fill KIND N [ARGS...]; `check` runs on the host while the command holds all it
    // could take. The HELD line, and the MAX line's value.
    held fill_and_check(strings fill, const std::function<void()>& check, std::string* max,
                        sandbox_mode mode = sandbox_mode::read_only) {
        fill.insert(fill.begin(), "quota-fill");
        held_run command(selection_->provider, request(saying_its_ids(std::move(fill)), mode),
                         path_options());
        const std::optional<std::string> line = command.wait_for_line_starting("HELD ");
        if (line) check();
        record_ = command.release();
        EXPECT_TRUE(line.has_value()) << describe(record_);
        EXPECT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
        expect_its_own_ids(record_);
        std::istringstream in(record_.stdout_output.text);
        std::string each;
        while (std::getline(in, each)) {
            if (each.rfind("MAX ", 0) == 0) *max = each.substr(4);
        }
        return line ? parse_held(*line) : held{};
    }

    // A directory of root's that anyone may enter, outside the workspace and cordon's homes.
    [[nodiscard]] fs::path roots_directory() const {
        const fs::path dir = tree_.outside() / "roots";
        fs::create_directories(dir);
        fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
        return dir;
    }

    runtime::run_record record_;
};

TEST_P(CommandIdentity, TheCommandRunsAsTheUnprivilegedIdsTheRecordNames) {
    runtime::run_request req =
        request({"sh", "-c", "id -u && id -g && id -G"}, sandbox_mode::workspace_write);
    record_ = run(std::move(req));
    ASSERT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
    expect_its_own_ids(record_);
    // No group of root's either: the supplementary groups are the run's gid alone.
    std::istringstream out(record_.stdout_output.text);
    std::string line;
    for (int i = 0; i < 3; ++i)
        std::getline(out, line);
    ASSERT_TRUE(record_.sandbox.identity.has_value());
    EXPECT_EQ(line, std::to_string(record_.sandbox.identity->gid)) << describe(record_);
}

// The watches the command takes count against its own uid (the instances and fanotify groups:
// KernelQuotas, quotas_test.cpp, on every rung): the host's user.max_inotify_watches is one count
// per uid, and a command as root that took them all left root's daemons (systemd, file managers,
// editors) unable to watch a file.
TEST_P(CommandIdentity, InotifyWatchesTheCommandTakesAreNotRoots) {
    const fs::path watched = tree_.workspace() / "watched";
    fs::create_directories(watched);
    int host_error = 0;
    std::string max;
    const held taken = fill_and_check(
        {"inotify-watches", "100000000", watched.string()},
        [&host_error, this] {
            const int fd = ::inotify_init1(IN_CLOEXEC);
            host_error = fd < 0 ? errno : 0;
            if (fd >= 0 && ::inotify_add_watch(fd, tree_.base().c_str(), IN_ATTRIB) < 0) {
                host_error = errno;
            }
            if (fd >= 0) ::close(fd);
        },
        &max, sandbox_mode::workspace_write);
    EXPECT_EQ(host_error, 0) << "root's inotify_add_watch while the run held all it could: "
                             << std::strerror(host_error);
    EXPECT_EQ(taken.refusal, "ENOSPC") << describe(record_);
    EXPECT_LE(taken.count, std::stol(max));
    // All of its uid's share, not a part of it: the limit, not something else, stopped it.
    EXPECT_GT(taken.count, std::stol(max) / 2) << describe(record_);
}

// A lease is granted to the file's owner (or CAP_LEASE): as root the command could take one on a
// file of root's, the launcher among them, and hold off whoever opens it for writing for
// /proc/sys/fs/lease-break-time each time. Two walls refuse it: the filter refuses every lease
// (EPERM), and beneath it the uid owns none of these (EACCES). The workspace's own files, which
// the run owns and cordon reads to plan the next run, are refused by the filter.
TEST_P(CommandIdentity, ALeaseOnAFileOfRootsIsRefused) {
    const fs::path file = roots_directory() / "leased";
    write_file(file, "root's\n");
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);
    const std::string launcher = test::launcher_path().string();
    const fs::path owned = tree_.workspace() / "config";
    write_file(owned, "[core]\n");
    const attempts seen =
        attack({"lease", launcher, file.string(), owned.string()}, sandbox_mode::workspace_write);
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    for (const std::string& leased : {launcher, file.string(), owned.string()}) {
        const auto refusal = exact_denial(seen, "lease " + leased);
        EXPECT_TRUE(refusal == "EPERM" || refusal == "EACCES")
            << leased << ": " << refusal.value_or("no refusal") << "\n"
            << describe(record_);
    }
}

// A socket of root's with mode 0600 is root's to connect to: a daemon that trusts its socket's
// mode to keep others out took the command as root for one of its own. The run has the host's
// network, so that the socket's mode, not the network policy, is what refuses it.
TEST_P(CommandIdentity, ASocketOnlyRootMayConnectToRefusesTheCommand) {
    const fs::path path = roots_directory() / "s";
    listening_socket listener(path);
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
    const attempts seen = attack(
        {"connect-unix", path.string()}, sandbox_mode::workspace_write,
        [](runtime::run_request& req) { req.network.policy = sandbox::network_policy::allow; });
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_EQ(exact_denial(seen, "connect-unix " + path.string()),
              std::optional<std::string>("EACCES"))
        << describe(record_);
    const int accepted = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    EXPECT_LT(accepted, 0) << "the listener accepted a connection from the command";
    if (accepted >= 0) ::close(accepted);
}

// A process of root's on the host is another user's: neither signalled nor given a limit. (Under
// bwrap the run's pid namespace shows no host process at all: ESRCH. On the Landlock rung the
// signal scope (ABI 6) and the seccomp filter's self-only prlimit64 refuse first: EPERM; the uid
// is the wall beneath them, which the kernel checks when they are absent.)
TEST_P(CommandIdentity, AProcessOfRootsCanBeNeitherSignalledNorLimited) {
    spawned_process target({child(), "sleep", "120000"}, {});
    rlimit before{};
    ASSERT_EQ(::prlimit(target.pid(), RLIMIT_NOFILE, nullptr, &before), 0) << std::strerror(errno);
    const std::string pid = std::to_string(target.pid());
    const attempts killing = attack({"kill", pid}, sandbox_mode::workspace_write);
    const std::optional<std::string> kill_error = exact_denial(killing, "kill " + pid);
    EXPECT_THAT(kill_error, ::testing::AnyOf(std::optional<std::string>("EPERM"),
                                             std::optional<std::string>("ESRCH")))
        << describe(record_);
    const attempts limiting = attack({"prlimit", pid, "17"}, sandbox_mode::workspace_write);
    const std::optional<std::string> limit_error = exact_denial(limiting, "prlimit " + pid);
    EXPECT_THAT(limit_error, ::testing::AnyOf(std::optional<std::string>("EPERM"),
                                              std::optional<std::string>("ESRCH")))
        << describe(record_);

    // Still there, with its limit as it was. WNOWAIT: the process stays the spawner's to reap.
    siginfo_t info{};
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(target.pid()), &info, WEXITED | WNOHANG | WNOWAIT),
              0);
    EXPECT_EQ(info.si_pid, 0) << "the host's process ended: signal " << info.si_status;
    rlimit after{};
    ASSERT_EQ(::prlimit(target.pid(), RLIMIT_NOFILE, nullptr, &after), 0) << std::strerror(errno);
    EXPECT_EQ(after.rlim_cur, before.rlim_cur);
    EXPECT_EQ(after.rlim_max, before.rlim_max);
}

// A FIFO of root's with mode 0600 in a workspace another user owns: the workspace is the command's
// to write, so Landlock lets it open the FIFO, and only the FIFO's owner may. (Outside the
// writable roots Landlock refuses any FIFO anyway, which would not test the uid.) As root the
// command wrote into whatever root process reads it.
TEST_P(CommandIdentity, AFifoOnlyRootMayWriteRefusesTheCommandInItsWorkspace) {
    ASSERT_EQ(::chown(tree_.workspace().c_str(), workspace_owner, workspace_owner), 0)
        << std::strerror(errno);
    const fs::path fifo = tree_.workspace() / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    // A reader, without which a writer's non-blocking open fails with ENXIO whoever it is.
    runtime::unique_fd reader(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    ASSERT_TRUE(reader) << std::strerror(errno);
    const attempts seen = attack({"open-write", fifo.string()}, sandbox_mode::workspace_write);
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_EQ(exact_denial(seen, "open-write " + fifo.string()),
              std::optional<std::string>("EACCES"))
        << describe(record_);
}

// What the command makes in the workspace is its owner's on disk, as if the owner had made it: not
// root's files in a user's tree, which the user then cannot change or remove. In root's own
// workspace, root's.
TEST_P(CommandIdentity, WhatTheCommandMakesInTheWorkspaceIsTheWorkspaceOwners) {
    const auto make = [this](const std::string& name) {
        record_ = run(request(
            {"sh", "-c", "id -u && id -g && echo made > \"$0\" && mkdir \"$1\"",
             (tree_.workspace() / name).string(), (tree_.workspace() / (name + "-dir")).string()},
            sandbox_mode::workspace_write));
        EXPECT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
        expect_its_own_ids(record_);
    };
    const auto owner_of = [this](const std::string& name) {
        struct stat st {};
        if (::lstat((tree_.workspace() / name).c_str(), &st) != 0) return std::pair{-1L, -1L};
        return std::pair{static_cast<long>(st.st_uid), static_cast<long>(st.st_gid)};
    };

    ASSERT_EQ(::chown(tree_.workspace().c_str(), workspace_owner, workspace_group), 0)
        << std::strerror(errno);
    make("users");
    const std::pair<long, long> user{workspace_owner, workspace_group};
    EXPECT_EQ(owner_of("users"), user);
    EXPECT_EQ(owner_of("users-dir"), user);

    ASSERT_EQ(::chown(tree_.workspace().c_str(), 0, 0), 0) << std::strerror(errno);
    make("roots");
    const std::pair<long, long> root{0, 0};
    EXPECT_EQ(owner_of("roots"), root);
    EXPECT_EQ(owner_of("roots-dir"), root);
}

// git refuses a repository whose owner is not the user running it ("detected dubious ownership",
// CVE-2022-24765): as root the command could run no git command in a user's repository. As the
// run's uid, the repository is its own.
TEST_P(CommandIdentity, GitTakesARepositoryOfAnotherUserAsTheCommandsOwn) {
    if (std::system("command -v git >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "git is not installed";
    }
    const fs::path workspace = tree_.workspace();
    const std::string host_git = "cd '" + workspace.string() + "' && GIT_CONFIG_NOSYSTEM=1 HOME='" +
                                 tree_.outside().string() + "' git init -q . >/dev/null 2>&1";
    ASSERT_EQ(std::system(host_git.c_str()), 0);
    ASSERT_EQ(std::system(("chown -R " + std::to_string(workspace_owner) + ":" +
                           std::to_string(workspace_group) + " '" + workspace.string() + "'")
                              .c_str()),
              0);

    runtime::run_request req =
        request({"sh", "-c",
                 "id -u && id -g && git status --short && "
                 "git -c user.name=a -c user.email=b commit -q --allow-empty -m x && "
                 "git init -q fresh && git -C fresh status --short && git log --format=%s"},
                sandbox_mode::workspace_write);
    req.env = {{"HOME", tree_.outside().string()}, {"GIT_CONFIG_NOSYSTEM", "1"}};
    record_ = run(std::move(req));
    EXPECT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
    expect_its_own_ids(record_);
    EXPECT_THAT(record_.stderr_output.text, Not(HasSubstr("dubious ownership")));
    EXPECT_THAT(record_.stderr_output.text, Not(HasSubstr("safe.directory")));
    EXPECT_THAT(record_.stdout_output.text, HasSubstr("\nx\n")) << describe(record_);
    // The new repository is the workspace owner's on disk.
    struct stat st {};
    ASSERT_EQ(::stat((workspace / "fresh" / ".git").c_str(), &st), 0) << describe(record_);
    EXPECT_EQ(st.st_uid, workspace_owner);
}

// A file only root may read (mode 0600), outside the workspace and cordon's homes: the command
// reads it as the stranger it is. As root it read it, being its owner.
TEST_P(CommandIdentity, AFileOnlyRootMayReadIsUnreadable) {
    const fs::path secret = roots_directory() / "secret";
    write_file(secret, "SECRET\n");
    fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
    const attempts seen = attack({"open-read", secret.string()}, sandbox_mode::read_only);
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_EQ(exact_denial(seen, "open-read " + secret.string()),
              std::optional<std::string>("EACCES"))
        << describe(record_);
}

// A directory nobody else may enter holds root's files: a denied read inside it (whose mask bwrap
// must reach) must not open the rest of it to the run. Mapping the directory to the run's id to let
// bwrap in would have handed over every file in it, a 0600 one and a 0600 socket's mode included.
TEST_P(CommandIdentity, ADeniedPathInADirectoryClosedToOthersOpensNothingElseInIt) {
    const fs::path closed = tree_.outside() / "closed";
    fs::create_directories(closed);
    fs::permissions(closed, fs::perms::owner_all);
    write_file(closed / "hidden-thing", "x\n");
    write_file(closed / "secret", "SECRET\n");
    fs::permissions(closed / "secret", fs::perms::owner_read | fs::perms::owner_write);
    const attempts seen = attack(
        {"open-read", (closed / "secret").string()}, sandbox_mode::workspace_write,
        [&](runtime::run_request& req) { req.rules.deny_read.push_back(closed / "hidden-thing"); });
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_EQ(exact_denial(seen, "open-read " + (closed / "secret").string()),
              std::optional<std::string>("EACCES"))
        << describe(record_);
}

// The id has a name, and cordon's home as its home: `id -un`, `whoami`, a shell's prompt and git's
// ident look the uid up, and an id the host's account files lack has none ("cannot find name for
// user ID").
TEST_P(CommandIdentity, TheCommandsIdHasANameAndCordonsHome) {
    const char* home = std::getenv("HOME");
    record_ = run(
        request({"sh", "-c",
                 "id -u && id -g && id -un && id -gn && getent passwd \"$(id -u)\" | cut -d: -f6"},
                sandbox_mode::read_only));
    EXPECT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
    expect_its_own_ids(record_);
    EXPECT_THAT(
        record_.stdout_output.text,
        HasSubstr("\ncordon-run\ncordon-run\n" + std::string(home != nullptr ? home : "/") + "\n"))
        << describe(record_);
}

// A denied path beneath a directory another user owns but whose group the workspace shows as the
// run's (a team's directory in a user's workspace): the run enters it as that group does, so bwrap
// must keep its mask there. Judged by the owner's and everyone's bits alone, the directory looked
// closed, the mask was dropped, and the run read the file through its group.
TEST_P(CommandIdentity, ADeniedPathBeneathADirectoryOfTheRunsGroupKeepsItsMask) {
    const fs::path team = tree_.workspace() / "team";
    fs::create_directories(team);
    write_file(team / "secret", "TEAMSECRET\n");
    ASSERT_EQ(::chown(tree_.workspace().c_str(), workspace_owner, workspace_group), 0)
        << std::strerror(errno);
    ASSERT_EQ(::chown(team.c_str(), 5000, workspace_group), 0) << std::strerror(errno);
    ASSERT_EQ(::chown((team / "secret").c_str(), 5000, workspace_group), 0) << std::strerror(errno);
    fs::permissions(team, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
    fs::permissions(team / "secret",
                    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    const attempts seen =
        attack({"open-read", (team / "secret").string()}, sandbox_mode::read_only,
               [&](runtime::run_request& req) { req.rules.deny_read.push_back(team / "secret"); });
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_TRUE(exact_denial(seen, "open-read " + (team / "secret").string()).has_value())
        << describe(record_);
}

// Cordon's homes are read as root read them (their credential stores hidden), never changed: no
// mode, time or attribute of root's, which the run's id owns through the mapping, and which the
// Landlock rung's rules do not govern. A file of the home changed that way would be root's
// `.bashrc` made writable by every local user.
TEST_P(CommandIdentity, CordonsHomeIsReadButNothingOfItChanges) {
    const fs::path home = tree_.outside() / "home";
    fs::create_directories(home);
    fs::permissions(home, fs::perms::owner_all);
    write_file(home / ".bashrc", "# root's\n");
    fs::permissions(home / ".bashrc", fs::perms::owner_read | fs::perms::owner_write);
    const test::scoped_env cordons_home("HOME", home.string());
    runtime::run_request req =
        request({"sh", "-c",
                 "id -u && id -g && cat \"$0/.bashrc\" && { chmod 0777 \"$0\" \"$0/.bashrc\"; "
                 "touch -d 2001-01-01 \"$0/.bashrc\"; echo evil >> \"$0/.bashrc\"; true; }",
                 home.string()},
                sandbox_mode::workspace_write);
    record_ = run(std::move(req));
    EXPECT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
    expect_its_own_ids(record_);
    EXPECT_THAT(record_.stdout_output.text, HasSubstr("# root's")) << describe(record_);
    EXPECT_THAT(record_.stderr_output.text, HasSubstr("Read-only file system"))
        << describe(record_);
    struct stat st {};
    ASSERT_EQ(::stat(home.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700U);
    ASSERT_EQ(::stat((home / ".bashrc").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600U);
    EXPECT_GT(st.st_mtim.tv_sec, 978307200) << "the mtime was set back to 2001";
    EXPECT_EQ(read_file(home / ".bashrc"), "# root's\n");
}

// A workspace behind a directory another user keeps closed (a user's 0700 home, cordon as root):
// mapping that directory would hand the run everything of that user's in it, keys included. The run
// keeps cordon's uid, as before, and the record says why. (bwrap cannot bind such a workspace
// whoever runs it: a capability in its user namespace does not reach a file whose owner the
// namespace does not map. That run fails closed, before and after.)
TEST_P(CommandIdentity, AWorkspaceBehindAnotherUsersClosedDirectoryKeepsCordonsUid) {
    const fs::path users = tree_.outside() / "alice";
    const fs::path workspace = users / "project";
    fs::create_directories(workspace);
    ASSERT_EQ(::chown(users.c_str(), workspace_owner, workspace_group), 0) << std::strerror(errno);
    fs::permissions(users, fs::perms::owner_all);
    runtime::run_request req = request({"sh", "-c", "id -u"}, sandbox_mode::workspace_write);
    req.workspace_root = workspace;
    if (kind_ == backend_kind::bwrap) {
        EXPECT_THROW((void)run(std::move(req)), sandbox::sandbox_unavailable_error);
        return;
    }
    record_ = run(std::move(req));
    EXPECT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
    ASSERT_TRUE(record_.sandbox.identity.has_value()) << describe(record_);
    EXPECT_FALSE(record_.sandbox.identity->reserved);
    EXPECT_EQ(record_.sandbox.identity->uid, 0U);
    EXPECT_THAT(record_.sandbox.identity->reason, HasSubstr(users.string()));
    EXPECT_EQ(record_.stdout_output.text, "0\n");
}

// The streams a command reopens by name: cordon's pipes, and a pipe handed over as its stdin (a
// shell pipe into `cordon run --stdin-file -`), are the run's to open again.
TEST_P(CommandIdentity, ItsStreamsOpenByName) {
    int ends[2];
    ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
    runtime::unique_fd reader(ends[0]);
    runtime::unique_fd writer(ends[1]);
    ASSERT_EQ(::write(writer.get(), "piped\n", 6), 6);
    writer.reset();
    runtime::run_request req =
        request({"sh", "-c",
                 "id -u && id -g && cat /dev/stdin && echo out > /dev/stdout && "
                 "echo err | tee /dev/stderr >/dev/null"},
                sandbox_mode::read_only);
    req.stdin_fd = std::make_shared<const runtime::unique_fd>(std::move(reader));
    record_ = run(std::move(req));
    EXPECT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
    expect_its_own_ids(record_);
    EXPECT_THAT(record_.stdout_output.text, HasSubstr("piped\nout\n")) << describe(record_);
    EXPECT_EQ(record_.stderr_output.text, "err\n") << describe(record_);
}

CORDON_HOSTILE_BACKENDS(CommandIdentity);

}  // namespace
}  // namespace cordon::hostile
