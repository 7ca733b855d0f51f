// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// End-to-end tests of the cordon-landlock executable (reference section 3): each test runs the
// real binary as a child process, captures stdout, stderr and optionally the --status-fd pipe,
// and checks the exit code, the exact diagnostics, the status record and the filesystem effects.
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/launcher_status.hpp"
#include "sandbox/quotas.hpp"
#include "support.hpp"
#include "support/processes.hpp"

namespace {

namespace fs = std::filesystem;
namespace landlock = cordon::sandbox::landlock;
using cordon::sandbox::launcher_record_kind;
using cordon::sandbox::launcher_stage;
using cordon::sandbox::launcher_status_record;

// The fd number the tests hand to --status-fd: far from 0-2 and from anything the launcher opens.
constexpr int status_fd_number = 42;
constexpr char notice_line[] = "cordon-landlock: partial enforcement (older Landlock ABI)\n";

struct run_result {
    int exit_code = -1;  // -1 when the child died by a signal
    int signal = 0;
    std::string out;
    std::string err;
    std::string status;  // every byte written to the status pipe
};

// Reads all three pipes to EOF together so that no child blocks on a full pipe.
void drain(int out_fd, int err_fd, int status_fd, run_result& result) {
    struct pollfd fds[3] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {status_fd, POLLIN, 0}};
    std::string* sinks[3] = {&result.out, &result.err, &result.status};
    int open_count = 0;
    for (const auto& p : fds)
        open_count += p.fd >= 0 ? 1 : 0;
    while (open_count > 0) {
        if (::poll(fds, 3, -1) < 0) {
            if (errno == EINTR) continue;
            ADD_FAILURE() << "poll: " << std::strerror(errno);
            return;
        }
        for (int i = 0; i < 3; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buffer[4096];
            const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
            if (n > 0) {
                sinks[i]->append(buffer, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_count;
            }
        }
    }
}

// This suite's own spawner (fork, exec, poll) rather than runtime::run_process: the launcher suite
// stays independent of cordon_runtime, and it needs to drop CAP_SETPCAP between fork and exec.
//
// Runs `args` (args[0] is the launcher) with stdin from /dev/null and stdout/stderr captured.
// With `status_fd` >= 0 the write end of a pipe sits at that fd in the child and everything
// written to it is captured. Every other fd above 2 is closed at exec, so the child sees exactly
// 0, 1, 2 and the status fd.
// `drop_setpcap`: start the launcher without CAP_SETPCAP (bounding, effective, permitted), as a
// container that drops only that capability would.
// `extra`: open fds of this process placed at the given numbers in the child.
struct fd_at {
    int fd;
    int number;
};
run_result run(const std::vector<std::string>& args, int status_fd = -1, bool drop_setpcap = false,
               std::vector<fd_at> extra = {}) {
    std::vector<std::string> full = {cordon::test::launcher_path().string()};
    full.insert(full.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : full)
        argv.push_back(arg.data());
    argv.push_back(nullptr);

    run_result result;
    int out_pipe[2], err_pipe[2], status_pipe[2] = {-1, -1};
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
        (status_fd >= 0 && ::pipe2(status_pipe, O_CLOEXEC) != 0)) {
        ADD_FAILURE() << "pipe2: " << std::strerror(errno);
        return result;
    }
    const int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

    const pid_t pid = ::fork();
    if (pid == 0) {
        // Child: async-signal-safe calls only. dup2 clears CLOEXEC on its target.
        ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        if (::dup2(dev_null, 0) < 0 || ::dup2(out_pipe[1], 1) < 0 || ::dup2(err_pipe[1], 2) < 0) {
            ::_exit(120);
        }
        for (const fd_at& mapping : extra) {
            // dup2 onto itself keeps close-on-exec: clear it instead.
            if (mapping.fd == mapping.number) {
                if (::fcntl(mapping.fd, F_SETFD, 0) < 0) ::_exit(125);
            } else if (::dup2(mapping.fd, mapping.number) < 0) {
                ::_exit(125);
            }
        }
        if (status_fd >= 0) {
            if (status_pipe[1] == status_fd) {
                ::fcntl(status_fd, F_SETFD, 0);
            } else if (::dup2(status_pipe[1], status_fd) < 0) {
                ::_exit(121);
            }
        }
        if (drop_setpcap) {
            __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
            __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
            if (::prctl(PR_CAPBSET_DROP, CAP_SETPCAP, 0L, 0L, 0L) != 0 ||
                ::syscall(SYS_capget, &header, data) != 0) {
                ::_exit(123);
            }
            const unsigned int bit = 1U << CAP_SETPCAP;
            data[0].effective &= ~bit;
            data[0].permitted &= ~bit;
            data[0].inheritable &= ~bit;
            if (::syscall(SYS_capset, &header, data) != 0) ::_exit(124);
        }
        ::execv(argv[0], argv.data());
        ::_exit(122);
    }
    ::close(dev_null);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (status_fd >= 0) ::close(status_pipe[1]);
    if (pid < 0) {
        ADD_FAILURE() << "fork: " << std::strerror(errno);
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        if (status_fd >= 0) ::close(status_pipe[0]);
        return result;
    }
    drain(out_pipe[0], err_pipe[0], status_pipe[0], result);
    int wait_status = 0;
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(wait_status)) result.exit_code = WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) result.signal = WTERMSIG(wait_status);
    return result;
}

// Every record on the status channel, in order.
std::vector<launcher_status_record> parse_records(const std::string& bytes) {
    std::vector<launcher_status_record> out;
    if (bytes.size() % sizeof(launcher_status_record) != 0) {
        ADD_FAILURE() << "status channel holds " << bytes.size() << " bytes: not whole records";
        return out;
    }
    for (std::size_t at = 0; at < bytes.size(); at += sizeof(launcher_status_record)) {
        launcher_status_record record;
        std::memcpy(&record, bytes.data() + at, sizeof(record));
        out.push_back(record);
    }
    return out;
}

// The one failure record a launcher that failed before exec writes.
std::optional<launcher_status_record> parse_record(const std::string& bytes) {
    const auto records = parse_records(bytes);
    if (records.empty()) return std::nullopt;
    return records.back();
}

bool is_started(const launcher_status_record& record) {
    return record.magic == cordon::sandbox::launcher_status_magic &&
           record.kind == static_cast<std::uint32_t>(launcher_record_kind::started);
}

// NAME=value entries, each NUL-terminated, as cordon writes the command's environment.
std::string env_block(std::initializer_list<std::string_view> entries) {
    std::string out;
    for (std::string_view entry : entries) {
        out += entry;
        out += '\0';
    }
    return out;
}

