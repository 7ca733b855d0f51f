// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one spawn path (runtime/spawn.hpp) with real processes, under both spawn methods: exit
// statuses, fd hygiene (every fd CLOEXEC; folly's checkFdLeak), exec failure as a value with no
// zombie, the child as session and group leader, stdin, and many threads
// spawning at once.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/child_and_clock.hpp"
#include "runtime/process.hpp"
#include "runtime/spawn.hpp"
#include "runtime_test_util.hpp"
#include "sandbox/backends.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using namespace std::chrono_literals;

using test::child;

process_spec spec_for(std::vector<std::string> argv, spawn_method method) {
    process_spec spec;
    spec.argv = std::move(argv);
    spec.env = test::child_env();
    spec.cwd = "/";
    spec.method = method;
    spec.timeout = 30s;  // a hung child fails the test instead of hanging it
    spec.plan = kill_plan::standard(500ms);
    return spec;
}

std::vector<int> parse_fd_list(const std::string& text) {
    std::vector<int> fds;
    for (const auto& line : test::split_lines(text))
        fds.push_back(std::stoi(line));
    std::sort(fds.begin(), fds.end());
    return fds;
}

// Reads `fd` to EOF, then reaps `pid`; returns {output, wait status}.
std::pair<std::string, int> drain_and_reap(int fd, pid_t pid) {
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return {out, status};
}

// A spawn_request whose stdout and stderr go to one pipe; stdin is /dev/null.
struct piped_request {
    unique_fd dev_null{::open("/dev/null", O_RDONLY | O_CLOEXEC)};
    pipe_pair out;
    spawn_request request;

    piped_request(std::vector<std::string> argv, spawn_method method) {
        EXPECT_TRUE(make_pipe(out));
        request.argv = std::move(argv);
        request.env = test::child_env();
        request.cwd = "/";
        request.method = method;
        request.fds = {{dev_null.get(), 0}, {out.write.get(), 1}, {out.write.get(), 2}};
    }
};

class SpawnTest : public ::testing::TestWithParam<spawn_method> {
protected:
    void SetUp() override { CORDON_SKIP_VFORK_UNDER_TSAN(GetParam()); }
    spawn_method method() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Methods, SpawnTest,
                         ::testing::Values(spawn_method::vfork, spawn_method::fork),
                         [](const auto& param_info) {
                             return test::method_name(param_info.param);
                         });

// --- exit statuses -------------------------------------------------------------------------------

TEST_P(SpawnTest, ExitCodeTable) {
    for (int code : {0, 1, 2, 42, 126, 255}) {
        SCOPED_TRACE("exit " + std::to_string(code));
        auto outcome = run_process(spec_for({child(), "exit", std::to_string(code)}, method()));
        ASSERT_FALSE(outcome.spawn_failure);
        EXPECT_EQ(outcome.exit_code, code);
        EXPECT_FALSE(outcome.signal);
        EXPECT_FALSE(outcome.timed_out);
        EXPECT_FALSE(outcome.aborted);
    }
}

TEST_P(SpawnTest, ShellReports126ForNonExecutableAnd127ForMissingCommand) {
    test::temp_dir dir;
    const auto script = dir / "not-executable.sh";
    test::write_file(script, "echo should not run\n",
                     std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);

    auto denied = run_process(spec_for({"bash", "-c", script.string()}, method()));
    ASSERT_FALSE(denied.spawn_failure);
    EXPECT_EQ(denied.exit_code, 126);
    EXPECT_EQ(denied.stdout_output.text, "");
    EXPECT_NE(denied.stderr_output.text.find("Permission denied"), std::string::npos)
        << denied.stderr_output.text;

    auto missing = run_process(spec_for({"bash", "-c", "no-such-command-cordon-xyz"}, method()));
    ASSERT_FALSE(missing.spawn_failure);
    EXPECT_EQ(missing.exit_code, 127);
    EXPECT_NE(missing.stderr_output.text.find("not found"), std::string::npos)
        << missing.stderr_output.text;
}

