// cordon-landlock: confines a command and execs it in place (docs/sandbox.md, "cordon-landlock").
// It is the last runner before every confined command: alone on hosts where bwrap is unusable, and
// inside bwrap, after bwrap's mounts are in place, everywhere else, so that a mount gap and a path
// gap must line up before anything escapes.
//
//   cordon-landlock [--status-fd N] [--env-fd N] [--no-landlock] [--private-ipc] [--deny-metadata]
//                   [--read-root] [--ro PATH] [--rw PATH] [--ro-try PATH] [--rw-try PATH]
//                   [--ro-fd N] [--rw-fd N] [--abi-cap N] [--report-ending] -- ARGV...
//   cordon-landlock [--status-fd N] [--abi-cap N] --probe
//
// Order: parse; read the command's environment from --env-fd; query the ABI; build the ruleset
// (the root read rules, then the --ro grants, then the --rw grants; every path opened once without
// following symlinks, every --*-fd used as given); a private IPC namespace unless --private-ipc
// says the caller made one; drop every capability; no_new_privs and restrict_self; the seccomp
// filter; every fd but 0-2 close-on-exec; a `started` record; exec (with --report-ending: in a
// child, whose end this process reports in an `ended` record). Every failure exits 125 with
// one failure record on the --status-fd (launcher_status.hpp) and, when no record took the line
// whole, exactly one stderr line.
//
// The launcher is started with an empty environment and linked statically, so that no loader
// variable and no library of the command's choosing is ever loaded into it; the command gets the
// environment read from --env-fd (NUL-separated NAME=value entries).
//
// Built with -fno-exceptions -fno-rtti and libc only: fixed-size arrays, write(2) for output,
// mmap(2) for the environment.
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "base/number.hpp"
#include "sandbox/confinement_extras.hpp"
#include "sandbox/exec_search.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/launcher_status.hpp"

extern char** environ;