// A memfd holding `block`, offset at its end as a writer leaves it.
int memfd_with(const std::string& block) {
    const int fd = ::memfd_create("cordon-test-env", MFD_CLOEXEC);
    if (fd < 0 || ::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) {
        ADD_FAILURE() << "memfd: " << std::strerror(errno);
    }
    return fd;
}

// Exit 125, nothing on stdout, and `line` reported exactly once: in the failure record when
// the run had a status fd that could take it whole (stderr then holds nothing of the
// launcher's), else as one line on stderr.
void expect_launcher_failure(const run_result& result, const std::string& line) {
    EXPECT_EQ(result.exit_code, 125);
    EXPECT_EQ(result.out, "");
    const auto record = parse_record(result.status);
    if (record && line.size() < sizeof(record->message)) {
        EXPECT_EQ(std::string(record->message), line);
        EXPECT_EQ(result.err, "");
    } else {
        EXPECT_EQ(result.err, line + "\n");
    }
}

void expect_record(const run_result& result, launcher_stage stage, int error) {
    const auto record = parse_record(result.status);
    ASSERT_TRUE(record.has_value()) << "status fd held " << result.status.size() << " bytes";
    EXPECT_EQ(record->magic, cordon::sandbox::launcher_status_magic);
    EXPECT_EQ(record->kind, static_cast<std::uint32_t>(launcher_record_kind::failure));
    EXPECT_EQ(record->stage, static_cast<std::uint32_t>(stage));
    EXPECT_EQ(record->error, error);
    ASSERT_EQ(record->message[sizeof(record->message) - 1], '\0');
}

class LauncherTest : public ::testing::Test {
protected:
    // A command that proves it ran by creating marker_.
    std::vector<std::string> marker_command() const {
        return {"--", "sh", "-c", "touch '" + marker_.string() + "'"};
    }

    cordon::test::temp_dir scratch_{"/tmp", "cordon-launcher-test-"};
    fs::path dir_ = scratch_.path();
    fs::path marker_ = dir_ / "ran";
};

// Tests that need the launcher to actually confine something.
class ConfinedLauncherTest : public LauncherTest {
protected:
    void SetUp() override {
        abi_ = landlock::query_abi();
        if (abi_ < 0) CORDON_SKIP_OR_FAIL("Landlock is not available on this kernel");
    }

    // What a successful launch leaves on stderr: nothing, or the notice on an older ABI.
    std::string notice() const { return abi_ < landlock::full_filesystem_abi ? notice_line : ""; }

    int abi_ = 0;
};

// --- usage errors: before any Landlock call, so they hold on every kernel -----------------------

TEST_F(LauncherTest, UsageErrorsExit125WithOneLineAndNeverRunTheCommand) {
    const std::string touch = "touch '" + marker_.string() + "'";
    struct usage_case {
        std::vector<std::string> args;
        std::string line;
    };
    const std::string usage = "cordon-landlock: usage error: ";
    const usage_case cases[] = {
        {{"--probe", "--", "sh", "-c", touch},
         usage + "--probe takes no arguments but --status-fd, --env-fd and --abi-cap"},
        {{"--ro", "/", "--probe", "--", "sh", "-c", touch},
         usage + "--probe takes no arguments but --status-fd, --env-fd and --abi-cap"},
        {{"--read-root", "--probe"},
         usage + "--probe takes no arguments but --status-fd, --env-fd and --abi-cap"},
        {{"--ro-try"}, usage + "--ro-try requires a path"},
        {{"--rw-try", "--", "true"}, usage + "--rw-try requires a path"},
        {{"--rw-fd", "x", "--", "true"}, usage + "--rw-fd requires a file descriptor number"},
        {{"--ro-fd"}, usage + "--ro-fd requires a file descriptor number"},
        {{"--env-fd", "-4", "--", "true"}, usage + "--env-fd requires a file descriptor number"},
        {{"--ro"}, usage + "--ro requires a path"},
        {{"--rw"}, usage + "--rw requires a path"},
        {{"--ro", "--", "sh", "-c", touch}, usage + "--ro requires a path"},
        {{"--ro", "/", "--rw", "--", "sh", "-c", touch}, usage + "--rw requires a path"},
        {{"--status-fd"}, usage + "--status-fd requires a file descriptor number"},
        {{"--status-fd", "abc", "--", "sh", "-c", touch},
         usage + "--status-fd requires a file descriptor number"},
        {{"--status-fd", "-1", "--", "sh", "-c", touch},
         usage + "--status-fd requires a file descriptor number"},
        {{"--status-fd", "", "--", "sh", "-c", touch},
         usage + "--status-fd requires a file descriptor number"},
        {{"--status-fd", "99999999999", "--", "sh", "-c", touch},
         usage + "--status-fd requires a file descriptor number"},
        {{"--bogus", "--", "sh", "-c", touch}, usage + "unknown argument: --bogus"},
        {{"sh", "-c", touch}, usage + "unknown argument: sh"},
        {{}, usage + "missing `-- <argv>...` command"},
        {{"--ro", "/"}, usage + "missing `-- <argv>...` command"},
        {{"--ro", "/", "--"}, usage + "missing `-- <argv>...` command"},
        {{"--watch-cgroup", "--", "sh", "-c", touch}, usage + "--watch-cgroup takes no arguments"},
        {{"--probe", "--watch-cgroup"}, usage + "--watch-cgroup takes no arguments"},
        {{"--watch-cgroup"}, usage + "--watch-cgroup needs the read end of a pipe on fd 3"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(testing::PrintToString(c.args));
        const run_result result = run(c.args);
        expect_launcher_failure(result, c.line);
        EXPECT_FALSE(fs::exists(marker_));
    }
}

TEST_F(LauncherTest, TooManyGrantsIsAUsageError) {
    std::vector<std::string> args;
    for (int i = 0; i < 1000; ++i) {
        args.push_back("--ro");
        args.push_back("/");
    }
    for (const auto& arg : marker_command())
        args.push_back(arg);
    const run_result result = run(args);
    EXPECT_EQ(result.exit_code, 125);
    EXPECT_EQ(result.out, "");
    EXPECT_TRUE(result.err.starts_with("cordon-landlock: usage error: too many grants (limit "))
        << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1);
    EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(LauncherTest, UsageErrorAfterStatusFdAlsoWritesTheRecord) {
    std::vector<std::string> args = {"--status-fd", std::to_string(status_fd_number), "--bogus"};
    for (const auto& arg : marker_command())
        args.push_back(arg);
    const run_result result = run(args, status_fd_number);
    expect_launcher_failure(result, "cordon-landlock: usage error: unknown argument: --bogus");
    expect_record(result, launcher_stage::usage, 0);
    EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(LauncherTest, UsageErrorBeforeStatusFdOnlyGoesToStderr) {
    std::vector<std::string> args = {"--bogus", "--status-fd", std::to_string(status_fd_number)};
    for (const auto& arg : marker_command())
        args.push_back(arg);
    const run_result result = run(args, status_fd_number);
    expect_launcher_failure(result, "cordon-landlock: usage error: unknown argument: --bogus");
    EXPECT_EQ(result.status, "");
    EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(LauncherTest, UnusableStatusFdIsAStatusFdError) {
    // The helper closes every fd above 2 at exec, so 77 is not open in the launcher.
    std::vector<std::string> args = {"--status-fd", "77"};
    for (const auto& arg : marker_command())
        args.push_back(arg);
    const run_result result = run(args);
    expect_launcher_failure(
        result, std::string("cordon-landlock: status fd error: ") + std::strerror(EBADF));
    EXPECT_FALSE(fs::exists(marker_));
}

// --- probe ---------------------------------------------------------------------------------------

TEST_F(LauncherTest, ProbeReportsEnforcementAndTheRawAbi) {
    const int abi = landlock::query_abi();
    const run_result result = run({"--probe"});
    if (abi < 0) {
        // No Landlock: the probe is the availability signal, so it must say so and exit 125.
        EXPECT_EQ(result.exit_code, 125);
        EXPECT_EQ(result.out, "");
        EXPECT_TRUE(result.err.starts_with("cordon-landlock: landlock is ")) << result.err;
        CORDON_SKIP_OR_FAIL("Landlock is not available on this kernel");
    }
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.err, "");
    const std::string level = abi >= landlock::full_filesystem_abi
                                  ? "landlock: fully enforced\n"
                                  : "landlock: partially enforced (older ABI)\n";
    EXPECT_EQ(result.out, level + "abi: " + std::to_string(abi) + "\n");
}

// The answer the provider reads is a record on the status fd, not the text for people.
TEST_F(LauncherTest, ProbeAnswersOnTheStatusFd) {
    const int abi = landlock::query_abi();
    if (abi < 0) CORDON_SKIP_OR_FAIL("Landlock is not available on this kernel");
    const int env = memfd_with("");
    const run_result result =
        run({"--status-fd", std::to_string(status_fd_number), "--env-fd", "43", "--probe"},
            status_fd_number, false, {{env, 43}});
    ::close(env);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const auto records = parse_records(result.status);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].magic, cordon::sandbox::launcher_status_magic);
    EXPECT_EQ(records[0].kind, static_cast<std::uint32_t>(launcher_record_kind::probe));
    EXPECT_EQ(records[0].abi, abi);
}

