// A policy's path rules resolved against the filesystem, once, before anything runs: which
// protected names exist in each writable root (at every depth), which must be kept from being
// created, which credential stores exist to hide, and what the backends cannot enforce.
//
// Protected names, under workspace-write (docs/sandbox.md, "Protected names"):
//   - an existing protected path is kept read-only (`read_only`), unless it is a directory that
//     holds other protected names (`.git` for `.git/hooks`): then it is kept as an entry
//     (`entries`, a writable self-bind), so that it can be neither removed, renamed nor replaced,
//     while what it holds beside the protected names (objects, refs, the index) stays writable;
//   - every directory between a writable root and a protected path is kept as an entry as well:
//     renaming `sub` away and making a new `sub/.git` would otherwise replace the protected one;
//   - a protected name missing at a writable root or in a repository found there (a directory
//     with a `.git`) is masked (`masks`: its first missing component, covered read-only), so
//     that it cannot be created; bwrap creates the mount point, and mask_residue removes it once
//     the run is over;
//   - a protected path that is a symlink cannot be kept from being replaced (a mount follows the
//     link): `symlinked`, a part the run cannot enforce.
// A git directory obeys files beside its hooks and config: `commondir` names the directory its
// configuration and hooks are read from, `config.worktree` is configuration too, and the git
// directories of submodules (`.git/modules/NAME`, nested) and of linked worktrees
// (`.git/worktrees/NAME`) have their own. Where `.git/NAME` is protected, NAME is protected in
// every git directory found in a repository's `.git`. git cannot read a directory in place of one
// of these files (it refuses to run), so a missing one is not masked but pinned (`pinned`): cordon
// creates it with content git reads as "nothing" (`commondir`: ".", the git directory itself;
// `config`, `config.worktree`: empty), the run keeps it read-only, and mask_residue removes it once
// the run is over if its content is still cordon's. So is a missing `.gitconfig` (a workspace that
// is a home directory), which git would otherwise refuse to run beside. Where core.hooksPath (of
// the repository or of the user) or a symlink in `.git/hooks` leads into a writable root, what it
// leads to is kept read-only too.
// The scan does not descend into `node_modules` directories nor into repositories' `.git` beyond
// the git directories above.
//
// Denied reads, in every confined mode: `hidden` are the deny_read entries that exist (their
// canonical paths), `exposed` the allow_read exceptions beneath them.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cordon/policy.hpp"

namespace cordon::sandbox {

struct hidden_path {
    std::filesystem::path path;  // canonical
    bool directory = false;
};

struct path_plan {
    std::vector<std::filesystem::path> writable_roots;  // the workspace first; canonical
    std::vector<std::filesystem::path> entries;         // kept in place, contents writable
    std::vector<std::filesystem::path> read_only;       // protected paths and carve-outs
    std::vector<std::filesystem::path> masks;           // missing protected names
    std::vector<std::filesystem::path> pinned;          // created by cordon, also in read_only
    std::vector<std::filesystem::path> symlinked;       // protected symlinks: not enforceable
    std::vector<hidden_path> hidden;
    std::vector<std::filesystem::path> exposed;
    std::size_t protected_count = 0;  // protected paths found (read_only minus carve-outs)
    // The masks' mount points, registered for the run (null without masks).
    std::shared_ptr<const class mask_residue> residue;
};

// Entries the scan of one writable root visits at most; a larger tree is refused rather than
// protected in part.
inline constexpr std::size_t max_scanned_entries = 2'000'000;

// The plan for `policy` (a confined mode), or why the policy cannot be used (one line).
[[nodiscard]] std::variant<path_plan, std::string> plan_paths(const sandbox_policy& policy);

// The mount points a run's masks leave on the host: bwrap creates each as an empty directory;
// and the files cordon pinned. Held for the run and destroyed once it is over (all its processes
// gone); the destructor removes every mask point that is still the empty directory bwrap made and
// every pinned file that still holds what cordon wrote, unless a mount namespace other than this
// process's still has a mount on it (another cordon's run) or another run of this process still
// masks it. Registered at planning time, so that a run planned while another's mask exists
// treats it as a mask too.
class mask_residue {
public:
    explicit mask_residue(std::vector<std::filesystem::path> masks);
    ~mask_residue();
    mask_residue(const mask_residue&) = delete;
    mask_residue& operator=(const mask_residue&) = delete;

    // True when another run of this process masks `path` right now.
    [[nodiscard]] static bool masked_by_a_run(const std::filesystem::path& path);
    // What cordon writes into a pinned file named `name` ("commondir", "config", ...).
    [[nodiscard]] static std::string_view pinned_content(std::string_view name);

private:
    std::vector<std::filesystem::path> masks_;
};

}  // namespace cordon::sandbox
