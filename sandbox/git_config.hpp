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
// would refuse to run beside, and the caller treats it as one to take away whole.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cordon::sandbox::git_config {

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

// Every entry of `text`, in order, or why git would not read it (one line, with the line number).
[[nodiscard]] std::variant<std::vector<entry>, std::string> parse(std::string_view text);

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
