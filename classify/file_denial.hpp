// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Whether the file walls refused a run, from what it printed, in any language (docs/sandbox.md,
// "Classification"). Two rungs of evidence, the better first:
//
//   1. a path the walls govern: a line of the retained stderr names a path that the run could not
//      write (read-only mode, outside the writable roots, a protected path kept read-only), could
//      not read (a denied read), or could not move (a mount point bwrap made: the protected paths
//      it keeps in place, the writable roots), with the refusal the wall answers for it (EROFS,
//      EACCES, EPERM, EXDEV in any runtime's words; EBUSY for a mount point; EISDIR for a denied
//      file that bwrap covered with a directory), and the host itself would have allowed it (the
//      invoking user may write or read it there, its filesystem is not read-only). Every runtime
//      prints the path it failed on, whatever words it uses for the errno;
//   2. the dialect, a heuristic: the backend's signatures (sandbox/backends.cpp) and the runtimes'
//      own sentences for a refusal that name no path (runtime_denial_signatures: SQLite's readonly
//      database, Python's missing temporary directory, Java's AccessDeniedException, git's
//      insufficient permission), anywhere in the stderr stream.
//
// A dialect match is refuted when the whole stderr was retained and every line of it carrying the
// dialect names an absolute path the host answered for and none of its paths is the walls':
// "Permission denied" about a file in the workspace the user may not write anyway, or a test
// suite's report of one, is the host's answer and no reason to ask for a wider mode. A line that
// names no path, or only relative ones, cannot be refuted: a relative name is looked for where the
// run started, and the command may have changed directory since (`cd ../pkg2 && npm run build`), so
// it may prove a denial but never refute one.
//
// Nothing better is there to read on this kernel: Landlock (ABI 7) logs its denials only to the
// audit subsystem, which is off unless the host runs an audit daemon, and which only a process
// with CAP_AUDIT_READ may read; cordon does not turn the host's auditing on (docs/sandbox.md).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/mode.hpp"
#include "cordon/outcome.hpp"

namespace cordon::classify {

// What the file walls of one confined run govern, as its record names them.
struct file_walls {
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    sandbox::backend_kind backend = sandbox::backend_kind::bwrap;
    // Workspace-write: where the run may write (canonical): its writable roots, and its /tmp when
    // that is writable (bwrap's private tmpfs, the host's with --tmp host, the Landlock rung's
    // private directory).
    std::vector<std::filesystem::path> writable;
    // The protected paths the rung keeps (canonical): read-only, or, for one that holds another,
    // in place (bwrap's mount points). The Landlock rung keeps them by copy: never refused then.
    std::vector<std::filesystem::path> kept;
    std::vector<std::filesystem::path> hidden;  // the denied reads (canonical)
    std::filesystem::path workdir;              // where a relative name is looked for
};

// What the host is at a path: the path resolved, and whether all of it is there.
struct host_entry {
    std::filesystem::path path;  // absolute, its symlinks resolved as far as it is there
    bool exists = false;
};

// What the host allows at a path, without the walls; tests give their own. Every question the
// classifier asks the host's filesystem goes through here: the paths are ones a command printed,
// asked by cordon (root, unconfined) on its event loop. The host's answers therefore never
// follow a name onto a remote or automounted filesystem (NFS, SMB/CIFS, FUSE, autofs, and the
// like): a hung server would stall every run, and a printed `/net/host/x` would make autofs mount
// a host the command chose. They walk one component at a time (openat(2) with O_PATH and
// O_NOFOLLOW, fstatat(2) with AT_NO_AUTOMOUNT, their symlinks followed by hand, at most 16 hops
// and 64 components) and check each directory's filesystem (fstatfs(2)) before looking into it,
// and at each component it enters. A name they stop on has no answer.
class host_view {
public:
    virtual ~host_view() = default;
    // `path` (absolute, lexically normal) as the host has it; nullopt when the walk stopped (a
    // remote or automounted filesystem, too many components or symlinks, an error).
    [[nodiscard]] virtual std::optional<host_entry> resolve(
        const std::filesystem::path& path) const;
    // access(2) with the effective ids, of `path` or, when it is not there, of the nearest
    // directory above it that is: `mode` is R_OK or W_OK. False without an answer.
    [[nodiscard]] virtual bool allows(const std::filesystem::path& path, int mode) const;
    // Whether the filesystem holding `path` (or the nearest directory above it) is read-only.
    // True without an answer (the host's refusal, not the walls').
    [[nodiscard]] virtual bool read_only(const std::filesystem::path& path) const;
    // Whether `path` is a directory on the host (false when it is not there; true without an
    // answer, which then proves nothing).
    [[nodiscard]] virtual bool directory(const std::filesystem::path& path) const;
};

// How many names one classification may ask the host about (host_view::resolve): beyond it, a
// name neither proves nor refutes a denial.
struct lookup_budget {
    std::size_t left = 64;
    [[nodiscard]] bool take() {
        if (left == 0) return false;
        --left;
        return true;
    }
};

// The runtimes' sentences for a refusal of the file walls that carry none of the backend's words
// (lower-case, as the scanner compares); heuristics, scanned over the whole stream.
[[nodiscard]] std::span<const std::string> runtime_denial_signatures();

struct file_reading {
    std::optional<denial_evidence> evidence;  // by path, when a line proves it
    // The first line carrying the dialect (for the record of a dialect denial).
    std::string dialect_line;
    // Every line carrying the dialect names paths the walls do not govern (or the host refuses
    // too), and at least one such line was found.
    bool refuted = false;
};

// Reads `stderr_text` (the retained tail) line by line; `dialect` is the backend's signatures
// plus runtime_denial_signatures(). Looks at the first 512 lines that carry a refusal at most.
[[nodiscard]] file_reading read_file_denial(std::string_view stderr_text, const file_walls& walls,
                                            std::span<const std::string> dialect,
                                            const host_view& host);

// The paths one line names: quoted names, absolute or relative ones (`./x`, `a/b`), and bare
// names that exist in `workdir` (asked of `host`, each from `budget`); as written (unresolved),
// at most 16. Public for its tests.
[[nodiscard]] std::vector<std::string> named_paths(std::string_view line,
                                                   const std::filesystem::path& workdir,
                                                   const host_view& host, lookup_budget& budget);

}  // namespace cordon::classify
