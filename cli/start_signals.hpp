// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What the `cordon` program does with the signal state it inherits. A parent passes down its
// signal mask and every disposition it set to SIG_IGN (execve(2) keeps both); a cordon that kept
// them could lie: under SIGCHLD ignored the kernel reaps what cordon spawns and its status is lost
// (the library copes: runtime/spawn.cpp), under SIGTERM blocked or ignored cordon could not be
// told to stop. cordon starts from the kernel's defaults and then makes its own choices; the
// library never touches dispositions (docs/execution.md, "Signals").
#pragma once

#include <span>

namespace cordon::cli {

// The signals whose default action ends cordon where it stands, short of a fault of its own
// (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS) and of SIGKILL: SIGINT, SIGTERM,
// SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGPOLL,
// SIGPWR, SIGSTKFLT and the real-time signals. `cordon run` ends its run on any of them the way
// it does on SIGTERM (an `aborted` record, 128+N), whatever its output is; the program starts
// with them blocked.
[[nodiscard]] std::span<const int> ending_signals() noexcept;

// First thing in main(): every signal unblocked except the ending_signals(), every ignored
// disposition back to SIG_DFL (SIGCHLD among them, with no flags), then cordon's own: SIGPIPE
// ignored. The ending ones stay blocked, so that one that comes before the command that runs has
// caught them is pending, not fatal: `cordon run` catches them before it makes anything (the
// probe's workspace, the spill directory, a private /tmp) and then calls release_interrupts();
// every other command calls it before it runs.
void reset_inherited_signals() noexcept;

// Unblocks the ending_signals(): one that came meanwhile is delivered now.
void release_interrupts() noexcept;

}  // namespace cordon::cli