// --- the cgroup host's watchdog (sandbox/launcher/watchdog.hpp)
// -----------------------------------

// The launcher forks the watchdog and exits 0 at once; the watchdog, in a session of its own and
// holding none of the caller's descriptors (this run's output pipes reached end-of-file), writes
// `1` to the file on fd 4 when the pipe on fd 3 has no writer left, and not before.
TEST_F(LauncherTest, TheWatchdogWritesTheKillFileOnceThePipeHasNoWriter) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "a non-dumpable watchdog's descriptors are root's to read";
    int alive[2];
    ASSERT_EQ(::pipe2(alive, O_CLOEXEC), 0);
    const fs::path kill_path = dir_ / "cgroup.kill";
    const int kill_file = ::open(kill_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(kill_file, 0);
    const int wrong_way = ::open(kill_path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(wrong_way, 0);
    const run_result refused = run({"--watch-cgroup"}, -1, false, {{alive[0], 3}, {wrong_way, 4}});
    ::close(wrong_way);
    expect_launcher_failure(
        refused,
        "cordon-landlock: usage error: --watch-cgroup needs a cgroup.kill open for "
        "writing on fd 4");

    const run_result started = run({"--watch-cgroup"}, -1, false, {{alive[0], 3}, {kill_file, 4}});
    ::close(alive[0]);
    ::close(kill_file);
    EXPECT_EQ(started.exit_code, 0) << started.err;
    EXPECT_EQ(started.out + started.err, "");
    // The watchdog: the process holding the kill file (non-dumpable: its descriptors are root's
    // to read).
    std::optional<pid_t> watchdog;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::error_code error;
        if (fs::read_symlink(entry.path() / "fd" / "4", error) == kill_path) {
            watchdog = static_cast<pid_t>(std::stol(name));
        }
    }
    struct closer {
        int fd;
        ~closer() {
            if (fd >= 0) ::close(fd);
        }
    } writer{alive[1]};
    ASSERT_TRUE(watchdog) << "no process holds " << kill_path;
    // Once it is blocked reading the pipe (read(2) on fd 3, /proc/PID/syscall), with the writer
    // still open, it has written nothing, and in a session of its own.
    const fs::path syscall = "/proc/" + std::to_string(*watchdog) + "/syscall";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!cordon::test::read_file(syscall).starts_with("0 0x3 ") &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_TRUE(cordon::test::read_file(syscall).starts_with("0 0x3 "))
        << cordon::test::read_file(syscall);
    EXPECT_EQ(::getsid(*watchdog), *watchdog) << "the watchdog has no session of its own";
    EXPECT_TRUE(fs::is_empty(kill_path)) << "written while the pipe still had a writer";

    ::close(std::exchange(writer.fd, -1));
    EXPECT_TRUE(cordon::test::wait_dead(*watchdog, std::chrono::seconds(10)));
    std::ifstream written(kill_path);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(written), {}), "1");
}

// --- confinement ---------------------------------------------------------------------------------

TEST_F(ConfinedLauncherTest, ConfinedEchoRunsWithCleanStderr) {
    const run_result result = run({"--ro", "/", "--rw", "/dev/null", "--", "echo", "hello"});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "hello\n");
    EXPECT_EQ(result.err, notice());  // empty from ABI 5 on
}

