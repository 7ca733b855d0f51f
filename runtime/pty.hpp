// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A pseudo-terminal pair for a run under a terminal (docs/terminal.md). cordon keeps the master;
// the slave becomes the command's stdin, stdout, stderr and controlling terminal, and cordon
// drops its own copy as soon as the command has it, so that the master reads EIO (the end of
// the terminal's output) once every process of the run has let go of it.
#pragma once

#include <string>
#include <variant>

#include "cordon/terminal.hpp"
#include "cordon/unique_fd.hpp"

namespace cordon::runtime {

struct pty_pair {
    unique_fd master;  // O_RDWR, CLOEXEC, O_NONBLOCK
    unique_fd slave;   // O_RDWR, O_NOCTTY, CLOEXEC
};

// A new pair of `size`, in the terminal's default modes plus IUTF8 (so that the line editor
// erases whole UTF-8 characters). The reason as text when the host has none to give.
[[nodiscard]] std::variant<pty_pair, std::string> open_pty(terminal_size size);

// Sets the terminal's size; the kernel sends SIGWINCH to its foreground process group. errno.
[[nodiscard]] int resize_pty(int master, terminal_size size) noexcept;

}  // namespace cordon::runtime