namespace {

namespace landlock = cordon::sandbox::landlock;
using cordon::sandbox::launcher_record_kind;
using cordon::sandbox::launcher_stage;
using cordon::sandbox::launcher_status_record;

// Cordon's profiles use about a dozen grants; the limit only bounds the fixed array.
constexpr std::size_t max_grants = 256;
constexpr char prefix[] = "cordon-landlock: ";
constexpr char notice[] = "cordon-landlock: partial enforcement (older Landlock ABI)\n";

bool equals(const char* a, const char* b) noexcept {
    return std::strcmp(a, b) == 0;
}

// write(2) until done: stderr may be a pipe that takes the line in pieces, and a signal may
// interrupt a blocked write before anything was transferred (EINTR).
bool write_all(int fd, const char* data, std::size_t size) noexcept {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

// Reports on stderr and the status fd.
class reporter {
public:
    void set_status_fd(int fd) noexcept { status_fd_ = fd; }

    // printf-style `format` after the prefix; for the attribute `this` is argument 1.
    [[noreturn, gnu::format(printf, 4, 5)]] void fail(launcher_stage stage, int error,
                                                      const char* format, ...) const noexcept {
        // We exit right after reporting: a reader that already went away must not turn exit 125
        // into death by SIGPIPE. Never reached on the exec path, so the command's disposition is
        // untouched.
        ::signal(SIGPIPE, SIG_IGN);

        // PATH_MAX-sized paths fit; anything longer is truncated, the line still ends in '\n'.
        char line[PATH_MAX + 512];
        const std::size_t prefix_size = sizeof(prefix) - 1;
        std::memcpy(line, prefix, prefix_size);
        const std::size_t room = sizeof(line) - prefix_size - 1;  // keep one byte for '\n'
        va_list args;
        va_start(args, format);
        const int formatted = std::vsnprintf(line + prefix_size, room, format, args);
        va_end(args);
        std::size_t size = prefix_size;
        if (formatted > 0) {
            const auto wanted = static_cast<std::size_t>(formatted);
            size += wanted < room ? wanted : room - 1;
        }
        line[size] = '\n';
        launcher_status_record record = make(launcher_record_kind::failure);
        record.stage = static_cast<std::uint32_t>(stage);
        record.error = error;
        const std::size_t copied =
            size < sizeof(record.message) - 1 ? size : sizeof(record.message) - 1;
        std::memcpy(record.message, line, copied);
        // The caller reads the record and reports it; the line goes to stderr only when no
        // record took it whole, so that the command's stderr holds nothing of the launcher's.
        if (!send(record) || copied < size) (void)write_all(STDERR_FILENO, line, size + 1);
        ::_exit(cordon::sandbox::launcher_failure_exit);
    }

    void started() const noexcept { (void)send(make(launcher_record_kind::started)); }

    void ended(int exit_code, int signal) const noexcept {
        launcher_status_record record = make(launcher_record_kind::ended);
        record.exit_code = exit_code;
        record.signal = signal;
        (void)send(record);
    }

    void probed(int abi) const noexcept {
        launcher_status_record record = make(launcher_record_kind::probe);
        record.abi = abi;
        (void)send(record);
    }

private:
    static launcher_status_record make(launcher_record_kind kind) noexcept {
        launcher_status_record record;
        std::memset(&record, 0, sizeof(record));
        record.magic = cordon::sandbox::launcher_status_magic;
        record.kind = static_cast<std::uint32_t>(kind);
        return record;
    }

    // One write(2): the record is smaller than PIPE_BUF, so a pipe takes it whole or not at all
    // and the reader never sees half a record. EINTR means nothing was written; retry.
    // Returns whether the record was delivered.
    bool send(const launcher_status_record& record) const noexcept {
        if (status_fd_ < 0) return false;
        ssize_t n;
        while ((n = ::write(status_fd_, &record, sizeof(record))) < 0 && errno == EINTR) {
        }
        return n == static_cast<ssize_t>(sizeof(record));
    }

    int status_fd_ = -1;
};

// A non-negative decimal int, digits only: "-1", "+3", "", "3x" and overflow are rejected.
bool parse_fd(const char* text, int* out) noexcept {
    const auto value = cordon::base::parse_number<unsigned>(text);
    if (!value || *value > static_cast<unsigned>(INT_MAX)) return false;
    *out = static_cast<int>(*value);
    return true;
}

// Marks the status fd CLOEXEC so that the command never holds it, and rejects an fd that could
// never carry a record rather than losing the record at failure time.
void adopt_status_fd(reporter& report, int fd) noexcept {
    const int fd_flags = ::fcntl(fd, F_GETFD);
    if (fd_flags < 0 || ::fcntl(fd, F_SETFD, fd_flags | FD_CLOEXEC) < 0) {
        const int error = errno;
        report.fail(launcher_stage::status_fd, error, "status fd error: %s", std::strerror(error));
    }
    const int status_flags = ::fcntl(fd, F_GETFL);
    if (status_flags < 0 || (status_flags & O_ACCMODE) == O_RDONLY || (status_flags & O_PATH)) {
        const int error = status_flags < 0 ? errno : EBADF;
        report.fail(launcher_stage::status_fd, error, "status fd error: %s", std::strerror(error));
    }
    report.set_status_fd(fd);
}

struct grant {
    const char* path;  // the path, or nullptr for an fd grant
    int fd;            // the descriptor of an fd grant, else -1
    landlock::access rights;
    bool optional;  // --*-try: a missing path is skipped
};

struct command_line {
    grant grants[max_grants];  // read grants first, then write grants, each in caller order
    std::size_t grant_count = 0;
    bool read_root = false;      // --read-root
    bool landlock = true;        // --no-landlock clears it
    bool private_ipc = false;    // --private-ipc: the caller gave the command its own IPC namespace
    bool deny_metadata = false;  // --deny-metadata: read-only's metadata rules
    int env_fd = -1;             // --env-fd
    bool probe = false;          // --probe
    int abi_cap = 0;             // --abi-cap N: use at most ABI N (0: no cap)
    bool report_ending = false;  // --report-ending: run the command as a child, report its end
    char** command = nullptr;    // argv after "--", NULL-terminated
};

int parse_fd_value(const reporter& report, const char* flag, const char* value) noexcept {
    int fd = -1;
    if (value == nullptr || !parse_fd(value, &fd)) {
        report.fail(launcher_stage::usage, 0, "usage error: %s requires a file descriptor number",
                    flag);
    }
    return fd;
}

// Flags in any order before the first "--"; each flag that takes a value takes the next argument,
// which may not be "--" (that is the end of the flags, not a value).
void parse(int argc, char** argv, reporter& report, command_line& out) noexcept {
    grant in_order[max_grants];
    std::size_t count = 0;
    int options = 0;  // flags other than --status-fd and --probe
    const auto add = [&](grant g) {
        if (count == max_grants) {
            report.fail(launcher_stage::usage, 0, "usage error: too many grants (limit %zu)",
                        max_grants);
        }
        in_order[count++] = g;
        ++options;
    };
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (equals(arg, "--")) {
            out.command = argv + i + 1;
            break;
        }
        const char* value = i + 1 < argc && !equals(argv[i + 1], "--") ? argv[i + 1] : nullptr;
        const bool path_flag = equals(arg, "--ro") || equals(arg, "--rw") ||
                               equals(arg, "--ro-try") || equals(arg, "--rw-try");
        if (path_flag) {
            if (value == nullptr) {
                report.fail(launcher_stage::usage, 0, "usage error: %s requires a path", arg);
            }
            const bool writable = arg[3] == 'w';
            const bool optional = std::strlen(arg) > 4;
            add({value, -1, writable ? landlock::access::write : landlock::access::read, optional});
            ++i;
        } else if (equals(arg, "--ro-fd") || equals(arg, "--rw-fd")) {
            const int fd = parse_fd_value(report, arg, value);
            add({nullptr, fd, arg[3] == 'w' ? landlock::access::write : landlock::access::read,
                 false});
            ++i;
        } else if (equals(arg, "--status-fd")) {
            adopt_status_fd(report, parse_fd_value(report, arg, value));
            ++i;
        } else if (equals(arg, "--env-fd")) {
            // Allowed with --probe too, so that every runner is started the same way.
            out.env_fd = parse_fd_value(report, arg, value);
            ++i;
        } else if (equals(arg, "--read-root")) {
            out.read_root = true;
            ++options;
        } else if (equals(arg, "--no-landlock")) {
            out.landlock = false;
            ++options;
        } else if (equals(arg, "--private-ipc")) {
            out.private_ipc = true;
            ++options;
        } else if (equals(arg, "--deny-metadata")) {
            out.deny_metadata = true;
            ++options;
        } else if (equals(arg, "--probe")) {
            out.probe = true;
        } else if (equals(arg, "--report-ending")) {
            out.report_ending = true;
            ++options;
        } else if (equals(arg, "--abi-cap")) {
            // Behave as on a kernel whose Landlock ABI is at most N: real partial enforcement on
            // a new kernel, for tests and diagnostics. Never given by cordon's own profiles.
            out.abi_cap = parse_fd_value(report, arg, value);
            if (out.abi_cap == 0) {
                report.fail(launcher_stage::usage, 0, "usage error: --abi-cap needs an ABI >= 1");
            }
            ++i;
        } else {
            report.fail(launcher_stage::usage, 0, "usage error: unknown argument: %s", arg);
        }
    }
    if (out.probe) {
        if (options != 0 || out.command != nullptr) {
            report.fail(launcher_stage::usage, 0,
                        "usage error: --probe takes no arguments but --status-fd, --env-fd and "
                        "--abi-cap");
        }
        return;
    }
    if (out.command == nullptr || out.command[0] == nullptr) {
        report.fail(launcher_stage::usage, 0, "usage error: missing `-- <argv>...` command");
    }
    // The kernel unions rules, so order does not change enforcement; it keeps the first failing
    // grant, and so the diagnostic, stable.
    constexpr landlock::access passes[] = {landlock::access::read, landlock::access::write};
    for (const landlock::access rights : passes) {
        for (std::size_t i = 0; i < count; ++i) {
            if (in_order[i].rights == rights) out.grants[out.grant_count++] = in_order[i];
        }
    }
}

// Reads the command's environment: NUL-terminated NAME=value entries. The block is mapped
// privately and the entries are used in place; the pointer array comes from an anonymous mapping.
char** read_environment(const reporter& report, int fd) noexcept {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int error = errno;
        report.fail(launcher_stage::environment, error, "cannot read the environment: %s",
                    std::strerror(error));
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    char* block = nullptr;
    std::size_t entries = 0;
    if (size > 0) {
        void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (mapped == MAP_FAILED) {
            const int error = errno;
            report.fail(launcher_stage::environment, error, "cannot read the environment: %s",
                        std::strerror(error));
        }
        block = static_cast<char*>(mapped);
        if (block[size - 1] != '\0') {
            report.fail(launcher_stage::environment, EINVAL,
                        "cannot read the environment: the block is not NUL-terminated");
        }
        for (std::size_t i = 0; i < size; ++i)
            entries += block[i] == '\0' ? 1 : 0;
    }
    ::close(fd);
    void* array = ::mmap(nullptr, (entries + 1) * sizeof(char*), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (array == MAP_FAILED) {
        report.fail(launcher_stage::out_of_memory, ENOMEM, "cannot read the environment: %s",
                    std::strerror(ENOMEM));
    }
    char** envp = static_cast<char**>(array);
    std::size_t n = 0;
    for (std::size_t at = 0; at < size; at += std::strlen(block + at) + 1) {
        if (block[at] != '\0') envp[n++] = block + at;  // an empty entry is skipped
    }
    envp[n] = nullptr;
    return envp;
}

// The kernel's ABI; exits 125 when Landlock cannot be enforced. ENOSYS and EOPNOTSUPP need
// different fixes (another kernel vs. a boot parameter), so they get different lines.
int require_abi(const reporter& report, int cap) noexcept {
    const int abi = landlock::query_abi();
    if (abi > 0) return cap > 0 && cap < abi ? cap : abi;
    const int error = -abi;
    if (error == ENOSYS) {
        report.fail(launcher_stage::abi, error,
                    "landlock is not supported by this kernel (built without Landlock: ENOSYS)");
    }
    if (error == EOPNOTSUPP) {
        report.fail(launcher_stage::abi, error,
                    "landlock is disabled on this kernel (EOPNOTSUPP: add landlock to the lsm= "
                    "boot parameter)");
    }
    // Anything else (e.g. EPERM from a container's seccomp filter) is still "not enforced".
    report.fail(launcher_stage::abi, error, "landlock ruleset error: %s", std::strerror(error));
}

[[noreturn]] void fail_rule(const reporter& report, const landlock::failure& failure) noexcept {
    if (failure.stage == launcher_stage::open_rule_path) {
        report.fail(failure.stage, failure.error, "cannot open rule path: %s: %s",
                    failure.path != nullptr ? failure.path : "(descriptor)",
                    std::strerror(failure.error));
    }
    report.fail(failure.stage, failure.error, "landlock ruleset error: %s",
                std::strerror(failure.error));
}

// Builds the ruleset for the command line; exits 125 on any failure.
int build_ruleset(const reporter& report, int abi, const command_line& line) noexcept {
    landlock::failure failure{};
    const int ruleset = landlock::create_ruleset(abi, &failure);
    if (ruleset < 0) fail_rule(report, failure);
    if (line.read_root && landlock::add_root_read_rules(ruleset, abi, &failure) != 0) {
        fail_rule(report, failure);
    }
    for (std::size_t i = 0; i < line.grant_count; ++i) {
        const grant& g = line.grants[i];
        const int result =
            g.path != nullptr
                ? landlock::add_path_rule(ruleset, abi, g.path, g.rights, g.optional, &failure)
                : landlock::add_fd_rule(ruleset, abi, g.fd, g.rights, &failure);
        if (result != 0) fail_rule(report, failure);
    }
    return ruleset;
}

// Marks every fd from 3 on close-on-exec: the command sees stdin, stdout and stderr only,
// whatever the runners before it passed down (bwrap keeps the fds it is given).
void cloexec_from_3() noexcept {
    if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
    // Kernels before 5.11: walk the range by hand.
    rlimit limit{};
    rlim_t max = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
    if (max > 65536) max = 65536;
    for (rlim_t fd = 3; fd < max; ++fd) {
        const int flags = ::fcntl(static_cast<int>(fd), F_GETFD);
        if (flags >= 0) ::fcntl(static_cast<int>(fd), F_SETFD, flags | FD_CLOEXEC);
    }
}

// --probe: a functional check, not a version query. It restricts itself with a real ruleset
// (read beneath /, scopes included) so that a kernel which reports an ABI but refuses rulesets is
// caught here. The answer goes to the status fd as a record, and to stdout for people.
int probe(const reporter& report, int abi_cap) noexcept {
    const int abi = require_abi(report, abi_cap);
    landlock::failure failure{};
    const int ruleset = landlock::create_ruleset(abi, &failure);
    if (ruleset < 0) fail_rule(report, failure);
    if (landlock::add_path_rule(ruleset, abi, "/", landlock::access::read, false, &failure) != 0) {
        fail_rule(report, failure);
    }
    if (const int error = landlock::restrict_self(ruleset); error != 0) {
        report.fail(launcher_stage::ruleset, error, "landlock ruleset error: %s",
                    std::strerror(error));
    }
    report.probed(abi);
    char out[128];
    const int size = std::snprintf(
        out, sizeof(out), "landlock: %s\nabi: %d\n",
        abi >= landlock::full_filesystem_abi ? "fully enforced" : "partially enforced (older ABI)",
        abi);
    if (size < 0 || !write_all(STDOUT_FILENO, out, static_cast<std::size_t>(size))) {
        return cordon::sandbox::launcher_failure_exit;
    }
    return 0;
}

// --report-ending: the command runs as this process's child, in the same confinement, and this
// process reports how it ended (under bwrap the runner's exit status cannot: bwrap exits 128+N
// both for a command that exited 128+N and for one killed by signal N). The child writes the
// `started` record and execs; an exec failure comes back through a close-on-exec pipe, and then
// only the child's failure record is written. This process blocks every signal it can (cordon's
// polite signals are for the command; its SIGKILL still ends both), holds none of the command's
// streams, and exits as the command did.
//
// The command must not be able to reach this process, which writes the record cordon trusts: it
// is made non-dumpable (no ptrace, no /proc/PID/mem or environ, no process_vm_* for a process
// without CAP_SYS_PTRACE), and where Landlock has scopes (`scope_abi` > 0) the child enters a
// nested domain first, from which this process can no longer be signalled. Without scopes a
// command of the same uid can still kill it; the record then carries the runner's status for the
// launcher's death, which the command chose as surely as it chooses its own exit code.
[[noreturn]] void run_and_report(const reporter& report, int scope_abi, char** command,
                                 char** envp) noexcept {
    sigset_t all;
    sigset_t previous;
    ::sigfillset(&all);
    ::sigprocmask(SIG_SETMASK, &all, &previous);
    if (::prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) != 0) {
        const int error = errno;
        report.fail(launcher_stage::spawn, error, "cannot make the launcher non-dumpable: %s",
                    std::strerror(error));
    }
    int exec_check[2];
    if (::pipe2(exec_check, O_CLOEXEC) != 0) {
        const int error = errno;
        report.fail(launcher_stage::spawn, error, "cannot start the command: %s",
                    std::strerror(error));
    }
    const pid_t child = ::fork();
    if (child < 0) {
        const int error = errno;
        report.fail(launcher_stage::spawn, error, "cannot start the command: %s",
                    std::strerror(error));
    }
    if (child == 0) {
        ::close(exec_check[0]);
        if (scope_abi > 0) {
            // A failure here is the child's to report, like an exec failure: the parent, told
            // through the pipe, then writes nothing more.
            landlock::failure failure{};
            const int scope = landlock::create_scope_ruleset(scope_abi, &failure);
            const int error = scope < 0 ? failure.error : landlock::restrict_self(scope);
            if (error != 0) {
                (void)write_all(exec_check[1], reinterpret_cast<const char*>(&error), sizeof error);
                report.fail(launcher_stage::ruleset, error, "landlock scope error: %s",
                            std::strerror(error));
            }
            ::close(scope);
        }
        ::sigprocmask(SIG_SETMASK, &previous, nullptr);
        report.started();
        const int error = cordon::sandbox::exec_searching(command, envp);
        (void)write_all(exec_check[1], reinterpret_cast<const char*>(&error), sizeof error);
        report.fail(launcher_stage::exec, error, "exec failed: %s: %s", command[0],
                    std::strerror(error));
    }
    ::close(exec_check[1]);
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2; ++fd) {
        if (devnull >= 0) {
            ::dup2(devnull, fd);
        } else {
            ::close(fd);
        }
    }
    int exec_error = 0;
    ssize_t got;
    while ((got = ::read(exec_check[0], &exec_error, sizeof exec_error)) < 0 && errno == EINTR) {
    }
    siginfo_t info{};
    int waited;
    while ((waited = ::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED)) < 0 &&
           errno == EINTR) {
    }
    if (got > 0) ::_exit(cordon::sandbox::launcher_failure_exit);  // the child reported it
    // The ending is unknown (cannot happen while this process owns its only child): say nothing
    // rather than something false.
    if (waited < 0) ::_exit(cordon::sandbox::launcher_failure_exit);
    if (info.si_code == CLD_EXITED) {
        report.ended(info.si_status, 0);
        ::_exit(info.si_status);
    }
    report.ended(-1, info.si_status);
    ::_exit(128 + info.si_status);
}

}  // namespace