TEST_P(SpawnTest, KilledBySignalHasSignalAndNoExitCode) {
    for (int sig : {SIGKILL, SIGTERM}) {
        SCOPED_TRACE("kill-self " + std::to_string(sig));
        auto outcome = run_process(spec_for({child(), "kill-self", std::to_string(sig)}, method()));
        ASSERT_FALSE(outcome.spawn_failure);
        EXPECT_EQ(outcome.signal, sig);
        EXPECT_FALSE(outcome.exit_code);
        EXPECT_FALSE(outcome.timed_out);
        EXPECT_FALSE(outcome.aborted);
    }
}

// --- fds -----------------------------------------------------------------------------------------

// Fds this process opened without O_CLOEXEC (deliberately, as a careless library would) must not
// reach the child: it sees 0, 1, 2 and the status channel when one is configured, nothing else.
TEST_P(SpawnTest, ChildSeesOnlyTheFdsItWasGiven) {
    unique_fd leaked(::open("/dev/null", O_RDONLY));  // no O_CLOEXEC, on purpose
    ASSERT_TRUE(leaked);
    unique_fd leaked_dup(::dup(leaked.get()));  // dup() never sets FD_CLOEXEC
    ASSERT_TRUE(leaked_dup);
    ASSERT_EQ(::fcntl(leaked.get(), F_GETFD) & FD_CLOEXEC, 0);
    ASSERT_EQ(::fcntl(leaked_dup.get(), F_GETFD) & FD_CLOEXEC, 0);

    auto plain = run_process(spec_for({child(), "list-fds"}, method()));
    ASSERT_FALSE(plain.spawn_failure);
    ASSERT_EQ(plain.exit_code, 0) << plain.stderr_output.text;
    EXPECT_EQ(parse_fd_list(plain.stdout_output.text), (std::vector<int>{0, 1, 2}));

    auto with_status = spec_for({child(), "list-fds"}, method());
    with_status.status = sandbox::status_channel{sandbox::runner_status_fd};
    auto status = run_process(std::move(with_status));
    ASSERT_FALSE(status.spawn_failure);
    ASSERT_EQ(status.exit_code, 0) << status.stderr_output.text;
    EXPECT_EQ(parse_fd_list(status.stdout_output.text), (std::vector<int>{0, 1, 2, 3}));
    // Nothing was written to the channel and it closed: silence proves nothing, so the channel
    // reads as "no record", never as "the command started".
    ASSERT_TRUE(status.status.has_value());
    EXPECT_EQ(status.status->outcome, sandbox::status_report::verdict::silent);
}

