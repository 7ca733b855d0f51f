// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/launcher/reporter.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace cordon::launcher {

namespace {

using sandbox::launcher_record_kind;
using sandbox::launcher_status_record;

launcher_status_record make(launcher_record_kind kind) noexcept {
    launcher_status_record record;
    std::memset(&record, 0, sizeof(record));
    record.magic = sandbox::launcher_status_magic;
    record.kind = static_cast<std::uint32_t>(kind);
    return record;
}

}  // namespace

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

void reporter::fail(sandbox::launcher_stage stage, int error, const char* format,
                    ...) const noexcept {
    // We exit right after reporting: a reader that already went away must not turn exit 125
    // into death by SIGPIPE. Never reached on the exec path, so the command's disposition is
    // untouched.
    ::signal(SIGPIPE, SIG_IGN);

    // PATH_MAX-sized paths fit; anything longer is truncated, the line still ends in '\n'.
    char line[PATH_MAX + 512];
    const std::size_t prefix_size = sizeof(line_prefix) - 1;
    std::memcpy(line, line_prefix, prefix_size);
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
    ::_exit(sandbox::launcher_failure_exit);
}

void reporter::started() const noexcept {
    (void)send(make(launcher_record_kind::started));
}

void reporter::ended(int exit_code, int signal) const noexcept {
    launcher_status_record record = make(launcher_record_kind::ended);
    record.exit_code = exit_code;
    record.signal = signal;
    (void)send(record);
}

void reporter::probed(int abi) const noexcept {
    launcher_status_record record = make(launcher_record_kind::probe);
    record.abi = abi;
    (void)send(record);
}

// One write(2): the record is smaller than PIPE_BUF, so a pipe takes it whole or not at all
// and the reader never sees half a record. EINTR means nothing was written; retry.
bool reporter::send(const launcher_status_record& record) const noexcept {
    if (status_fd_ < 0) return false;
    ssize_t n;
    while ((n = ::write(status_fd_, &record, sizeof(record))) < 0 && errno == EINTR) {
    }
    return n == static_cast<ssize_t>(sizeof(record));
}

}  // namespace cordon::launcher