// A second layer stacked on the filesystem ruleset (the scopes of --report-ending, the TCP rules of
// --deny-sockets) leaves links and renames between directories of a writable tree to the
// filesystem layer: the kernel denies reparenting in every layer that does not grant it, and
// `git push` to a local repository, `mv a/f b/` or a package manager's moves then failed with
// EXDEV. A move out of the writable tree stays refused.
TEST_F(ConfinedLauncherTest, ExtraLayersLeaveRenamesBetweenDirectoriesAlone) {
    if (abi_ < 2) GTEST_SKIP() << "reparenting is refused outright below Landlock ABI 2";
    const fs::path tree = dir_ / "tree";
    fs::create_directories(tree / "a");
    fs::create_directories(tree / "b");
    fs::create_directories(dir_ / "outside");
    const std::string script = "cd '" + tree.string() +
                               "' && echo x > a/f && ln a/f b/linked && mv a/f b/moved && "
                               "mkdir -p a/d && mv a/d b/ && echo RENAMED; mv b/moved '" +
                               (dir_ / "outside").string() + "/' 2>/dev/null && echo ESCAPED; true";
    for (const std::vector<std::string>& layer : {std::vector<std::string>{"--report-ending"},
                                                  std::vector<std::string>{"--deny-sockets"}}) {
        SCOPED_TRACE(layer.front());
        if (layer.front() == "--deny-sockets" && abi_ < landlock::network_abi) continue;
        fs::remove_all(tree / "b");
        fs::create_directories(tree / "b");
        std::vector<std::string> args{"--ro", "/", "--rw", "/dev/null", "--rw", tree.string()};
        args.insert(args.end(), layer.begin(), layer.end());
        args.insert(args.end(), {"--", "sh", "-c", script});
        const run_result result = run(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.out, "RENAMED\n") << result.err;
        EXPECT_TRUE(fs::exists(tree / "b" / "moved"));
        EXPECT_TRUE(fs::is_directory(tree / "b" / "d"));
        EXPECT_FALSE(fs::exists(dir_ / "outside" / "moved"));
    }
}

TEST_F(ConfinedLauncherTest, ExitCodePassesThrough) {
    const run_result result = run({"--ro", "/", "--", "sh", "-c", "exit 7"});
    EXPECT_EQ(result.exit_code, 7);
    EXPECT_EQ(result.err, notice());
}

TEST_F(ConfinedLauncherTest, CommandExit125PassesThroughAfterAStartedRecord) {
    const run_result result = run({"--status-fd", std::to_string(status_fd_number), "--ro", "/",
                                   "--", "sh", "-c", "exit 125"},
                                  status_fd_number);
    EXPECT_EQ(result.exit_code, 125);
    EXPECT_EQ(result.err, notice());
    const auto records = parse_records(result.status);
    ASSERT_EQ(records.size(), 1u) << "a command's own 125 is not a launcher failure";
    EXPECT_TRUE(is_started(records[0]));
}

// Silence proves nothing: the launcher says that it is about to exec, and the command never
// holds the fd to say anything after that.
TEST_F(ConfinedLauncherTest, ASuccessfulExecLeavesExactlyOneStartedRecord) {
    const run_result result =
        run({"--status-fd", std::to_string(status_fd_number), "--ro", "/", "--", "sh", "-c",
             "(echo forged >&42) 2>/dev/null; ls /proc/self/fd"},
            status_fd_number);
    EXPECT_EQ(result.exit_code, 0);
    const auto records = parse_records(result.status);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_TRUE(is_started(records[0]));
    EXPECT_EQ(result.out.find("42"), std::string::npos) << result.out;
}

TEST_F(ConfinedLauncherTest, CommandSeesNoLauncherFds) {
    // ls opens the directory as fd 3 itself; the status fd, the environment and grant fds, an fd
    // a runner before the launcher passed down, and the ruleset/path fds must all be gone.
    const int env = memfd_with(env_block({"PATH=/usr/bin:/bin"}));
    const int workspace = ::open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    const int stray = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const run_result result =
        run({"--status-fd", std::to_string(status_fd_number), "--env-fd", "44", "--ro", "/",
             "--rw-fd", "45", "--", "ls", "/proc/self/fd"},
            status_fd_number, false, {{env, 44}, {workspace, 45}, {stray, 46}});
    ::close(env);
    ::close(workspace);
    ::close(stray);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "0\n1\n2\n3\n");
}

// With --env-fd the command gets exactly the block, whatever the launcher's own environment holds
// (cordon starts every runner with an empty one).
TEST_F(ConfinedLauncherTest, TheCommandEnvironmentComesFromTheEnvFd) {
    ::setenv("CORDON_LAUNCHER_OWN", "not for the command", 1);
    // The empty entry is skipped.
    const int env = memfd_with(env_block({"CORDON_A=one two", "PATH=/usr/bin:/bin", ""}));
    const run_result result =
        run({"--env-fd", "44", "--ro", "/", "--", "sh", "-c",
             "printf '%s|%s|' \"$CORDON_A\" \"$CORDON_LAUNCHER_OWN\"; env | grep -c CORDON_"},
            -1, false, {{env, 44}});
    ::unsetenv("CORDON_LAUNCHER_OWN");
    ::close(env);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "one two||1\n");
}

TEST_F(ConfinedLauncherTest, AnEnvironmentBlockThatIsNotNulTerminatedFailsClosed) {
    const int env = memfd_with(env_block({"A=1"}) + "B=2");
    std::vector<std::string> args = {
        "--status-fd", std::to_string(status_fd_number), "--env-fd", "44", "--ro", "/"};
    for (const auto& arg : marker_command())
        args.push_back(arg);
    const run_result result = run(args, status_fd_number, false, {{env, 44}});
    ::close(env);
    expect_launcher_failure(
        result, "cordon-landlock: cannot read the environment: the block is not NUL-terminated");
    expect_record(result, launcher_stage::environment, EINVAL);
    EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(ConfinedLauncherTest, EnvironmentPassesUnchanged) {
    ::setenv("CORDON_LAUNCHER_TEST_VALUE", "kept as is", 1);
    const run_result result =
        run({"--ro", "/", "--", "sh", "-c", "printf %s \"$CORDON_LAUNCHER_TEST_VALUE\""});
    ::unsetenv("CORDON_LAUNCHER_TEST_VALUE");
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "kept as is");
}

