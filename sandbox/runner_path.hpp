// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Where the runners come from. A runner runs before any confinement, possibly as root, and the
// next cordon process will run it again: it must come from a place no confined command can write.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::sandbox {

// Why `path` cannot be trusted as a runner (empty when it can): it and every directory above it
// must be owned by root (or by `also_owner`) and writable by nobody else, and it must be an
// executable regular file. One exception: a directory so owned with the sticky bit (/tmp,
// /var/tmp) may be writable by all when the entry beneath it on the way is a directory, since
// nobody but that entry's owner can then rename or remove it, and a directory cannot be
// hard-linked in from elsewhere. `path` must be canonical (symlinks already resolved).
[[nodiscard]] std::string untrusted_because(const std::filesystem::path& path,
                                            uid_t also_owner = 0);

// The only directories runners (and the programs cordon itself names: `true` for probes, `bash`
// for `cordon run -c`) are taken from: /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin,
// /sbin, /bin, canonical and de-duplicated. A fixed set, so that no PATH of any later process can
// point somewhere else, and every one of them is protected from workspace-write runs.
[[nodiscard]] const std::vector<std::filesystem::path>& trusted_directories();

// Looks for `name` in trusted_directories(), in the order PATH lists them (the rest after, in
// the order above), keeping only a candidate for which untrusted_because() is empty: a bwrap in
// an active virtualenv's bin/, in a home directory or in any directory a user can write is never
// picked. Empty when none qualifies; `skipped` then says what was passed over and why.
[[nodiscard]] std::filesystem::path find_trusted_executable(std::string_view name,
                                                            std::string* skipped = nullptr);

// Where cordon-landlock is looked for on behalf of the program at `executable` (canonical), in
// order: beside it (the build tree, where everything lands in bin/), then `relative_libexec` from
// its directory (an installed cordon, wherever its prefix was moved), then, when cordon's code is
// in a shared library at `library` (canonical), `library_relative_libexec` from the library's
// directory (a program linked with libcordon.so of a moved prefix), then `absolute_libexec` (a
// program that links the static library and lives elsewhere). Duplicates are left out; an empty
// or relative path adds nothing. Never PATH or an environment variable: whoever sets those for a
// later cordon would choose what runs before any confinement. `built_against_libexec`, when
// absolute, comes just before `absolute_libexec`: the libexec directory of the installed prefix
// the program was compiled against (CORDON_INSTALLED_LIBEXEC_DIR, cordon/local_provider.hpp),
// which is how a program linked with the static library finds a prefix installed or moved
// elsewhere than the library was configured for.
[[nodiscard]] std::vector<std::filesystem::path> launcher_candidates(
    const std::filesystem::path& executable, const std::filesystem::path& relative_libexec,
    const std::filesystem::path& absolute_libexec, const std::filesystem::path& library = {},
    const std::filesystem::path& library_relative_libexec = {},
    const std::filesystem::path& built_against_libexec = {});

// The directory a program noted as the libexec of the prefix it was built against (empty: none).
[[nodiscard]] std::filesystem::path built_against_libexec();

// Whether the directory `relative` climbs to from `dir` (its leading ".." components taken: the
// root of the prefix it names) is missing or writable by group or others, sticky or not. A
// relative candidate there is left out: another user's entries may lie in it.
[[nodiscard]] bool prefix_open_to_others(std::filesystem::path dir,
                                         const std::filesystem::path& relative);

// The same for this process (/proc/self/exe, and the shared object holding this code when it is
// not the executable: its link map's name, dladdr1(3), when absolute) and the directories
// configured at build time: CMake's libexec directory + "/cordon", relative to its bin and lib
// directories (each left out when prefix_open_to_others()) and absolute. Empty when
// /proc/self/exe cannot be read (the absolute candidate alone would then be a guess).
[[nodiscard]] std::vector<std::filesystem::path> launcher_candidates();

// Every place launcher_candidates() could name for this process, whatever the modes of the
// directories on the way: the relative ones too when prefix_open_to_others() leaves them out
// today. A run that could change those modes (chmod of its own directories) changes which of
// them count, so all are protected, and so are those after the one found: a run that could make
// the launcher it used fail the trust check would otherwise choose which one comes next.
[[nodiscard]] std::vector<std::filesystem::path> launcher_places();

// What find_launcher() decided.
struct launcher_lookup {
    std::filesystem::path path;  // the first candidate that exists, canonical; empty: none does
    std::string refused;         // why `path` may not run, or why there is none; empty: it may
    // The candidates before `path`, none of which exists. A command that could create one would
    // choose the next process's launcher: they are protected like the launcher itself.
    std::vector<std::filesystem::path> passed_over;
    // The symbolic links on the way to the candidates looked at (the link itself, in its
    // canonical directory): one pointed elsewhere would choose the next launcher too.
    std::vector<std::filesystem::path> links;
};

// The first of `candidates` that exists, and whether it may run: untrusted_because() with this
// process's own user as an owner too (the launcher runs with this process's rights, so that user
// could as well change the process itself), and every symbolic link on the way in a directory
// only they can write. An existing candidate that fails the check is refused, never passed over
// for a later one: the caller says why nothing runs rather than running something else. So is a
// candidate whose way runs through a symbolic link that points to nothing.
[[nodiscard]] launcher_lookup find_launcher(std::span<const std::filesystem::path> candidates);

}  // namespace cordon::sandbox
