// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/launcher/command_line.hpp"

#include <fcntl.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "base/number.hpp"

namespace cordon::launcher {

namespace {

namespace landlock = sandbox::landlock;
using sandbox::launcher_stage;

bool equals(const char* a, const char* b) noexcept {
    return std::strcmp(a, b) == 0;
}

// A non-negative decimal int, digits only: "-1", "+3", "", "3x" and overflow are rejected.
bool parse_fd(const char* text, int* out) noexcept {
    const auto value = base::parse_number<unsigned>(text);
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

int parse_fd_value(const reporter& report, const char* flag, const char* value) noexcept {
    int fd = -1;
    if (value == nullptr || !parse_fd(value, &fd)) {
        report.fail(launcher_stage::usage, 0, "usage error: %s requires a file descriptor number",
                    flag);
    }
    return fd;
}

}  // namespace

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
        } else if (equals(arg, "--quota-fd")) {
            // A directory fd of /proc/sys/user of a writable proc: the user namespace's limits
            // are written through it (sandbox/quotas.hpp).
            out.quota_fd = parse_fd_value(report, arg, value);
            ++options;
            ++i;
        } else if (equals(arg, "--deny-read")) {
            // An absolute path the read grants of --read-root leave out (rules.hpp).
            if (value == nullptr || value[0] != '/') {
                report.fail(launcher_stage::usage, 0,
                            "usage error: --deny-read requires an absolute path");
            }
            if (out.denied_count == landlock::max_denied_reads) {
                report.fail(launcher_stage::usage, 0,
                            "usage error: too many --deny-read paths (limit %zu)",
                            landlock::max_denied_reads);
            }
            out.denied[out.denied_count++] = value;
            ++options;
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
        } else if (equals(arg, "--unshare-net")) {
            out.unshare_net = true;
            ++options;
        } else if (equals(arg, "--deny-unix-sockets")) {
            out.deny_unix_sockets = true;
            ++options;
        } else if (equals(arg, "--deny-sockets")) {
            out.deny_sockets = true;
            ++options;
        } else if (equals(arg, "--local-binding")) {
            out.local_binding = true;
            ++options;
        } else if (equals(arg, "--namespaced-sockets-only")) {
            out.namespaced_sockets_only = true;
            ++options;
        } else if (equals(arg, "--proxy-fd")) {
            out.proxy_fd = parse_fd_value(report, arg, value);
            ++options;
            ++i;
        } else if (equals(arg, "--witness-fd")) {
            out.witness_fd = parse_fd_value(report, arg, value);
            ++options;
            ++i;
        } else if (equals(arg, "--proxy-port")) {
            if (value == nullptr || !parse_fd(value, &out.proxy_port) || out.proxy_port < 1 ||
                out.proxy_port > 65535) {
                report.fail(launcher_stage::usage, 0, "usage error: --proxy-port needs a port");
            }
            ++options;
            ++i;
        } else if (equals(arg, "--probe")) {
            out.probe = true;
        } else if (equals(arg, "--watch-cgroup")) {
            out.watch_cgroup = true;
        } else if (equals(arg, "--report-ending")) {
            out.report_ending = true;
            ++options;
        } else if (equals(arg, "--controlling-tty")) {
            out.controlling_tty = true;
            ++options;
        } else if (equals(arg, "--identity")) {
            // UID:GID, the run's own ids (sandbox/identity.hpp), switched to by the walls.
            const char* colon = value != nullptr ? std::strchr(value, ':') : nullptr;
            char uid_text[16] = {};
            int uid = -1;
            int gid = -1;
            if (colon != nullptr && colon - value > 0 &&
                static_cast<std::size_t>(colon - value) < sizeof uid_text) {
                std::memcpy(uid_text, value, static_cast<std::size_t>(colon - value));
            }
            if (!parse_fd(uid_text, &uid) || !parse_fd(colon != nullptr ? colon + 1 : "", &gid)) {
                report.fail(launcher_stage::usage, 0, "usage error: --identity requires UID:GID");
            }
            out.become_uid = uid;
            out.become_gid = gid;
            ++options;
            ++i;
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
    if (out.watch_cgroup) {
        if (argc != 2) {
            report.fail(launcher_stage::usage, 0, "usage error: --watch-cgroup takes no arguments");
        }
        return;
    }
    if (out.probe) {
        if (options != 0 || out.command != nullptr) {
            report.fail(launcher_stage::usage, 0,
                        "usage error: --probe takes no arguments but --status-fd, --env-fd and "
                        "--abi-cap");
        }
        return;
    }
    if ((out.proxy_fd >= 0) != (out.proxy_port > 0) || (out.proxy_fd >= 0 && !out.report_ending)) {
        report.fail(launcher_stage::usage, 0,
                    "usage error: --proxy-fd and --proxy-port go together, with --report-ending");
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

}  // namespace cordon::launcher
