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
// dialect names paths and none of them is the walls': "Permission denied" about a file in the
// workspace the user may not write anyway, or a test suite's report of one, is the host's answer
// and no reason to ask for a wider mode. A line that names no path cannot be refuted.
//
// Nothing better is there to read on this kernel: Landlock (ABI 7) logs its denials only to the
// audit subsystem, which is off unless the host runs an audit daemon, and which only a process
// with CAP_AUDIT_READ may read; cordon does not turn the host's auditing on (docs/sandbox.md).
#pragma once

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

// What the host allows at a path, without the walls; tests give their own.
class host_view {
public:
    virtual ~host_view() = default;
    // access(2) with the effective ids, of `path` or, when it is not there, of the nearest
    // directory above it that is: `mode` is R_OK or W_OK.
    [[nodiscard]] virtual bool allows(const std::filesystem::path& path, int mode) const;
    // Whether the filesystem holding `path` (or the nearest directory above it) is read-only.
    [[nodiscard]] virtual bool read_only(const std::filesystem::path& path) const;
    // Whether `path` is a directory on the host (false when it is not there).
    [[nodiscard]] virtual bool directory(const std::filesystem::path& path) const;
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
// names that exist in `workdir`; as written (unresolved). Public for its tests.
[[nodiscard]] std::vector<std::string> named_paths(std::string_view line,
                                                   const std::filesystem::path& workdir);

}  // namespace cordon::classify
