// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A policy's path rules resolved against the filesystem before anything runs: what is kept for a
// workspace-write run where host tools look first, which credential stores are hidden, and what
// the judgement afterwards must also know (docs/sandbox.md, "Protected names").
//
// Kept, at known places only, so that the cost never grows with the tree and nothing is created on
// the host (bwrap binds over paths that exist; it makes no mount point):
//   - every protected name that exists at the top of a writable root: read-only, or, for a
//     directory that holds other protected names (`.git` for `.git/hooks`), kept in place (a
//     writable bind onto itself: it can be neither removed, renamed nor replaced, while what it
//     holds beside the protected names, objects, refs, the index, stays writable);
//   - every directory between a writable root and a kept path, kept in place too;
//   - what the repository at the top obeys: its git directory (a `.git` file leads to it) and
//     that directory's commondir, config.worktree, the git directories of its submodules
//     (`.git/modules/NAME`, nested) and linked worktrees (`.git/worktrees/NAME`), a writable root
//     that is itself a git directory (a bare repository), the files its configuration includes,
//     where its core.hooksPath and its symlinked hooks lead; and where the user's own git
//     configuration's core.hooksPath and includes lead, whatever the root.
// A missing one is not masked: what a run creates there, and everything it creates or changes at
// any depth, is judged once it is over (judgement.hpp). A kept path that is a symlink is not kept
// (a bind follows the link) but judged the same way, and what it leads to in a writable root is
// kept.
//
// Nothing here reads more than a few files per writable root, and nothing a run plants makes a
// later run refuse: a `.git` file whose `gitdir:` leads nowhere is kept and followed no further.
//
// Denied reads, in every confined mode: `hidden` are the deny_read entries that exist (their
// canonical paths), `hidden_missing` those that do not exist yet (Landlock keeps them unreadable
// if they appear during the run), `exposed` the allow_read exceptions beneath them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cordon/policy.hpp"

namespace cordon::sandbox {

class mount_snapshot;  // mount_exposure.hpp

struct hidden_path {
    std::filesystem::path path;  // canonical
    bool directory = false;
};

// A protected name's place in a writable root, found from the homes and PATH (a `~/` name,
// `$PATH`): kept there when it exists, and whatever a run makes at or beneath it is judged.
struct protected_place {
    std::filesystem::path path;  // canonical but for its last component
    std::string name;            // the protected name it stands for, or hidden_store_place
};
// The name of a place where a hidden credential store is missing: what a run makes there (a link
// a host tool would write the secret through) is taken.
inline constexpr std::string_view hidden_store_place = "deny_read";

struct path_plan {
    std::vector<std::filesystem::path> writable_roots;  // the workspace first; canonical
    std::vector<std::filesystem::path> entries;         // kept in place, contents writable
    std::vector<std::filesystem::path> read_only;       // protected paths and carve-outs
    std::vector<hidden_path> hidden;
    std::vector<std::filesystem::path> hidden_missing;
    std::vector<std::filesystem::path> exposed;
    std::size_t protected_count = 0;  // protected paths found (read_only minus carve-outs)
    // For the judgement: what git will run hooks from, and read configuration from, beyond what
    // the protected names say (core.hooksPath targets, included files), inside a writable root.
    std::vector<std::filesystem::path> hook_directories;
    std::vector<std::filesystem::path> configurations;
    std::vector<protected_place> places;
    // Files found by their content to hold a key (secret_scan.hpp) that the run leaves readable:
    // more than the paths a run may deny, and none folds into a directory that holds them.
    std::vector<std::filesystem::path> found_left;
    // Denied files of several names (the denied files, and those directly in a denied directory):
    // hidden by their path, they are read through another name wherever it lies, but on the
    // Landlock rung's way to a denied path.
    std::vector<std::filesystem::path> several_names;
    // What symlinks in denied directories lead to beyond the places a run hides for them.
    std::vector<std::filesystem::path> links_left;
};

// Where one git configuration sends git beyond its git directory: every core.hooksPath it sets,
// expanded as git expands it (git_config::expanded_paths), and the files it includes (canonical,
// and the links on the way to them as written), read through its includes (includeIf's whatever
// the condition) a few levels deep. Every reading any git may make of it counts (the whitespace of
// older and newer gits), and every value, not only the last: which one git takes depends on the
// order of files and includes, and protecting each is never less safe. A file git would read but
// cordon cannot (larger than cordon reads, not a regular file) is named in `unreadable`: what it
// says is not known, and the caller fails closed. None is read when absent.
struct git_reach {
    std::vector<std::string> hooks_paths;
    std::vector<std::filesystem::path> includes;
    std::vector<std::filesystem::path> unreadable;
};
void read_git_reach(const std::filesystem::path& file, const std::filesystem::path& home,
                    git_reach& out);

// The configuration files git reads beside a repository's own, for the user `home` is the home
// of: $GIT_CONFIG_SYSTEM or /etc/gitconfig, $GIT_CONFIG_GLOBAL, $XDG_CONFIG_HOME/git/config or
// ~/.config/git/config, ~/.gitconfig. Every one that any of those settings may name, whichever
// git takes.
[[nodiscard]] std::vector<std::filesystem::path> user_git_configurations(
    const std::filesystem::path& home);
// Every reach of those files, read together.
[[nodiscard]] git_reach user_git_reach(const std::filesystem::path& home);

// The plan for `policy` (a confined mode), or why the policy cannot be used (one line). The mount
// table, when the plan needs it (the other names of a denied path), is read from `mounts`, the
// run's one snapshot; without it, afresh.
[[nodiscard]] std::variant<path_plan, std::string> plan_paths(const sandbox_policy& policy);
[[nodiscard]] std::variant<path_plan, std::string> plan_paths(const sandbox_policy& policy,
                                                              mount_snapshot& mounts);

// Whether the directory `dir` is, or becomes with one more file, a git directory as git recognises
// one: entries named `objects` and `refs` (of any type: git follows a symlink), or a `commondir`
// to take them from (git also wants a `HEAD`, which a command could add in a later run); or any
// directory named `.git`.
[[nodiscard]] bool is_git_directory(const std::filesystem::path& dir);
// The same of the directory open as `dir`, but for its name: whether it holds those entries.
[[nodiscard]] bool has_git_directory_parts(int dir);

}  // namespace cordon::sandbox