TEST_F(ConfinedLauncherTest, WriteOutsideGrantsIsDenied) {
    const fs::path target = dir_ / "outside";
    const run_result result = run(
        {"--ro", "/", "--rw", "/dev/null", "--", "sh", "-c", "echo x > '" + target.string() + "'"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("Permission denied"), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(target));
}

TEST_F(ConfinedLauncherTest, WriteUnderRwGrantLands) {
    const fs::path target = dir_ / "inside";
    const run_result result = run({"--ro", "/", "--rw", dir_.string(), "--", "sh", "-c",
                                   "echo x > '" + target.string() + "'"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(cordon::test::read_file(target), "x\n");
}

TEST_F(ConfinedLauncherTest, RwGrantOnAFileCoversThatFileOnly) {
    const fs::path granted = dir_ / "granted";
    const fs::path sibling = dir_ / "sibling";
    std::ofstream(granted) << "old\n";
    const run_result result =
        run({"--ro", "/", "--rw", granted.string(), "--", "sh", "-c",
             "echo new > '" + granted.string() + "' && echo x > '" + sibling.string() + "'"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("Permission denied"), std::string::npos) << result.err;
    EXPECT_EQ(cordon::test::read_file(granted), "new\n");
    EXPECT_FALSE(fs::exists(sibling));
}

TEST_F(ConfinedLauncherTest, RwDevNullKeepsRedirectsToDevNullWorking) {
    const run_result result =
        run({"--ro", "/", "--rw", "/dev/null", "--", "sh", "-c", "echo x > /dev/null && echo ok"});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "ok\n");
    EXPECT_EQ(result.err, notice());
}

TEST_F(ConfinedLauncherTest, DevNullGrantDoesNotOpenDevShm) {
    ASSERT_TRUE(fs::is_directory("/dev/shm"));
    const fs::path target = "/dev/shm/cordon-launcher-test-" + std::to_string(::getpid());
    const run_result result = run(
        {"--ro", "/", "--rw", "/dev/null", "--", "sh", "-c", "echo x > '" + target.string() + "'"});
    const bool created = fs::exists(target);
    if (created) fs::remove(target);
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("Permission denied"), std::string::npos) << result.err;
    EXPECT_FALSE(created);
}

TEST_F(ConfinedLauncherTest, NestedChildrenInheritTheConfinement) {
    const fs::path denied = dir_ / "ro" / "f";
    const fs::path allowed = dir_ / "rw" / "f";
    fs::create_directory(dir_ / "ro");
    fs::create_directory(dir_ / "rw");
    const std::string script = "sh -c \"echo x > '" + allowed.string() + "'\"; sh -c \"echo x > '" +
                               denied.string() + "'\"";
    const run_result result =
        run({"--ro", "/", "--rw", (dir_ / "rw").string(), "--", "sh", "-c", script});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("Permission denied"), std::string::npos) << result.err;
    EXPECT_EQ(cordon::test::read_file(allowed), "x\n");
    EXPECT_FALSE(fs::exists(denied));
}

TEST_F(ConfinedLauncherTest, UnopenableGrantPathFailsClosed) {
    const fs::path missing = dir_ / "missing";
    std::vector<std::string> args = {
        "--status-fd", std::to_string(status_fd_number), "--ro", "/", "--rw", missing.string()};
    for (const auto& arg : marker_command())
        args.push_back(arg);
    const run_result result = run(args, status_fd_number);
    expect_launcher_failure(result, "cordon-landlock: cannot open rule path: " + missing.string() +
                                        ": " + std::strerror(ENOENT));
    expect_record(result, launcher_stage::open_rule_path, ENOENT);
    EXPECT_FALSE(fs::exists(marker_));
}

// The user namespace's limits are written through --quota-fd, or the command does not run: a
// directory without the limit files bounds nothing.
TEST_F(ConfinedLauncherTest, QuotaLimitsThatCannotBeWrittenFailClosed) {
    const int dir = ::open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir, 0) << std::strerror(errno);
    std::vector<std::string> args = {
        "--status-fd", std::to_string(status_fd_number), "--ro", "/", "--quota-fd", "60"};
    for (const auto& arg : marker_command())
        args.push_back(arg);
    const run_result result = run(args, status_fd_number, false, {{dir, 60}});
    ::close(dir);
    expect_launcher_failure(
        result,
        std::string("cordon-landlock: cannot bound the kernel quotas: ") + std::strerror(ENOENT));
    expect_record(result, launcher_stage::quotas, ENOENT);
    EXPECT_FALSE(fs::exists(marker_));
}

