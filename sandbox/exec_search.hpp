// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The command's exec, searching PATH the way execvp does but in the command's own environment
// and after confinement, so that a PATH entry the sandbox closes is passed over as a missing one
// would be. Shared by cordon-landlock and the spawn child that puts up the Landlock rung itself
// (child_confinement.hpp), so that a command is found alike on both paths.
#pragma once

namespace cordon::sandbox {

// Returns only on failure, with the errno (EACCES when some candidate was not executable).
// Async-signal-safe: no allocation, a PATH_MAX buffer on the stack.
[[nodiscard]] int exec_searching(char* const* argv, char* const* envp) noexcept;

}  // namespace cordon::sandbox
