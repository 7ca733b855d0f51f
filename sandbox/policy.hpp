// What one confined execution may touch. Carried per call, never stored on a provider: two
// callers may confine under different policies at the same instant, and an approved escalation
// is simply a new call with a wider policy.
#pragma once

#include <filesystem>
#include <vector>

#include "sandbox/mode.hpp"

namespace cordon::sandbox {

struct sandbox_policy {
    sandbox_mode mode = sandbox_mode::read_only;  // confined modes only when handed to confine()
    std::filesystem::path workspace_root;         // absolute and canonical
};

// The directory `chdir(path)` would land in: symlinks are resolved before `..` is applied, so
// `link/..` names the physical parent of the link's target, not the lexical parent. A path that
// cannot be resolved is returned lexically normalised and absolute (it matches nothing until it
// exists).
[[nodiscard]] std::filesystem::path canonical_path(const std::filesystem::path& path);

// The canonical, de-duplicated roots workspace-write may write under for backends that spell a
// root list themselves (Seatbelt): the workspace, /tmp and cordon's own $TMPDIR when absolute
// (on macOS the per-user temporary directory, which the command inherits). Empty for read-only.
[[nodiscard]] std::vector<std::filesystem::path> writable_roots(const sandbox_policy& policy);

}  // namespace cordon::sandbox