int main(int argc, char** argv) {
    reporter report;
    command_line line;
    parse(argc, argv, report, line);
    if (line.probe) return probe(report, line.abi_cap);

    char** envp = line.env_fd >= 0 ? read_environment(report, line.env_fd) : environ;

    int abi = 0;
    int ruleset = -1;
    if (line.landlock) {
        abi = require_abi(report, line.abi_cap);
        ruleset = build_ruleset(report, abi, line);
    }

    // SysV IPC objects and POSIX message queues live in the IPC namespace. A private one is made
    // here while the capability to do so is still held; where that is impossible they are
    // refused outright rather than shared with the host.
    bool deny_sysv_ipc = false;
    if (!line.private_ipc) deny_sysv_ipc = cordon::sandbox::extras::private_ipc_namespace() != 0;

    // Rule paths are open; nothing below needs a capability. Root must not keep any.
    if (const int error = cordon::sandbox::extras::drop_capabilities(); error != 0) {
        report.fail(launcher_stage::capabilities, error, "cannot drop capabilities: %s",
                    std::strerror(error));
    }
    if (ruleset >= 0) {
        if (const int error = landlock::restrict_self(ruleset); error != 0) {
            report.fail(launcher_stage::ruleset, error, "landlock ruleset error: %s",
                        std::strerror(error));
        }
        ::close(ruleset);
    } else if (::prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) {
        const int error = errno;
        report.fail(launcher_stage::seccomp, error, "cannot set no_new_privs: %s",
                    std::strerror(error));
    }
    cordon::sandbox::extras::filter_options filter;
    filter.deny_metadata = line.deny_metadata;
    filter.deny_sysv_ipc = deny_sysv_ipc;
    if (const int error = cordon::sandbox::extras::install_filter(filter); error != 0) {
        report.fail(launcher_stage::seccomp, error, "seccomp filter error: %s",
                    std::strerror(error));
    }
    if (line.landlock && abi < landlock::full_filesystem_abi) {
        (void)write_all(STDERR_FILENO, notice, sizeof(notice) - 1);
    }
    cloexec_from_3();

    if (line.report_ending) {
        run_and_report(report, abi >= landlock::scopes_abi ? abi : 0, line.command, envp);
    }
    report.started();
    const int error = cordon::sandbox::exec_searching(line.command, envp);
    report.fail(launcher_stage::exec, error, "exec failed: %s: %s", line.command[0],
                std::strerror(error));
}
