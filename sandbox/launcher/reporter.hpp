// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// How cordon-landlock says what happened: fixed records on the --status-fd
// (sandbox/launcher_status.hpp) and, when no record took a failure line whole, one stderr line.
// libc only, no allocation: the launcher is static and built without exceptions.
#pragma once

#include <cstddef>

#include "sandbox/launcher_status.hpp"

namespace cordon::launcher {

// The prefix of every line the launcher writes.
inline constexpr char line_prefix[] = "cordon-landlock: ";

// write(2) until done: stderr may be a pipe that takes the line in pieces, and a signal may
// interrupt a blocked write before anything was transferred (EINTR).
bool write_all(int fd, const char* data, std::size_t size) noexcept;

// Reports on stderr and the status fd.
class reporter {
public:
    void set_status_fd(int fd) noexcept { status_fd_ = fd; }

    // Exits launcher_failure_exit after one failure record (and, when no record took it whole,
    // one stderr line): printf-style `format` after the prefix; for the attribute `this` is
    // argument 1.
    [[noreturn, gnu::format(printf, 4, 5)]] void fail(sandbox::launcher_stage stage, int error,
                                                      const char* format, ...) const noexcept;

    // A `started` record: confinement is in place, the command is about to be exec'd.
    void started() const noexcept;
    // An `ended` record (--report-ending): the command exited with `exit_code` (-1: a signal).
    void ended(int exit_code, int signal) const noexcept;
    // A `probe` record answering --probe.
    void probed(int abi) const noexcept;

private:
    // One write(2) of one record; returns whether it was delivered.
    bool send(const sandbox::launcher_status_record& record) const noexcept;

    int status_fd_ = -1;
};

}  // namespace cordon::launcher
