// cordon-landlock: confines a command with Landlock and execs it in place (reference section 3,
// STYLE.md rule 9). Order: parse, query the ABI, build the ruleset (--ro grants then --rw grants),
// drop every capability, no_new_privs, restrict_self, with --deny-metadata the seccomp filter
// against chmod/chown/utime/xattr changes (confinement_extras.hpp), exec. Every launcher failure
// exits 125 with exactly one stderr line and, when --status-fd was given, one
// launcher_status_record written to that fd; a successful exec closes the CLOEXEC status fd, so its
// reader sees zero bytes.
//
// Built with -fno-exceptions -fno-rtti and libc only: no allocation, fixed-size arrays, write(2)
// for output. The launcher reads no environment variable; the command gets the environment as is.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "sandbox/confinement_extras.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/launcher_status.hpp"

namespace {

namespace landlock = cordon::sandbox::landlock;
using cordon::sandbox::launcher_stage;
using cordon::sandbox::launcher_status_record;

// Cordon's modes use at most four grants; the limit only bounds the fixed array on the stack.
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

// Reports launcher failures: one stderr line, plus the fixed record once the status fd is known.
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
        (void)write_all(STDERR_FILENO, line, size + 1);
        if (status_fd_ >= 0) write_record(stage, error, line, size);
        ::_exit(cordon::sandbox::launcher_failure_exit);
    }

private:
    // One write(2): the record is smaller than PIPE_BUF, so a pipe takes it whole or not at all
    // and the reader never sees half a record. EINTR means nothing was written; retry.
    void write_record(launcher_stage stage, int error, const char* message,
                      std::size_t size) const noexcept {
        launcher_status_record record;
        std::memset(&record, 0, sizeof(record));
        record.magic = cordon::sandbox::launcher_status_magic;
        record.stage = static_cast<std::uint32_t>(stage);
        record.error = error;
        const std::size_t copied =
            size < sizeof(record.message) - 1 ? size : sizeof(record.message) - 1;
        std::memcpy(record.message, message, copied);
        while (::write(status_fd_, &record, sizeof(record)) < 0 && errno == EINTR) {
        }
    }

    int status_fd_ = -1;
};

// A non-negative decimal int, digits only: "-1", "+3", "", "3x" and overflow are rejected.
bool parse_fd(const char* text, int* out) noexcept {
    if (*text == '\0') return false;
    long long value = 0;
    for (const char* p = text; *p != '\0'; ++p) {
        if (*p < '0' || *p > '9') return false;
        value = value * 10 + (*p - '0');
        if (value > INT_MAX) return false;
    }
    *out = static_cast<int>(value);
    return true;
}

// Marks the status fd CLOEXEC so that a successful exec closes it (zero bytes, EOF), and rejects
// an fd that could never carry the record rather than losing the record at failure time.
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

struct command_line {
    landlock::grant grants[max_grants];  // --ro grants first, then --rw, each in caller order
    std::size_t grant_count = 0;
    bool deny_metadata = false;  // --deny-metadata: the read-only seccomp filter
    char** command = nullptr;    // argv after "--", NULL-terminated
};

// Flags in any order before the first "--"; each of --ro, --rw, --status-fd takes the next
// argument as its value, which may not be "--" (that is the end of the flags, not a path).
void parse(int argc, char** argv, reporter& report, command_line& out) noexcept {
    landlock::grant in_order[max_grants];
    std::size_t count = 0;
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (equals(arg, "--")) {
            out.command = argv + i + 1;
            break;
        }
        const bool has_value = i + 1 < argc && !equals(argv[i + 1], "--");
        if (equals(arg, "--ro") || equals(arg, "--rw")) {
            if (!has_value) {
                report.fail(launcher_stage::usage, 0, "usage error: %s requires a path", arg);
            }
            if (count == max_grants) {
                report.fail(launcher_stage::usage, 0, "usage error: too many grants (limit %zu)",
                            max_grants);
            }
            in_order[count++] = landlock::grant{argv[++i], equals(arg, "--rw")};
        } else if (equals(arg, "--status-fd")) {
            int fd = -1;
            if (!has_value || !parse_fd(argv[i + 1], &fd)) {
                report.fail(launcher_stage::usage, 0,
                            "usage error: --status-fd requires a file descriptor number");
            }
            ++i;
            adopt_status_fd(report, fd);
        } else if (equals(arg, "--deny-metadata")) {
            out.deny_metadata = true;
        } else if (equals(arg, "--probe")) {
            report.fail(launcher_stage::usage, 0, "usage error: --probe takes no other arguments");
        } else {
            report.fail(launcher_stage::usage, 0, "usage error: unknown argument: %s", arg);
        }
    }
    if (out.command == nullptr || out.command[0] == nullptr) {
        report.fail(launcher_stage::usage, 0, "usage error: missing `-- <argv>...` command");
    }
    // The kernel unions rules, so order does not change enforcement; it keeps the first failing
    // grant, and so the diagnostic, the same as the reference launcher's.
    constexpr bool passes[] = {false, true};
    for (const bool writable : passes) {
        for (std::size_t i = 0; i < count; ++i) {
            if (in_order[i].writable == writable) out.grants[out.grant_count++] = in_order[i];
        }
    }
}

