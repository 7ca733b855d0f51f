// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The command's stdin for `cordon run --stdin-file`, which is never handed over as is: a regular
// file (whose description would let the command change the file's metadata), a FIFO (whose
// writer may come late) or cordon's own stdin ("-", which may be a terminal or a description the
// caller shares read-write). A thread copies the source into a pipe whose read
// end is the command's fd 0, so the command gets read-only bytes and nothing else: no terminal
// to write to or reconfigure, no file status flags shared with the caller.
//
// The copy is streamed through one fixed buffer; nothing accumulates in cordon. The thread waits
// for the source with poll(2), so a FIFO nobody has opened yet is waited for instead of read as
// end-of-file (Linux reports a FIFO readable or hung up only once a writer has come), and the
// command's own reads stay subject to --timeout like anything else it waits for. When the
// command closes its stdin the copy stops (EPIPE, no SIGPIPE); when the run ends first, the
// thread is left blocked on the source and ends with the process.
#pragma once

#include <system_error>
#include <variant>

#include "cordon/unique_fd.hpp"

namespace cordon::cli {

// Starts copying `source` into a new pipe; returns the pipe's read end (CLOEXEC) for the
// command, or why the copy could not start: no pipe (EMFILE, ENFILE), or no thread (EAGAIN: a
// thread or process limit, RLIMIT_NPROC or a cgroup's pids.max). On failure nothing is left
// running and every descriptor, `source` among them, is closed.
[[nodiscard]] std::variant<unique_fd, std::error_code> start_stdin_pump(unique_fd source);

}  // namespace cordon::cli
