// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What the `cordon` program does with the signal state it inherits. A parent passes down its
// signal mask and every disposition it set to SIG_IGN (execve(2) keeps both); a cordon that kept
// them could lie: under SIGCHLD ignored the kernel reaps what cordon spawns and its status is lost
// (the library copes: runtime/spawn.cpp), under SIGTERM blocked or ignored cordon could not be
// told to stop. cordon starts from the kernel's defaults and then makes its own choices; the
// library never touches dispositions (docs/execution.md, "Signals").
#pragma once

namespace cordon::cli {

// First thing in main(): every signal unblocked except SIGINT, SIGTERM and SIGHUP, every ignored
// disposition back to SIG_DFL (SIGCHLD among them, with no flags), then cordon's own: SIGPIPE
// ignored. The three stay blocked, so that one that comes before the command that runs has caught
// them is pending, not fatal: `cordon run` catches them before it makes anything (the probe's
// workspace, the spill directory, a private /tmp) and then calls release_interrupts(); every
// other command calls it before it runs.
void reset_inherited_signals() noexcept;

// Unblocks SIGINT, SIGTERM and SIGHUP: one that came meanwhile is delivered now.
void release_interrupts() noexcept;

}  // namespace cordon::cli
