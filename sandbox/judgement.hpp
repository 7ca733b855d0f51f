// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What a workspace-write run left, judged once it is over (docs/sandbox.md, "Protected names").
//
// The protected names keep what exists at the places host tools look first (each writable root's
// top, the repository there and what its git directory obeys): bwrap binds them read-only, the
// Landlock rung puts them back afterwards. Everything else a run may create or change at any depth:
// a nested repository, a submodule's git directory, a `.vscode` in a subdirectory, a `.gitmodules`.
// What it did create or change is judged here, from the list of changed paths a change_watch or a
// scan found, and what would run outside the sandbox later is neutralized:
//
//   - in a git directory (whatever git may take for one: is_git_directory(); every one a path lies
//     in): a hook that is neither one of git's samples nor the template's own (and a file of one
//     name) is quarantined; a configuration (`config`, `config.worktree`) keeps only the entries
//     known to be inert (git_config.hpp) and goes whole when git could not read it; a `commondir`
//     that does not lead from a linked worktree's git directory to its own repository is
//     quarantined; a stopped rebase's instructions with an `exec` line are quarantined. A
//     directory that becomes a git directory in the run is judged whole;
//   - what a repository obeys beyond its git directory, in its work tree (repository_reach): the
//     hooks where its core.hooksPath leads, what its symlinked hooks lead to, what it includes;
//   - `.gitmodules`, `.gitconfig` and `.config/git/config` are judged by their entries the same
//     way;
//   - any other protected name (`.envrc`, `.vscode`, `.mcp.json`, ...) is quarantined: a new one
//     whole, changes to an existing one one by one. Beneath `node_modules` only git directories are
//     judged: packages ship editor and tool configurations that nothing runs from there;
//   - a directory no path names (deeper than PATH_MAX) is quarantined whole.
//
// Only what changed is judged: a nested repository's own hooks and configuration that the run did
// not touch stay as they are. A repository the run's own `git init`, `git clone`, `git submodule
// add` or `git worktree add` made holds git's defaults and nothing is taken from it. The cost
// follows what changed, not where: directories are looked at through a cache of their
// descriptors, and paths are handled as text.
#pragma once

#include <time.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cordon/confined_argv.hpp"
#include "sandbox/path_plan.hpp"
#include "sandbox/quarantine.hpp"

namespace cordon::sandbox {

// A directory as it was when a window opened: what tells it from one made in its place since.
struct existing_directory {
    std::filesystem::path path;  // canonical
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    bool has_birth = false;
    timespec birth{};
};

struct judgement_scope {
    std::vector<std::filesystem::path> roots;  // the writable roots, canonical
    std::vector<std::string> names;            // the protected names (path_rules::protect)
    // Paths kept for the run (read-only, or put back afterwards): the command could not change
    // them, or what it did is undone; never judged.
    std::vector<std::filesystem::path> kept;
    // Beyond the protected names: directories git runs hooks from (core.hooksPath targets) and
    // files it reads configuration from (included files), inside a writable root
    // (path_plan::hook_directories, path_plan::configurations).
    std::vector<std::filesystem::path> hook_directories;
    std::vector<std::filesystem::path> configurations;
    // The places of the names anchored to the homes and of PATH's directories in a writable root
    // (path_plan::places): what a run makes or changes at or beneath one is judged as a
    // protected name is.
    std::vector<protected_place> places;
    timespec since{};  // when the window opened (CLOCK_REALTIME, as the inodes' times)
    // The directories that hold the writable roots (directories_holding_roots()), taken before the
    // command started: one found the same after the run is not new, whatever its birth says. The
    // window opens a margin early (run_judgement.cpp), and a protected directory made a moment
    // before the run (`.vscode`, holding `--writable-root ws/.vscode/sub`) was taken whole as the
    // run's, with the user's files in it and what the run wrote in its own root. One the run
    // replaced is another inode (or, its number reused, born later) and is new.
    std::vector<existing_directory> existing;
};

struct change_set {
    // Entries created, renamed in or changed while the run lasted (canonical; may be gone).
    std::vector<std::filesystem::path> paths;
    // Directories renamed into place whole: what lies beneath them is new there, whatever its age.
    std::vector<std::filesystem::path> moved;
    // Directories the run made or changed that no path names (deeper than PATH_MAX), each the
    // first such on its way: what they hold cannot be judged, and they are taken whole.
    std::vector<std::filesystem::path> unnameable;
    // What could not be looked at (the first such place), when the list may miss something.
    std::optional<std::string> incomplete;
};

struct judged_changes {
    std::vector<neutralized_path> neutralized;  // one entry per path
    std::optional<std::string> failure;         // what may have been missed, and why
};

// Each of `roots` (canonical) and every directory between it and a root that holds it, as it is
// now (judgement_scope::existing); one that cannot be looked at is left out.
[[nodiscard]] std::vector<existing_directory> directories_holding_roots(
    std::span<const std::filesystem::path> roots);

// Judges `changes` and neutralizes what would run outside the sandbox later, taking it into
// `away`.
[[nodiscard]] judged_changes judge_changes(const judgement_scope& scope, const change_set& changes,
                                           quarantine& away);

// What the repository whose work tree is `top` obeys beyond its git directory's own parts, in the
// writable roots `roots` (canonical): where any core.hooksPath of its own or the user's
// (`user_hooks`) leads and its own hooks directory, what their symlinked hooks lead to, the files
// its configuration includes.
struct repository_reach {
    std::vector<std::filesystem::path> hook_directories;
    std::vector<std::filesystem::path> hook_targets;
    std::vector<std::filesystem::path> configurations;
};
[[nodiscard]] repository_reach reach_of_work_tree(const std::filesystem::path& top,
                                                  std::span<const std::filesystem::path> roots,
                                                  const std::vector<std::string>& user_hooks);

// Every core.hooksPath of the invoking user's own and the system's git configuration, expanded
// (read_git_reach).
[[nodiscard]] std::vector<std::string> user_hooks_paths();

// Whether `name` (a protected name) is judged by its content rather than by its name:
// the git directory's parts, `.gitmodules`, `.gitconfig` and `.config/git`.
[[nodiscard]] bool judged_by_content(std::string_view name);

}  // namespace cordon::sandbox