// The kernel's ABI; exits 125 when Landlock cannot be enforced. ENOSYS and EOPNOTSUPP need
// different fixes (another kernel vs. a boot parameter), so they get different lines.
int require_abi(const reporter& report) noexcept {
    const int abi = landlock::query_abi();
    if (abi > 0) return abi;
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

// Builds the ruleset and restricts this process; exits 125 on any failure.
void confine(const reporter& report, int abi, const landlock::grant* grants,
             std::size_t count) noexcept {
    landlock::failure failure{};
    const int ruleset_fd = landlock::build_ruleset(abi, grants, count, &failure);
    if (ruleset_fd < 0) {
        if (failure.stage == launcher_stage::open_rule_path) {
            report.fail(failure.stage, failure.error, "cannot open rule path: %s: %s", failure.path,
                        std::strerror(failure.error));
        }
        report.fail(failure.stage, failure.error, "landlock ruleset error: %s",
                    std::strerror(failure.error));
    }
    // Rule paths are open; nothing below needs a capability. Root must not keep any.
    if (const int error = cordon::sandbox::extras::drop_capabilities(); error != 0) {
        report.fail(launcher_stage::capabilities, error, "cannot drop capabilities: %s",
                    std::strerror(error));
    }
    const int error = landlock::restrict_self(ruleset_fd);
    if (error != 0) {
        report.fail(launcher_stage::ruleset, error, "landlock ruleset error: %s",
                    std::strerror(error));
    }
    ::close(ruleset_fd);
}

// --probe: a functional check, not a version query. It restricts itself with a real ruleset
// (read beneath /) so that a kernel which reports an ABI but refuses rulesets is caught here.
int probe(const reporter& report) noexcept {
    const int abi = require_abi(report);
    const landlock::grant root{"/", false};
    confine(report, abi, &root, 1);
    char out[128];
    const int size = std::snprintf(
        out, sizeof(out), "landlock: %s\nabi: %d\n",
        abi >= landlock::full_enforcement_abi ? "fully enforced" : "partially enforced (older ABI)",
        abi);
    if (size < 0 || !write_all(STDOUT_FILENO, out, static_cast<std::size_t>(size))) {
        return cordon::sandbox::launcher_failure_exit;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    reporter report;
    if (argc >= 2 && equals(argv[1], "--probe")) {
        if (argc != 2) {
            report.fail(launcher_stage::usage, 0, "usage error: --probe takes no other arguments");
        }
        return probe(report);
    }

    command_line line;
    parse(argc, argv, report, line);
    const int abi = require_abi(report);
    confine(report, abi, line.grants, line.grant_count);
    if (line.deny_metadata) {
        if (const int error = cordon::sandbox::extras::deny_metadata_changes(); error != 0) {
            report.fail(launcher_stage::seccomp, error, "seccomp filter error: %s",
                        std::strerror(error));
        }
    }
    if (abi < landlock::full_enforcement_abi) {
        (void)write_all(STDERR_FILENO, notice, sizeof(notice) - 1);
    }
    ::execvp(line.command[0], line.command);
    const int error = errno;
    report.fail(launcher_stage::exec, error, "exec failed: %s: %s", line.command[0],
                std::strerror(error));
}