// Extra mappings whose sources sit at each other's target numbers are placed without one
// clobbering the other (the child moves every source out of the way first).
TEST_P(SpawnTest, CrossedFdMappingsArePlacedCorrectly) {
    piped_request req({child(), "list-fds"}, method());
    // fd 40 holds /dev/null, fd 41 the pipe; map them crosswise to 41 and 40.
    ASSERT_EQ(::fcntl(40, F_GETFD), -1) << "fd 40 unexpectedly in use";
    ASSERT_EQ(::fcntl(41, F_GETFD), -1) << "fd 41 unexpectedly in use";
    unique_fd a(::dup3(req.dev_null.get(), 40, O_CLOEXEC));
    unique_fd b(::dup3(req.out.write.get(), 41, O_CLOEXEC));
    ASSERT_TRUE(a && b);
    req.request.fds.push_back({40, 41});
    req.request.fds.push_back({41, 40});

    auto result = spawn(req.request);
    ASSERT_TRUE(std::holds_alternative<spawned_child>(result));
    auto& spawned = std::get<spawned_child>(result);
    req.out.write.reset();
    a.reset();
    b.reset();
    auto [text, status] = drain_and_reap(req.out.read.get(), spawned.pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(parse_fd_list(text), (std::vector<int>{0, 1, 2, 40, 41}));
}

// There is no fixed number of mappings: a bwrap run takes a descriptor for each hidden file
// (sandbox/backends.hpp), and a home holds more stores than any small bound.
TEST_P(SpawnTest, HundredsOfFdMappingsAreEachPlaced) {
    piped_request req({child(), "list-fds"}, method());
    std::vector<int> expected{0, 1, 2};
    for (int target = 3; target < 300; ++target) {
        req.request.fds.push_back({req.dev_null.get(), target});
        expected.push_back(target);
    }
    auto result = spawn(req.request);
    ASSERT_TRUE(std::holds_alternative<spawned_child>(result));
    req.out.write.reset();
    auto [text, status] = drain_and_reap(req.out.read.get(), std::get<spawned_child>(result).pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(parse_fd_list(text), expected);
}

TEST_P(SpawnTest, ChildFdNumbersCarryTheRightFiles) {
    // fd 40 in the child must be the pipe (its link names a pipe), 41 /dev/null.
    piped_request req({"bash", "-c", "readlink /proc/$$/fd/40 /proc/$$/fd/41"}, method());
    req.request.fds.push_back({req.out.write.get(), 40});
    req.request.fds.push_back({req.dev_null.get(), 41});
    auto result = spawn(req.request);
    ASSERT_TRUE(std::holds_alternative<spawned_child>(result));
    req.out.write.reset();
    auto [text, status] = drain_and_reap(req.out.read.get(), std::get<spawned_child>(result).pid);
    auto lines = test::split_lines(text);
    ASSERT_EQ(lines.size(), 2U) << text;
    EXPECT_EQ(lines[0].rfind("pipe:", 0), 0U) << lines[0];
    EXPECT_EQ(lines[1], "/dev/null");
}

// --- exec failure as a value, no zombie ----------------------------------------------------------

class SpawnFailureTest : public SpawnTest {
protected:
    void SetUp() override {
        SpawnTest::SetUp();
        if (IsSkipped()) return;
        fds_before_ = test::count_open_fds();
        ASSERT_TRUE(test::zombie_children().empty()) << "a zombie from an earlier test";
    }
    void TearDown() override {
        if (IsSkipped()) return;
        EXPECT_TRUE(test::zombie_children().empty()) << "spawn failure left a zombie";
        // waitpid(-1) must not find an unreaped child either (no other test leaves children).
        int status = 0;
        const pid_t waited = ::waitpid(-1, &status, WNOHANG);
        const int wait_errno = errno;
        EXPECT_EQ(waited, -1);
        EXPECT_EQ(wait_errno, ECHILD);
        EXPECT_EQ(test::count_open_fds(), fds_before_) << "spawn failure leaked an fd";
    }
    spawn_error expect_failure(std::vector<std::string> argv, std::filesystem::path cwd = "/") {
        piped_request req(std::move(argv), method());
        req.request.cwd = std::move(cwd);
        auto result = spawn(req.request);
        if (auto* child = std::get_if<spawned_child>(&result)) {
            req.out.write.reset();
            (void)drain_and_reap(req.out.read.get(), child->pid);
            ADD_FAILURE() << "spawn unexpectedly succeeded";
            return {};
        }
        return std::get<spawn_error>(result);
    }
    std::size_t fds_before_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Methods, SpawnFailureTest,
                         ::testing::Values(spawn_method::vfork, spawn_method::fork),
                         [](const auto& param_info) {
                             return test::method_name(param_info.param);
                         });

TEST_P(SpawnFailureTest, NonExecutableFileIsEacces) {
    test::temp_dir dir;
    const auto file = dir / "plain.txt";
    test::write_file(file, "#!/bin/sh\necho hi\n",
                     std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    auto error = expect_failure({file.string()});
    EXPECT_TRUE(error.stage == spawn_stage::resolve || error.stage == spawn_stage::exec)
        << to_string(error.stage);
    EXPECT_EQ(error.error, EACCES);
    EXPECT_NE(describe(error, file.string()).find(file.string()), std::string::npos);
}

TEST_P(SpawnFailureTest, DirectoryAsProgramIsEacces) {
    test::temp_dir dir;
    auto error = expect_failure({dir.path().string()});
    EXPECT_EQ(error.error, EACCES);
}

TEST_P(SpawnFailureTest, MissingProgramIsResolveEnoent) {
    auto bare = expect_failure({"no-such-program-cordon-xyz"});
    EXPECT_EQ(bare.stage, spawn_stage::resolve);
    EXPECT_EQ(bare.error, ENOENT);
    EXPECT_EQ(describe(bare, "no-such-program-cordon-xyz"),
              "no-such-program-cordon-xyz: No such file or directory");

    auto absolute = expect_failure({"/nonexistent/cordon/program"});
    EXPECT_EQ(absolute.stage, spawn_stage::resolve);
    EXPECT_EQ(absolute.error, ENOENT);

    auto empty = expect_failure({""});
    EXPECT_EQ(empty.stage, spawn_stage::resolve);
    EXPECT_EQ(empty.error, ENOENT);
}

// execvp(3) resolves a relative PATH entry (".", "bin", an empty entry) against the directory
// the program is started in, which is the child's working directory, not the spawner's.
TEST_P(SpawnTest, RelativePathEntryIsResolvedAgainstTheChildsWorkingDirectory) {
    test::temp_dir workdir;
    std::filesystem::create_directory(workdir / "tools");
    test::write_file(workdir / "tools" / "cordon-rel-tool", "#!/bin/sh\necho found in \"$PWD\"\n",
                     std::filesystem::perms::owner_all);
    ASSERT_NE(std::filesystem::current_path(), workdir.path());

    auto env = test::child_env();
    for (auto& entry : env) {
        if (entry.rfind("PATH=", 0) == 0) entry = "PATH=tools:/usr/bin:/bin";
    }
    auto spec = spec_for({"cordon-rel-tool"}, method());
    spec.env = env;
    spec.cwd = workdir.path();
    auto outcome = run_process(std::move(spec));
    ASSERT_FALSE(outcome.spawn_failure) << describe(*outcome.spawn_failure, "cordon-rel-tool");
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_EQ(outcome.stdout_output.text, "found in " + workdir.path().string() + "\n");

    // The same name is not found from a working directory without tools/.
    auto elsewhere = spec_for({"cordon-rel-tool"}, method());
    elsewhere.env = env;
    elsewhere.cwd = "/";
    auto missing = run_process(std::move(elsewhere));
    ASSERT_TRUE(missing.spawn_failure);
    EXPECT_EQ(missing.spawn_failure->error, ENOENT);
}

TEST(ResolveProgram, FollowsExecvpRules) {
    test::temp_dir dir;
    std::filesystem::create_directories(dir / "a");
    std::filesystem::create_directories(dir / "b");
    test::write_file(dir / "a" / "tool", "", std::filesystem::perms::owner_read);  // not executable
    test::write_file(dir / "b" / "tool", "", std::filesystem::perms::owner_all);
    const std::vector<std::string> env{"PATH=" + (dir / "a").string() + ":" + (dir / "b").string()};

    auto found = resolve_program("tool", env);
    ASSERT_TRUE(std::holds_alternative<std::string>(found));
    EXPECT_EQ(std::get<std::string>(found), (dir / "b" / "tool").string());

    // Found but not executable beats not found.
    const std::vector<std::string> only_a{"PATH=" + (dir / "a").string()};
    auto denied = resolve_program("tool", only_a);
    ASSERT_TRUE(std::holds_alternative<int>(denied));
    EXPECT_EQ(std::get<int>(denied), EACCES);

    auto missing = resolve_program("no-such-tool", env);
    ASSERT_TRUE(std::holds_alternative<int>(missing));
    EXPECT_EQ(std::get<int>(missing), ENOENT);

    // No PATH at all: the default list, where sh lives.
    auto sh = resolve_program("sh", {});
    ASSERT_TRUE(std::holds_alternative<std::string>(sh));
    EXPECT_TRUE(std::get<std::string>(sh).ends_with("/sh"));

    // Relative entries are looked up in the given working directory.
    const std::vector<std::string> relative{"PATH=b"};
    auto in_cwd = resolve_program("tool", relative, dir.path());
    ASSERT_TRUE(std::holds_alternative<std::string>(in_cwd));
    EXPECT_EQ(std::get<std::string>(in_cwd), (dir / "b" / "tool").string());
}

// These fail after the child exists, so they exercise the {stage, errno} pipe and the reaping.
TEST_P(SpawnFailureTest, BadWorkingDirectoryIsChdirEnoent) {
    auto error = expect_failure({child(), "exit", "0"}, "/nonexistent/cordon/cwd");
    EXPECT_EQ(error.stage, spawn_stage::chdir);
    EXPECT_EQ(error.error, ENOENT);
    EXPECT_NE(describe(error, child()).find("working directory"), std::string::npos);
}

// A relative path is checked under the child's working directory before anything is cloned.
TEST_P(SpawnFailureTest, RelativeMissingProgramIsResolveEnoent) {
    test::temp_dir dir;
    auto error = expect_failure({"./not-here"}, dir.path());
    EXPECT_EQ(error.stage, spawn_stage::resolve);
    EXPECT_EQ(error.error, ENOENT);
}

TEST_P(SpawnFailureTest, UnknownBinaryFormatIsExecEnoexec) {
    test::temp_dir dir;
    const auto file = dir / "garbage";
    test::write_file(file, std::string("\x01\x02\x03\x04 not a program"),
                     std::filesystem::perms::owner_all);
    auto error = expect_failure({file.string()});
    EXPECT_EQ(error.stage, spawn_stage::exec);
    EXPECT_EQ(error.error, ENOEXEC);
}

TEST_P(SpawnFailureTest, UnwritableCgroupProcsIsCgroupStage) {
    unique_fd read_only(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    piped_request req({child(), "exit", "0"}, method());
    req.request.cgroup_join_fds = {read_only.get()};
    auto result = spawn(req.request);
    ASSERT_TRUE(std::holds_alternative<spawn_error>(result));
    EXPECT_EQ(std::get<spawn_error>(result).stage, spawn_stage::cgroup);
    EXPECT_EQ(std::get<spawn_error>(result).error, EBADF);
}

// A mapping the descriptor limit leaves no room for (the child holds each source twice while it
// places them) fails before any child exists.
TEST_P(SpawnFailureTest, MappingsPastTheDescriptorLimitAreFdsStage) {
    rlimit limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > (1U << 20)) {
        GTEST_SKIP() << "no descriptor limit to pass";
    }
    piped_request req({child(), "exit", "0"}, method());
    req.request.fds.push_back({req.dev_null.get(), static_cast<int>(limit.rlim_cur) - 1});
    auto result = spawn(req.request);
    ASSERT_TRUE(std::holds_alternative<spawn_error>(result));
    EXPECT_EQ(std::get<spawn_error>(result).stage, spawn_stage::fds);
    EXPECT_EQ(std::get<spawn_error>(result).error, EMFILE);
}

TEST_P(SpawnFailureTest, RunProcessReportsSpawnFailureWithEmptyOutcome) {
    auto spec = spec_for({child(), "exit", "0"}, method());
    spec.cwd = "/nonexistent/cordon/cwd";
    auto outcome = run_process(std::move(spec));
    ASSERT_TRUE(outcome.spawn_failure);
    EXPECT_EQ(outcome.spawn_failure->stage, spawn_stage::chdir);
    EXPECT_EQ(outcome.spawn_failure->error, ENOENT);
    EXPECT_FALSE(outcome.exit_code);
    EXPECT_FALSE(outcome.signal);
    EXPECT_EQ(outcome.stdout_output.bytes, 0U);
    EXPECT_EQ(outcome.stderr_output.bytes, 0U);
}

// --- session, group, signals ---------------------------------------------------------------------

TEST_P(SpawnTest, ChildLeadsItsOwnSessionAndGroupWithoutTerminal) {
    piped_request req({"cat", "/proc/self/stat"}, method());
    auto result = spawn(req.request);
    ASSERT_TRUE(std::holds_alternative<spawned_child>(result));
    const pid_t pid = std::get<spawned_child>(result).pid;
    EXPECT_TRUE(std::get<spawned_child>(result).pidfd) << "this kernel has pidfds";
    req.out.write.reset();
    auto [text, status] = drain_and_reap(req.out.read.get(), pid);
    auto stat = test::parse_proc_stat(text);
    ASSERT_TRUE(stat) << text;
    EXPECT_EQ(stat->pid, pid);
    EXPECT_EQ(stat->pgrp, pid);
    EXPECT_EQ(stat->session, pid);
    EXPECT_EQ(stat->tty_nr, 0);
    EXPECT_NE(::getpgrp(), pid);
}

TEST_P(SpawnTest, ShellSeesPidEqualsPgidEqualsSid) {
    auto outcome = run_process(spec_for({"bash", "-c", "ps -o pid=,pgid=,sid= -p $$"}, method()));
    ASSERT_EQ(outcome.exit_code, 0) << outcome.stderr_output.text;
    std::istringstream in(outcome.stdout_output.text);
    long pid = 0, pgid = 0, sid = 0;
    in >> pid >> pgid >> sid;
    ASSERT_TRUE(in) << outcome.stdout_output.text;
    EXPECT_GT(pid, 0);
    EXPECT_EQ(pgid, pid);
    EXPECT_EQ(sid, pid);
}

// A host may ignore SIGPIPE (the cordon program does), and the spawner blocks every signal
// around the clone; the command must start with default dispositions and an empty mask.
TEST_P(SpawnTest, ChildStartsWithDefaultSignalsAndEmptyMask) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction previous {};
    ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &previous), 0);
    auto outcome = run_process(spec_for({"grep", "^Sig", "/proc/self/status"}, method()));
    ::sigaction(SIGPIPE, &previous, nullptr);
    ASSERT_EQ(outcome.exit_code, 0) << outcome.stderr_output.text;
    const auto& text = outcome.stdout_output.text;
    EXPECT_NE(text.find("SigBlk:\t0000000000000000"), std::string::npos) << text;
    EXPECT_NE(text.find("SigIgn:\t0000000000000000"), std::string::npos) << text;
}

