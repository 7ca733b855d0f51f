// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-landlock's Landlock ruleset: the kernel's ABI (capped by --abi-cap), the ruleset a
// command line asks for, and the functional --probe. Every failure exits 125 through the
// reporter, with distinct lines for a kernel without Landlock (ENOSYS) and one that disabled it
// at boot (EOPNOTSUPP).
#pragma once

#include "sandbox/launcher/command_line.hpp"
#include "sandbox/launcher/reporter.hpp"

namespace cordon::launcher {

// The kernel's ABI, at most `cap` when `cap` > 0; exits 125 when Landlock cannot be enforced.
[[nodiscard]] int require_abi(const reporter& report, int cap) noexcept;

// The ruleset for `line` (the root read rules with --read-root, then the grants in order; every
// path opened once without following symlinks); its fd (CLOEXEC). Exits 125 on any failure.
[[nodiscard]] int build_ruleset(const reporter& report, int abi, const command_line& line) noexcept;

// --probe: restricts this process with a read-beneath-/ ruleset, then reports the ABI in a `probe`
// record and, for people, on stdout. Returns the exit status.
[[nodiscard]] int probe(const reporter& report, int abi_cap) noexcept;

}  // namespace cordon::launcher