// The rlimits of the quotas the kernel counts per uid against the counting process's rlimit.
TEST_F(ConfinedLauncherTest, TheRunsPerUidRlimitsAreLowered) {
    const run_result result = run({"--ro", "/", "--", "cat", "/proc/self/limits"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::pair<int, const char*> names[] = {{RLIMIT_SIGPENDING, "Max pending signals"},
                                                 {RLIMIT_MSGQUEUE, "Max msgqueue size"},
                                                 {RLIMIT_MEMLOCK, "Max locked memory"}};
    for (const auto& limit : cordon::sandbox::quotas::resource_limits) {
        const char* name = nullptr;
        for (const auto& [resource, text] : names) {
            if (resource == limit.resource) name = text;
        }
        ASSERT_NE(name, nullptr) << "no /proc/self/limits name for resource " << limit.resource;
        const auto at = result.out.find(name);
        ASSERT_NE(at, std::string::npos) << name << "\n" << result.out;
        std::istringstream line(result.out.substr(at + std::strlen(name)));
        std::string soft;
        std::string hard;
        line >> soft >> hard;
        SCOPED_TRACE(name);
        ASSERT_NE(soft, "unlimited");
        ASSERT_NE(hard, "unlimited");
        EXPECT_LE(std::stoull(soft), limit.value);
        EXPECT_LE(std::stoull(hard), limit.value);
    }
}

TEST_F(ConfinedLauncherTest, RoGrantsAreAppliedBeforeRwGrants) {
    // Both paths are missing; the diagnostic names the --ro one although it came second.
    const fs::path rw = dir_ / "missing-rw";
    const fs::path ro = dir_ / "missing-ro";
    std::vector<std::string> args = {"--rw", rw.string(), "--ro", ro.string()};
    for (const auto& arg : marker_command())
        args.push_back(arg);
    const run_result result = run(args);
    expect_launcher_failure(result, "cordon-landlock: cannot open rule path: " + ro.string() +
                                        ": " + std::strerror(ENOENT));
    EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(ConfinedLauncherTest, ExecFailureIsStageExec) {
    for (const std::string program : {"/nonexistent/cordon-program", "cordon-no-such-program"}) {
        SCOPED_TRACE(program);
        const run_result result = run(
            {"--status-fd", std::to_string(status_fd_number), "--ro", "/", "--", program, "arg"},
            status_fd_number);
        // On an older ABI the notice precedes the fatal line; the record holds the fatal one.
        const std::string line =
            "cordon-landlock: exec failed: " + program + ": " + std::strerror(ENOENT);
        EXPECT_EQ(result.exit_code, 125);
        EXPECT_EQ(result.err, notice()) << "the record carries the line";
        // `started`, then the exec failure: confinement was in place, the program was missing.
        const auto records = parse_records(result.status);
        ASSERT_EQ(records.size(), 2u);
        EXPECT_TRUE(is_started(records[0]));
        const auto record = parse_record(result.status);
        ASSERT_TRUE(record.has_value());
        EXPECT_EQ(record->kind, static_cast<std::uint32_t>(launcher_record_kind::failure));
        EXPECT_EQ(record->stage, static_cast<std::uint32_t>(launcher_stage::exec));
        EXPECT_EQ(record->error, ENOENT);
        EXPECT_EQ(std::string(record->message), line);
    }
}

TEST_F(ConfinedLauncherTest, LongMessageIsTruncatedInTheRecord) {
    // A grant path longer than the record's message: the record has a prefix, so stderr has the
    // line whole.
    const std::string long_path =
        dir_.string() + "/" + std::string(250, 'a') + "/" + std::string(250, 'b') + "/missing";
    const run_result result =
        run({"--status-fd", std::to_string(status_fd_number), "--ro", long_path, "--", "true"},
            status_fd_number);
    const std::string line =
        "cordon-landlock: cannot open rule path: " + long_path + ": " + std::strerror(ENOENT);
    expect_launcher_failure(result, line);
    const auto record = parse_record(result.status);
    ASSERT_TRUE(record.has_value());
    EXPECT_EQ(record->stage, static_cast<std::uint32_t>(launcher_stage::open_rule_path));
    EXPECT_EQ(std::string(record->message), line.substr(0, sizeof(record->message) - 1));
}

// Root without CAP_SETPCAP cannot shrink its bounding set, but must still lose every capability
// it holds: the launcher empties the other sets and no_new_privs keeps exec from restoring them.
TEST_F(ConfinedLauncherTest, RootWithoutSetpcapStillHoldsNoCapabilities) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs uid 0 to start with capabilities";
    const run_result result = run({"--ro", "/", "--rw", "/dev/null", "--", "sh", "-c",
                                   "grep -E '^Cap(Eff|Prm|Inh|Amb):' /proc/self/status"},
                                  -1, true);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("CapEff:\t0000000000000000"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("CapPrm:\t0000000000000000"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("CapAmb:\t0000000000000000"), std::string::npos) << result.out;
}

// ---- what cordon's profiles ask of the launcher ----------------------------------------------

// --read-root reads everything but /dev; devices come node by node. A terminal, a disk or the
// kernel log is never readable just because reads are allowed.
TEST_F(ConfinedLauncherTest, ReadRootReadsTheFilesystemButNoDevice) {
    const run_result listing = run({"--read-root", "--rw", "/dev/null", "--", "sh", "-c",
                                    "ls / >/dev/null && cat /etc/hostname >/dev/null && ls /dev "
                                    ">/dev/null 2>&1; echo $?"});
    EXPECT_EQ(listing.exit_code, 0) << listing.err;
    EXPECT_EQ(listing.out, "0\n") << "reading files and listing directories, /dev included";
    for (const char* device : {"/dev/zero", "/dev/kmsg", "/dev/tty0", "/dev/vda", "/dev/urandom"}) {
        if (!fs::exists(device)) continue;
        SCOPED_TRACE(device);
        const run_result result = run({"--read-root", "--", "head", "-c", "1", device});
        EXPECT_NE(result.exit_code, 0);
        EXPECT_NE(result.err.find("Permission denied"), std::string::npos) << result.err;
    }
    const run_result granted =
        run({"--read-root", "--ro-try", "/dev/urandom", "--", "head", "-c", "1", "/dev/urandom"});
    EXPECT_EQ(granted.exit_code, 0) << granted.err;
    EXPECT_EQ(granted.out.size(), 1u);
}

TEST_F(ConfinedLauncherTest, AMissingTryGrantIsSkippedAMissingGrantFails) {
    const fs::path missing = dir_ / "missing";
    const run_result skipped =
        run({"--read-root", "--rw-try", missing.string(), "--", "echo", "ran"});
    EXPECT_EQ(skipped.exit_code, 0) << skipped.err;
    EXPECT_EQ(skipped.out, "ran\n");
    const run_result failed = run({"--read-root", "--rw", missing.string(), "--", "echo", "ran"});
    EXPECT_EQ(failed.exit_code, 125);
    EXPECT_EQ(failed.out, "");
}

// A grant path is opened without following symlinks: a symlink planted in its place (or above
// it) fails the run instead of making its target writable.
TEST_F(ConfinedLauncherTest, GrantPathsNeverFollowASymlink) {
    fs::create_directory(dir_ / "target");
    fs::create_directory_symlink(dir_ / "target", dir_ / "link");
    const fs::path through = dir_ / "link";
    std::vector<std::string> args = {"--read-root", "--rw", through.string()};
    for (const auto& arg : marker_command())
        args.push_back(arg);
    const run_result result = run(args);
    expect_launcher_failure(result, "cordon-landlock: cannot open rule path: " + through.string() +
                                        ": " + std::strerror(ELOOP));
    EXPECT_FALSE(fs::exists(marker_));
}

// --rw-fd grants the directory the caller opened, wherever its path points by now.
TEST_F(ConfinedLauncherTest, RwFdGrantsTheOpenedDirectoryEvenAfterARename) {
    fs::create_directory(dir_ / "ws");
    const int workspace = ::open((dir_ / "ws").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(workspace, 0);
    fs::rename(dir_ / "ws", dir_ / "moved");
    fs::create_directory(dir_ / "ws");  // an impostor at the old path
    const run_result result = run({"--read-root", "--rw-fd", "45", "--", "sh", "-c",
                                   "echo a > '" + (dir_ / "moved" / "f").string() +
                                       "'; echo b > '" + (dir_ / "ws" / "f").string() + "'"},
                                  -1, false, {{workspace, 45}});
    ::close(workspace);
    EXPECT_NE(result.exit_code, 0);
    EXPECT_EQ(cordon::test::read_file(dir_ / "moved" / "f"), "a\n");
    EXPECT_FALSE(fs::exists(dir_ / "ws" / "f")) << "the impostor became writable";
}

// From ABI 6 the command cannot signal anything outside its own sandbox: not this test process
// (its parent), not cordon, not the agent.
TEST_F(ConfinedLauncherTest, SignalsAreScopedToTheSandbox) {
    if (abi_ < landlock::scopes_abi) CORDON_SKIP_OR_FAIL("Landlock ABI < 6 has no signal scope");
    const run_result result =
        run({"--read-root", "--rw", "/dev/null", "--", "sh", "-c",
             "kill -0 $PPID; echo parent=$?; sleep 5 & kill -0 $!; echo child=$?; kill $!"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "parent=1\nchild=0\n");
    EXPECT_NE(result.err.find("Operation not permitted"), std::string::npos) << result.err;
}

// The seccomp filter holds in every mode: no nested user namespace (capabilities again) and no
// clone3 (CLONE_INTO_CGROUP).
TEST_F(ConfinedLauncherTest, NoUserNamespaceInAnyMode) {
    for (const bool read_only : {false, true}) {
        SCOPED_TRACE(read_only ? "read-only" : "workspace-write");
        std::vector<std::string> args = {"--read-root", "--rw", dir_.string()};
        if (read_only) args = {"--deny-metadata", "--read-root"};
        for (const char* arg : {"--", "sh", "-c", "unshare -Ur true; echo $?"}) {
            args.emplace_back(arg);
        }
        const run_result result = run(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.out, "1\n") << result.err;
    }
}

// Without Landlock (--no-landlock, for a kernel that lacks it under bwrap) the launcher still
// drops capabilities, installs the filter, reads the environment and reports `started`.
TEST_F(LauncherTest, WithoutLandlockTheRestStillHolds) {
    const int env = memfd_with(env_block({"PATH=/usr/bin:/bin", "CORDON_B=b"}));
    const run_result result = run({"--status-fd", std::to_string(status_fd_number), "--env-fd",
                                   "44", "--no-landlock", "--", "sh", "-c",
                                   "echo $CORDON_B; unshare -Ur true || echo no-userns; grep "
                                   "CapEff /proc/self/status"},
                                  status_fd_number, false, {{env, 44}});
    ::close(env);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "b\nno-userns\nCapEff:\t0000000000000000\n");
    const auto records = parse_records(result.status);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_TRUE(is_started(records[0]));
}

// A root command must not leave a set-user-ID or set-group-ID program behind for local users.
TEST_F(ConfinedLauncherTest, SetIdBitsAreRefusedInEveryMode) {
    const fs::path program = dir_ / "program";
    fs::copy_file("/bin/true", program);
    const std::string script =
        "cd '" + dir_.string() +
        "' && chmod 755 program && echo plain; chmod u+s program || echo no-setuid; chmod g+s "
        "program || echo no-setgid; install -m 2755 program copy || echo no-install";
    const run_result result =
        run({"--read-root", "--rw", dir_.string(), "--rw", "/dev/null", "--", "sh", "-c", script});
    EXPECT_EQ(result.out, "plain\nno-setuid\nno-setgid\nno-install\n") << result.err;
    struct stat st {};
    ASSERT_EQ(::stat(program.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0U);
    if (::stat((dir_ / "copy").c_str(), &st) == 0) {
        EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0U);
    }
}

}  // namespace

// --- network deny without a network namespace ---------------------------------------------------

namespace {

// A TCP listener on the host's 127.0.0.1, non-blocking; closed at scope end.
struct loopback_listener {
    // With `reuse_port`, SO_REUSEPORT: a socket of the same uid may then join its port.
    explicit loopback_listener(bool reuse_port = false) {
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        const int one = 1;
        if (reuse_port) {
            EXPECT_EQ(::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one), 0);
        }
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof address;
        EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), size), 0);
        EXPECT_EQ(::listen(fd, 8), 0);
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
        port = std::to_string(ntohs(address.sin_port));
    }
    ~loopback_listener() { ::close(fd); }
    loopback_listener(const loopback_listener&) = delete;
    loopback_listener& operator=(const loopback_listener&) = delete;
    // A connection is pending (the command has ended: loopback connects complete within it).
    [[nodiscard]] bool reached() const {
        const int accepted = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (accepted >= 0) ::close(accepted);
        return accepted >= 0;
    }
    int fd = -1;
    std::string port;
};