// --- stdin ---------------------------------------------------------------------------------------

TEST_P(SpawnTest, StdinIsDevNullByDefault) {
    const auto start = std::chrono::steady_clock::now();
    auto outcome = run_process(spec_for({child(), "cat"}, method()));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
    ASSERT_FALSE(outcome.spawn_failure);
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_FALSE(outcome.timed_out);
    EXPECT_EQ(outcome.stdout_output.text, "");
    EXPECT_EQ(outcome.stdout_output.bytes, 0U);

    auto link = run_process(spec_for({"readlink", "/proc/self/fd/0"}, method()));
    EXPECT_EQ(link.stdout_output.text, "/dev/null\n");
}

TEST_P(SpawnTest, StdinDataRoundTripsByteExact) {
    // Every byte value, NULs included, and more than a pipe buffer many times over.
    std::string data;
    data.reserve((1 << 20) + 300'000);
    for (std::size_t i = 0; data.size() < (1 << 20) + 300'000; ++i) {
        data.push_back(static_cast<char>((i * 7 + i / 256) & 0xff));
    }
    data.replace(0, 4, std::string(4, '\0'));
    ASSERT_NE(data.find('\0', 100), std::string::npos);

    auto spec = spec_for({child(), "cat"}, method());
    spec.stdin_data = data;
    spec.stdout_limits.tail_bytes = data.size() + 1;
    auto outcome = run_process(std::move(spec));
    ASSERT_EQ(outcome.exit_code, 0) << outcome.stderr_output.text;
    EXPECT_EQ(outcome.stdout_output.bytes, data.size());
    EXPECT_FALSE(outcome.stdout_output.truncated);
    EXPECT_TRUE(outcome.stdout_output.text == data) << "stdin data did not round-trip";
}

TEST_P(SpawnTest, EmptyStdinDataIsImmediateEof) {
    auto spec = spec_for({child(), "cat"}, method());
    spec.stdin_data = std::string();
    auto outcome = run_process(std::move(spec));
    EXPECT_EQ(outcome.exit_code, 0);
    EXPECT_EQ(outcome.stdout_output.text, "");
}

// A command that never reads its stdin must not kill the caller with SIGPIPE.
TEST_P(SpawnTest, UnreadStdinDataDoesNotHurtTheCaller) {
    auto spec = spec_for({child(), "exit", "0"}, method());
    spec.stdin_data = std::string(4 << 20, 'z');
    auto outcome = run_process(std::move(spec));
    EXPECT_EQ(outcome.exit_code, 0);
}

// --- many threads at once ------------------------------------------------------------------------

TEST_P(SpawnTest, ManyThreadsSpawningAtOnce) {
    constexpr int threads = 8;
    constexpr int per_thread = 25;
    // Warm up lazily opened resources so that the before/after fd counts compare like with like.
    (void)run_process(spec_for({child(), "exit", "0"}, method()));
    const std::size_t fds_before = test::count_open_fds();

    std::atomic<int> ok{0};
    std::vector<std::string> failures(threads);
    std::vector<std::thread> pool;
    const auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) {
                const std::string token =
                    "thread-" + std::to_string(t) + "-run-" + std::to_string(i);
                auto spec = spec_for({child(), "cat"}, method());
                spec.stdin_data = token + "\n";
                auto outcome = run_process(std::move(spec));
                if (outcome.spawn_failure) {
                    failures[static_cast<std::size_t>(t)] +=
                        token + ": " + describe(*outcome.spawn_failure, "child") + "\n";
                } else if (outcome.exit_code != 0 || outcome.stdout_output.text != token + "\n") {
                    failures[static_cast<std::size_t>(t)] +=
                        token + ": got '" + outcome.stdout_output.text + "'\n";
                } else {
                    ++ok;
                }
            }
        });
    }
    for (auto& thread : pool)
        thread.join();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 120s);
    for (const auto& failure : failures)
        EXPECT_EQ(failure, "");
    EXPECT_EQ(ok.load(), threads * per_thread);
    EXPECT_EQ(test::count_open_fds(), fds_before) << "the parent leaked fds";
    EXPECT_TRUE(test::zombie_children().empty());
}

// While other threads open fds without O_CLOEXEC, every child still sees exactly 0, 1, 2: the
// child closes what it was not given instead of trusting the rest of the process.
TEST_P(SpawnTest, ConcurrentNonCloexecFdsNeverReachTheChild) {
    std::atomic<bool> stop{false};
    std::thread churn([&] {
        while (!stop.load()) {
            int fds[8];
            for (int& fd : fds)
                fd = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC, on purpose
            for (int fd : fds) {
                if (fd >= 0) ::close(fd);
            }
        }
    });
    std::vector<std::string> bad(4);
    std::vector<std::thread> spawners;
    for (std::size_t t = 0; t < bad.size(); ++t) {
        spawners.emplace_back([&, t] {
            for (int i = 0; i < 15; ++i) {
                auto outcome = run_process(spec_for({child(), "list-fds"}, method()));
                if (parse_fd_list(outcome.stdout_output.text) != std::vector<int>{0, 1, 2}) {
                    bad[t] += "[" + outcome.stdout_output.text + "]";
                }
            }
        });
    }
    for (auto& thread : spawners)
        thread.join();
    stop = true;
    churn.join();
    for (const auto& text : bad)
        EXPECT_EQ(text, "");
}

}  // namespace
}  // namespace cordon::runtime
