// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run --tty` as a person at a terminal meets it: the real cordon runs as a session leader
// whose controlling terminal, stdin, stdout and stderr are a pseudo-terminal of the test's own,
// and the test types on its master side, resizes it and reads what cordon shows. What the
// command gets is the run's terminal alone (its fds 0-2, nothing of cordon's own terminal, which
// it cannot open either); what is typed reaches it raw (Ctrl-C is the command's); a resize
// reaches it; cordon's terminal gets its modes back. Without a terminal, piped bytes are typed
// and their end is a ^D. The relay is cordon's own and the same on every rung; what a rung
// changes (who gives the command its terminal, which of cordon's files it could reach) is run
// on each.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "real_backend.hpp"
#include "runtime/runtime_test_util.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"
#include "support/processes.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A pseudo-terminal of `rows` x `cols` that a person sits at: start() runs `cordon ARGS...` in a
// new session whose controlling terminal, stdin, stdout and stderr it is. The test holds the
// master (what the person types and sees) and a slave of its own (to read the terminal's modes).
// cordon is killed and reaped at scope end if still running.
class at_terminal {
public:
    at_terminal(unsigned short rows, unsigned short cols) {
        master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) {
            throw std::system_error(errno, std::generic_category(), "posix_openpt");
        }
        char name[128];
        if (::ptsname_r(master_, name, sizeof name) != 0) {
            throw std::system_error(errno, std::generic_category(), "ptsname_r");
        }
        slave_name_ = name;
        resize(rows, cols);
        slave_ = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (slave_ < 0) throw std::system_error(errno, std::generic_category(), slave_name_);
    }

    void start(const std::vector<std::string>& args, const fs::path& cwd) {
        // Everything the child needs is built before the fork: async-signal-safe calls only
        // between fork and exec.
        std::vector<std::string> argv_text{cordon_path().string()};
        argv_text.insert(argv_text.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& word : argv_text)
            argv.push_back(word.data());
        argv.push_back(nullptr);
        std::vector<std::string> env_text = child_env();
        std::vector<char*> envp;
        for (auto& entry : env_text)
            envp.push_back(entry.data());
        envp.push_back(nullptr);
        const std::string cwd_text = cwd.string();
        const char* name = slave_name_.c_str();

        pid_ = ::fork();
        if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
        if (pid_ == 0) {
            // A session leader's first terminal opened without O_NOCTTY becomes its controlling
            // terminal; TIOCSCTTY says so explicitly.
            if (::setsid() < 0) ::_exit(120);
            const int terminal = ::open(name, O_RDWR);
            if (terminal < 0 || ::ioctl(terminal, TIOCSCTTY, 0) != 0) ::_exit(121);
            if (::dup2(terminal, 0) < 0 || ::dup2(terminal, 1) < 0 || ::dup2(terminal, 2) < 0) {
                ::_exit(122);
            }
            // Nothing of the test's own reaches cordon: what the command holds is cordon's doing.
            ::close_range(3, ~0U, 0);
            if (::chdir(cwd_text.c_str()) != 0) ::_exit(123);
            ::execve(argv[0], argv.data(), envp.data());
            ::_exit(127);
        }
    }
    ~at_terminal() {
        if (pid_ > 0 && !status_) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
        ::close(master_);
        ::close(slave_);
    }
    at_terminal(const at_terminal&) = delete;
    at_terminal& operator=(const at_terminal&) = delete;

    [[nodiscard]] pid_t pid() const { return pid_; }
    [[nodiscard]] const std::string& shown() const { return shown_; }
    [[nodiscard]] const std::string& slave_name() const { return slave_name_; }
    [[nodiscard]] int slave() const { return slave_; }

    void type(std::string_view keys) const {
        ASSERT_EQ(::write(master_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
    }
    void resize(unsigned short rows, unsigned short cols) const {
        winsize size{};
        size.ws_row = rows;
        size.ws_col = cols;
        ASSERT_EQ(::ioctl(master_, TIOCSWINSZ, &size), 0) << std::strerror(errno);
    }
    [[nodiscard]] termios modes() const {
        termios out{};
        EXPECT_EQ(::tcgetattr(slave_, &out), 0) << std::strerror(errno);
        return out;
    }

    // Reads what the terminal shows until `text` is there (true), or `bound` passed.
    bool wait_for(std::string_view text, std::chrono::milliseconds bound = 60s) {
        const auto deadline = std::chrono::steady_clock::now() + bound;
        while (shown_.find(text) == std::string::npos) {
            if (std::chrono::steady_clock::now() >= deadline) return false;
            read_some(50ms);
        }
        return true;
    }

    // Waits for cordon's exit (SIGKILL at `bound`); its exit status, 128+N for a signal.
    int wait(std::chrono::milliseconds bound = 60s) {
        const auto deadline = std::chrono::steady_clock::now() + bound;
        int status = 0;
        while (::waitpid(pid_, &status, WNOHANG) != pid_) {
            if (std::chrono::steady_clock::now() >= deadline) {
                ADD_FAILURE() << "cordon did not end; the terminal showed:\n" << shown_;
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
                break;
            }
            read_some(20ms);
        }
        status_ = status;
        read_some(20ms);  // the tail of what it showed
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

private:
    void read_some(std::chrono::milliseconds bound) {
        pollfd readable{master_, POLLIN, 0};
        if (::poll(&readable, 1, static_cast<int>(bound.count())) <= 0) return;
        char block[4096];
        const ssize_t n = ::read(master_, block, sizeof block);
        if (n > 0) shown_.append(block, static_cast<std::size_t>(n));
    }

    int master_ = -1;
    int slave_ = -1;
    std::string slave_name_;
    pid_t pid_ = -1;
    std::optional<int> status_;
    std::string shown_;
};

bool same_modes(const termios& a, const termios& b) {
    return a.c_iflag == b.c_iflag && a.c_oflag == b.c_oflag && a.c_cflag == b.c_cflag &&
           a.c_lflag == b.c_lflag && std::memcmp(a.c_cc, b.c_cc, sizeof a.c_cc) == 0 &&
           ::cfgetispeed(&a) == ::cfgetispeed(&b) && ::cfgetospeed(&a) == ::cfgetospeed(&b);
}

class RunTty : public ::testing::TestWithParam<real_backend> {
protected:
    void SetUp() override {
        std::string why;
        if (!provider_for(choice_of(GetParam()), why)) CORDON_SKIP_OR_FAIL(why);
    }

    temp_dir workspace_{"/var/tmp"};
};

// One interactive run, step by step: the command's terminal is the size of cordon's and its
// fds 0-2 are that terminal and nothing else (neither cordon's terminal nor its files by path or
// through /proc); a resize of cordon's terminal reaches the command as SIGWINCH and the new
// size; a typed line is read; Ctrl-C typed ends the command by SIGINT at once (130), not cordon;
// nothing is left running and cordon's terminal has its modes back.
TEST_P(RunTty, ThePersonsTerminalIsRelayedToTheCommandsOwn) {
    scoped_backend_path on(GetParam());
    const std::string marker = "cordon-run-tty-" + std::to_string(::getpid());
    const fs::path pid_file = workspace_ / "cordon.pid";
    // Each step prints a line the test waits for before the next key.
    const std::string script = R"(stty size
stat -L -c 'fd:%t:%T' /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2
echo "fds:" $("$0" list-fds)
until [ -s "$2" ]; do sleep 0.01; done
cordon=$(cat "$2")
echo "tried:$cordon"
for f in "$1" /proc/$cordon/fd/0 /proc/$cordon/fd/1; do
  (: >> "$f") 2>/dev/null && echo "reached:$f"
  (: < "$f") 2>/dev/null && echo "read:$f"
done
"$0" sleep 30000 &
s=$!
trap 'stty size; kill $s' WINCH
echo ready-to-resize
wait $s
trap - WINCH
echo ready-to-read
read line
echo "got:$line"
echo ready-to-interrupt
exec "$0" sleep 30000 "$3"
)";
    at_terminal person(30, 100);
    const termios before = person.modes();
    person.start({"run", "--backend", std::string(backend_flag(GetParam())), "--mode", "read-only",
                  "--tty", "--", "/bin/sh", "-c", script, test_child_path().string(),
                  person.slave_name(), pid_file.string(), marker},
                 workspace_.path());
    write_file(pid_file, std::to_string(person.pid()),
               fs::perms::owner_read | fs::perms::owner_write);

    ASSERT_TRUE(person.wait_for("ready-to-resize\r\n")) << person.shown();
    const termios during = person.modes();
    EXPECT_EQ(during.c_lflag & (ICANON | ECHO | ISIG), 0U) << "cordon's terminal is raw";
    EXPECT_EQ(during.c_iflag & (ICRNL | IXON), 0U);
    const std::string shown = person.shown();
    EXPECT_NE(shown.find("30 100\r\n"), std::string::npos) << shown;
    // fds 0, 1 and 2 are one terminal, the run's (a pty slave: major 136 and up), not cordon's.
    struct stat own {};
    ASSERT_EQ(::fstat(person.slave(), &own), 0);
    const auto fd_line = shown.find("fd:");
    ASSERT_NE(fd_line, std::string::npos) << shown;
    const std::string first = shown.substr(fd_line, shown.find("\r\n", fd_line) - fd_line);
    char cordons[32];
    std::snprintf(cordons, sizeof cordons, "fd:%x:%x", major(own.st_rdev), minor(own.st_rdev));
    EXPECT_NE(first, cordons) << "the command holds cordon's own terminal";
    EXPECT_NE(shown.find(first + "\r\n" + first + "\r\n" + first + "\r\n"), std::string::npos)
        << shown;
    EXPECT_NE(shown.find("fds: 0 1 2\r\n"), std::string::npos) << shown;
    EXPECT_NE(shown.find("tried:" + std::to_string(person.pid()) + "\r\n"), std::string::npos);
    EXPECT_EQ(shown.find("reached:"), std::string::npos) << shown;
    EXPECT_EQ(shown.find("read:"), std::string::npos) << shown;

    person.resize(40, 120);
    EXPECT_TRUE(person.wait_for("40 120\r\n")) << person.shown();
    ASSERT_TRUE(person.wait_for("ready-to-read\r\n")) << person.shown();
    person.type("hello there\r");
    EXPECT_TRUE(person.wait_for("got:hello there\r\n")) << person.shown();
    ASSERT_TRUE(person.wait_for("ready-to-interrupt\r\n")) << person.shown();
    const auto interrupted = std::chrono::steady_clock::now();
    person.type("\x03");
    EXPECT_EQ(person.wait(), 128 + SIGINT) << person.shown();
    EXPECT_LT(std::chrono::steady_clock::now() - interrupted, 15s) << "not after the sleep";
    EXPECT_TRUE(wait_no_process_with_cmdline(marker, 10s));
    EXPECT_TRUE(same_modes(person.modes(), before)) << "cordon's terminal modes came back";
}

// cordon's terminal gets its modes back however the run ends: cordon ended by a signal whose
// default would end it where it stands (SIGTERM, and the others of that kind: it ends the command
// and exits 128+N) or the run's timeout (124); nothing is left running.
TEST(RunTtyEnds, TheModesComeBackWhenCordonIsStoppedOrTheRunTimesOut) {
    temp_dir workspace{"/var/tmp"};
    const std::string marker = "cordon-run-tty-end-" + std::to_string(::getpid());
    const std::string script = "echo running; exec \"$0\" sleep 30000 \"$1\"";
    for (const int signal : {SIGTERM, SIGQUIT, SIGUSR1, SIGALRM, 0}) {
        const bool stopped = signal != 0;
        SCOPED_TRACE(stopped ? ::strsignal(signal) : "timeout");
        at_terminal person(24, 80);
        const termios before = person.modes();
        person.start({"run", "--tty", "--timeout", stopped ? "60s" : "1s", "--", "/bin/sh", "-c",
                      script, test_child_path().string(), marker},
                     workspace.path());
        ASSERT_TRUE(person.wait_for("running\r\n")) << person.shown();
        if (stopped) ::kill(person.pid(), signal);
        EXPECT_EQ(person.wait(), stopped ? 128 + signal : cli::exit_timeout) << person.shown();
        EXPECT_TRUE(same_modes(person.modes(), before));
        EXPECT_TRUE(wait_no_process_with_cmdline(marker, 10s));
    }
}

class RunTtyPiped : public ::testing::Test {
protected:
    cli_result run(std::vector<std::string> args, std::string input) {
        args.insert(args.begin(), "run");
        cli_stdin piped;
        piped.data = std::move(input);
        return run_cordon(args, workspace_.path(), std::move(piped));
    }

    temp_dir workspace_{"/var/tmp"};
};

std::size_t count_of(const std::string& text, std::string_view part) {
    std::size_t count = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++count;
    return count;
}

// Without a terminal of cordon's own: the run's is 24x80 unless --tty-size says otherwise, what
// cordon's stdin gives is typed into it (and echoed, as typing is), and its end is a ^D at the
// prompt, after a partial line twice, so that `cat` ends either way, and so does a shell that
// edits its lines itself. With --json the terminal's output is in the
// record, which says the run had one; nothing of cordon's is written into it.
TEST_F(RunTtyPiped, PipedBytesAreTypedAndTheirEndIsAControlD) {
    const std::string reader = "stty size; cat";
    const cli_result lines =
        run({"--json", "--tty", "--timeout", "30s", "--", "/bin/sh", "-c", reader}, "one\ntwo\n");
    ASSERT_EQ(lines.exit_code, 0) << lines.err << lines.out;
    EXPECT_EQ(lines.err, "");
    const auto record = nlohmann::json::parse(lines.out);
    EXPECT_EQ(record.at("tty"), nlohmann::json({{"rows", 24}, {"cols", 80}}));
    const std::string text = record.at("stdout").at("text");
    EXPECT_NE(text.find("24 80\r\n"), std::string::npos) << text;
    EXPECT_EQ(count_of(text, "two\r\n"), 2U) << "echoed, then cat's: " << text;
    EXPECT_EQ(record.at("stderr").at("text"), "");

    const cli_result partial =
        run({"--tty-size", "33x91", "--timeout", "30s", "--", "/bin/sh", "-c", reader}, "abc");
    EXPECT_EQ(partial.exit_code, 0) << partial.err << partial.out;
    EXPECT_NE(partial.out.find("33 91\r\n"), std::string::npos) << partial.out;
    EXPECT_EQ(count_of(partial.out, "abc"), 2U) << partial.out;
    EXPECT_EQ(partial.err, "");

    // An interactive bash edits its lines with readline (raw) and runs each in canonical mode:
    // the ^D typed while the last line still runs is read as a NUL once readline is back, and
    // the second ^D, typed raw, is the end it takes. It exits as at a person's ^D.
    const cli_result shell =
        run({"--tty", "--timeout", "30s", "--", "bash", "--norc", "--noprofile", "-i"},
            "echo from-bash-$((6*7)); sleep 0.3\n");
    EXPECT_EQ(shell.exit_code, 0) << shell.err << shell.out;
    EXPECT_NE(shell.out.find("from-bash-42\r\n"), std::string::npos) << shell.out;
}

INSTANTIATE_TEST_SUITE_P(Rungs, RunTty, all_real_backends(), real_backend_name);

}  // namespace
}  // namespace cordon::test