// Where cordon cannot make a network namespace (no CAP_SYS_ADMIN), the host's network stays the
// command's: the filter refuses socket() of every family but AF_UNIX, and socket(AF_UNIX) too
// unless a socket is listed. Forced here with the flags cordon gives in that case.
TEST_F(ConfinedLauncherTest, WithoutANetworkNamespaceTheFilterRefusesEverySocket) {
    loopback_listener host;
    const auto result =
        run({"--read-root", "--rw", "/dev/null", "--deny-sockets", "--deny-unix-sockets", "--",
             cordon::test::test_child_path().string(), "net-probe", host.port, host.port,
             (dir_ / "none.sock").string(), "cordon-launcher-test"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    // Of socketpair(), only AF_UNIX stream and seqpacket pairs: AF_UNIX makes a SOCK_RAW pair a
    // datagram one, which may send to any named socket.
    for (const std::string& line : std::vector<std::string>{
             "DENIED tcp-connect EPERM", "DENIED udp-send EPERM", "DENIED raw-socket EPERM",
             "DENIED packet-socket EPERM", "DENIED ping-send EPERM",
             "DENIED abstract-connect @cordon-launcher-test EPERM",
             "DENIED raw-pair-sendto " + (dir_ / "none.sock.dgram").string() + " EPERM",
             "DENIED tipc-pair EPERM", "ALLOWED socketpair",
             // Nothing the command can make needs a name: bind() is refused, so that no abstract
             // name of the host's is squatted.
             "DENIED pair-bind @cordon-launcher-test-squat EPERM"}) {
        EXPECT_NE(result.out.find(line), std::string::npos) << line << "\n" << result.out;
    }
    EXPECT_FALSE(host.reached());
}

// allow_local_binding without a namespace: TCP stream sockets are let through for listening,
// and Landlock's network rights (ABI 4) still refuse every connect; datagrams stay refused.
TEST_F(ConfinedLauncherTest, LocalBindingWithoutANamespaceStillRefusesConnects) {
    if (abi_ < landlock::network_abi) {
        CORDON_SKIP_OR_FAIL("Landlock ABI " + std::to_string(abi_) + " has no network rights");
    }
    loopback_listener host;
    const auto result =
        run({"--read-root", "--rw", "/dev/null", "--deny-sockets", "--local-binding", "--",
             cordon::test::test_child_path().string(), "net-probe", host.port, host.port,
             (dir_ / "none.sock").string(), "cordon-launcher-test"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    for (const char* line : {"DENIED tcp-connect EACCES", "DENIED udp-send EPERM",
                             "DENIED raw-socket EPERM", "DENIED unix-connect"}) {
        EXPECT_NE(result.out.find(line), std::string::npos) << line << "\n" << result.out;
    }
    EXPECT_FALSE(host.reached());
}

// allow_local_binding without a namespace binds the host's interfaces, where a host service of
// the same uid may listen with SO_REUSEPORT: joining its port would hand the command a share of
// that service's connections. The filter refuses the option, and the bind then finds the port
// taken.
TEST_F(ConfinedLauncherTest, LocalBindingWithoutANamespaceCannotJoinAHostListenersPort) {
    loopback_listener host(true);
    const auto result =
        run({"--read-root", "--rw", "/dev/null", "--deny-sockets", "--local-binding", "--",
             cordon::test::test_child_path().string(), "reuseport-listen", host.port});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("DENIED reuseport-option EPERM"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("DENIED reuseport-listen " + host.port + " EADDRINUSE"),
              std::string::npos)
        << result.out;
}

// As root, the launcher makes the namespace itself and brings its loopback up: the host's
// listener is out of reach, the namespace has lo alone, and lo holds 127.0.0.1 (only once up).
TEST_F(ConfinedLauncherTest, ItsOwnNetworkNamespaceHasALoopbackUp) {
    if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("making a network namespace needs CAP_SYS_ADMIN");
    loopback_listener host;
    const auto result =
        run({"--read-root", "--rw", "/dev/null", "--unshare-net", "--deny-unix-sockets",
             "--namespaced-sockets-only", "--", "bash", "-c",
             "(exec 3<>/dev/tcp/127.0.0.1/" + host.port +
                 ") 2>/dev/null && echo reached || echo refused; grep -c '' /proc/net/dev; "
                 "grep -c 127.0.0.1 /proc/net/fib_trie"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::istringstream lines(result.out);
    std::string verdict;
    int dev_lines = 0;
    int loopback_entries = 0;
    lines >> verdict >> dev_lines >> loopback_entries;
    EXPECT_EQ(verdict, "refused") << result.out;
    EXPECT_EQ(dev_lines, 3) << "two header lines and lo alone: " << result.out;
    EXPECT_GT(loopback_entries, 0) << "lo is down: " << result.out;
    EXPECT_FALSE(host.reached());
}

// --- the network proxy's forwarder (sandbox/launcher/forwarder.hpp) ------------------------------

constexpr int proxy_fd_number = 50;

// The proxy's side of the forwarder's socketpair: receives one connection's descriptor.
int receive_connection(int channel) {
    char byte = 0;
    iovec data{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    if (::recvmsg(channel, &message, MSG_CMSG_CLOEXEC) <= 0) return -1;
    const cmsghdr* header = CMSG_FIRSTHDR(&message);
    if (header == nullptr || header->cmsg_type != SCM_RIGHTS) return -1;
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(header), sizeof fd);
    return fd;
}

std::vector<std::string> forwarder_flags() {
    return {"--read-root",
            "--rw",
            "/dev/null",
            "--unshare-net",
            "--deny-unix-sockets",
            "--namespaced-sockets-only",
            "--report-ending",
            "--proxy-fd",
            std::to_string(proxy_fd_number),
            "--proxy-port",
            "3128"};
}

// Each connection the command makes to the port reaches the proxy's end as a descriptor, in
// order, and the bytes go both ways through it with nothing in between.
TEST_F(ConfinedLauncherTest, TheForwarderHandsEachConnectionToTheProxy) {
    if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("making a network namespace needs CAP_SYS_ADMIN");
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
    std::thread proxy([channel = pair[0]] {
        for (int i = 0; i < 2; ++i) {
            const int client = receive_connection(channel);
            if (client < 0) return;
            char buffer[64] = {};
            const ssize_t got = ::read(client, buffer, sizeof buffer - 1);
            const std::string answer =
                "proxy saw " + std::string(buffer, got > 0 ? static_cast<std::size_t>(got) : 0);
            (void)!::write(client, answer.data(), answer.size());
            ::close(client);
        }
    });
    std::vector<std::string> args = forwarder_flags();
    for (const char* arg :
         {"--", "bash", "-c",
          "for n in one two; do exec 3<>/dev/tcp/127.0.0.1/3128 || exit 9; printf \"$n\\n\" >&3; "
          "cat <&3; exec 3<&-; done"}) {
        args.emplace_back(arg);
    }
    const auto result = run(args, -1, false, {{pair[1], proxy_fd_number}});
    ::close(pair[1]);
    proxy.join();
    ::close(pair[0]);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "proxy saw one\nproxy saw two\n");
}

// Once the proxy's end is gone, the port refuses: a connection never waits for a proxy that
// will not come, and never goes anywhere else.
TEST_F(ConfinedLauncherTest, WithoutTheProxyTheForwarderRefusesEveryConnection) {
    if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("making a network namespace needs CAP_SYS_ADMIN");
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
    ::close(pair[0]);
    std::vector<std::string> args = forwarder_flags();
    for (const char* arg :
         {"--", "bash", "-c",
          "for n in 1 2 3; do if (exec 3<>/dev/tcp/127.0.0.1/3128 && echo x >&3 && "
          "read -t 10 line <&3) 2>/dev/null; then echo answered; else echo refused; fi; done"}) {
        args.emplace_back(arg);
    }
    const auto result = run(args, -1, false, {{pair[1], proxy_fd_number}});
    ::close(pair[1]);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "refused\nrefused\nrefused\n");
}

// The proxy's end, the forwarder's listener and its signalfd are the launcher's: the command
// sees none of them.
TEST_F(ConfinedLauncherTest, TheCommandSeesNoneOfTheForwardersFds) {
    if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("making a network namespace needs CAP_SYS_ADMIN");
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
    std::vector<std::string> args = forwarder_flags();
    for (const char* arg : {"--", "ls", "/proc/self/fd"})
        args.emplace_back(arg);
    const auto result = run(args, -1, false, {{pair[1], proxy_fd_number}});
    ::close(pair[0]);
    ::close(pair[1]);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "0\n1\n2\n3\n");
}

TEST_F(LauncherTest, TheProxyFlagsAreCheckedBeforeAnythingRuns) {
    const auto plain = [&](std::vector<std::string> flags) {
        const std::vector<std::string> command = marker_command();
        flags.insert(flags.end(), command.begin(), command.end());
        return run(flags, -1, false, {{0, proxy_fd_number}});
    };
    expect_launcher_failure(
        plain({"--proxy-fd", std::to_string(proxy_fd_number), "--proxy-port", "3128"}),
        "cordon-landlock: usage error: --proxy-fd and --proxy-port go together, with "
        "--report-ending");
    expect_launcher_failure(
        plain({"--report-ending", "--proxy-fd", std::to_string(proxy_fd_number)}),
        "cordon-landlock: usage error: --proxy-fd and --proxy-port go "
        "together, with --report-ending");
    expect_launcher_failure(plain({"--report-ending", "--proxy-port", "0"}),
                            "cordon-landlock: usage error: --proxy-port needs a port");
    expect_launcher_failure(plain({"--report-ending", "--proxy-port", "http"}),
                            "cordon-landlock: usage error: --proxy-port needs a port");
    // A descriptor that is not the proxy's socket (here /dev/null): refused, nothing runs.
    expect_launcher_failure(plain({"--report-ending", "--no-landlock", "--proxy-fd",
                                   std::to_string(proxy_fd_number), "--proxy-port", "3128"}),
                            "cordon-landlock: usage error: --proxy-fd " +
                                std::to_string(proxy_fd_number) + " is not the proxy's socket");
    EXPECT_FALSE(fs::exists(marker_));
}

}  // namespace
