// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// git's configuration files as git itself reads them, and which of their entries can make git run
// a program or read configuration from elsewhere (docs/sandbox.md, "Protected names").
//
// A workspace-write command may write a repository's `config` (one it created, a nested one, a
// submodule's git directory) and `.gitmodules`. What it writes there is judged once the run is
// over: an entry is kept only when it is on a list of entries known to be inert (core's plain
// switches, remotes' URLs and refspecs, branches' upstreams, submodules' URLs, user.name, ...),
// whatever its value, and every other entry is taken out. An allow-list, not a list of the keys
// known to execute: git grows new ones (core.fsmonitor, core.alternateRefsCommand,
// trailer.*.cmd, ...), and an alias can carry `-c` options of its own.
//
// The reader is a port of git's own (config.c: git_parse_source, get_base_var, get_value,
// parse_value), so that what it reads is what git reads: a file it cannot read whole is one git
// would refuse to run beside, and the caller treats it as one to take away whole. The same goes
// for the other files git reads a path from (a `.git` file, a `commondir`) and for how git expands
// a path it reads (`~`, `~user`). tests/sandbox/git_config_test.cpp checks each against the real
// git over a generated table of texts, and the `git_config_git` fuzz target does the same for
// whatever the fuzzer makes.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cordon::sandbox::git_config {

// Each entry as git hands it to the code that uses it: git's strings end at a NUL, so a NUL in a
// value ends the value, and one in a subsection ends the whole name there (`[core "bare\0x"]
// y = 1` is `core.bare`, which git obeys).
struct entry {
    std::string section;     // lower-cased ("core", "remote")
    std::string subsection;  // as written (`[remote "origin"]`), lower-cased in `[remote.origin]`
    bool has_subsection = false;
    std::string name;                  // lower-cased ("fsmonitor")
    std::optional<std::string> value;  // nullopt: a name alone, which git reads as true
    // The entry's bytes in the file: from the first letter of its name to the newline that ends
    // it (continuation lines included), that newline excluded.
    std::size_t begin = 0;
    std::size_t end = 0;

    // "section.subsection.name", as `git config --list` prints it.
    [[nodiscard]] std::string key() const;
};

// How whitespace inside an unquoted value reads. git releases from 2024 on keep it as written;
// older ones made each such character a space (`a<TAB>b` was `a b`). Whoever must know what any
// git on the host reads (the planner, looking for where hooks run) reads both.
enum class whitespace { kept, spaces };

// Every entry of `text`, in order, or why git would not read it (one line, with the line number).
[[nodiscard]] std::variant<std::vector<entry>, std::string> parse(
    std::string_view text, whitespace inside = whitespace::kept);

// What git reads of a `.git` file (setup.c, read_gitfile_gently): the path after "gitdir: " (one
// space, no more, no less), to the end of the file less its trailing CRs and LFs, up to a NUL;
// nullopt when git reads none (no such prefix, nothing after it, a file above 1 MiB). Relative to
// the directory holding the file.
inline constexpr std::size_t gitfile_limit = std::size_t{1} << 20;
[[nodiscard]] std::optional<std::string> gitfile_target(std::string_view text);

// What git reads of a `commondir` (setup.c, get_common_dir_noenv): the whole file less its
// trailing CRs and LFs, up to a NUL. Relative to the git directory holding it; empty names that
// directory itself.
[[nodiscard]] std::string commondir_target(std::string_view text);

// A path git read from its configuration, expanded as git does (path.c, interpolate_path): `~`
// and `~/...` against `home`, `~user/...` against that user's home directory; every path git may
// take it for (`%(prefix)/...` is git's own prefix since git 2.32, the text as written before:
// each prefix a git on this host may have is listed). Empty when git cannot expand it (an unknown
// user), which git refuses.
[[nodiscard]] std::vector<std::string> expanded_paths(std::string_view value,
                                                      std::string_view home);

// Which file an entry is read from: a git directory's configuration (`config`,
// `config.worktree`), or the work tree's `.gitmodules` (which git reads for submodules' paths and
// URLs only).
enum class file_kind { repository, gitmodules };

// Why git may run a program or read more configuration because of `e` ("core.fsmonitor is not
// known to be inert"), or nullopt when it is on the allow-list.
[[nodiscard]] std::optional<std::string> offence(const entry& e, file_kind kind);

// `text` without the bytes of the entries `drop` (each a range of parse()'s), the newlines that
// end them kept: a section header stays, emptied.
[[nodiscard]] std::string without(std::string_view text, std::span<const entry> drop);

}  // namespace cordon::sandbox::git_config
