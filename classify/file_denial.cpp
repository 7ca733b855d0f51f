// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "classify/file_denial.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>

#include "classify/signature_scanner.hpp"
#include "cordon/unique_fd.hpp"

namespace cordon::classify {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t most_lines = 512;     // lines carrying a refusal looked at
constexpr std::size_t most_paths = 16;      // paths looked up per line
constexpr std::size_t longest_line = 512;   // bytes of a line kept in the record
constexpr std::size_t longest_path = 4096;  // PATH_MAX: a longer "name" is no path

// What one wall answers, in the words runtimes print it with (lower-case).
// EROFS: strerror, Rust's "(os error 30)", Node's "erofs:".
constexpr std::array read_only_words{std::string_view("read-only file system"),
                                     std::string_view("(os error 30)"), std::string_view("erofs:")};
// EBUSY: a mount point cannot be moved or removed (strerror; Node's "resource busy or locked").
constexpr std::array busy_words{std::string_view("device or resource busy"),
                                std::string_view("resource busy or locked"),
                                std::string_view("(os error 16)")};
// EISDIR: a denied file that bwrap covered with a directory (strerror; Node's words).
constexpr std::array directory_words{std::string_view("is a directory"),
                                     std::string_view("illegal operation on a directory"),
                                     std::string_view("(os error 21)")};

template <std::size_t N>
bool has_any(const std::string& lower, const std::array<std::string_view, N>& words) {
    return std::any_of(words.begin(), words.end(),
                       [&lower](std::string_view word) { return lower.find(word) != lower.npos; });
}

bool has_any(const std::string& lower, std::span<const std::string> words) {
    return std::any_of(words.begin(), words.end(), [&lower](const std::string& word) {
        return !word.empty() && lower.find(word) != lower.npos;
    });
}

bool within(const fs::path& path, const fs::path& dir) {
    auto p = path.begin();
    for (auto d = dir.begin(); d != dir.end(); ++d, ++p) {
        if (d->empty()) continue;  // a trailing separator
        if (p == path.end() || *p != *d) return false;
    }
    return true;
}

bool within_any(const fs::path& path, const std::vector<fs::path>& dirs) {
    return std::any_of(dirs.begin(), dirs.end(),
                       [&path](const fs::path& dir) { return within(path, dir); });
}

// The name as written, absolute and lexically normal (the host resolves its symlinks).
fs::path absolute(std::string_view named, const fs::path& workdir) {
    fs::path path(named);
    if (path.is_relative()) path = workdir / path;
    return path.lexically_normal();
}

// ---- the host's answers, one component at a time ----------------------------------------------

constexpr std::size_t most_components = 64;  // per name, the symlinks' targets included
constexpr std::size_t most_hops = 16;        // symlinks followed per name

// Filesystems a name is not followed onto: automounted, remote or served by a process (a lookup
// there may mount a host the command named, or hang on a server), and the kernel's own, whose
// permission bits do not say what a write does (root may "write" /sys/foo, which the kernel then
// refuses on the host too): the host has no answer for a name there.
bool unanswerable(int fd) {
    struct statfs st {};
    if (::fstatfs(fd, &st) != 0) return true;
    switch (static_cast<std::uint32_t>(st.f_type)) {
        case AUTOFS_SUPER_MAGIC:
        case NFS_SUPER_MAGIC:
        case 0x65735546U:  // FUSE_SUPER_MAGIC
        case SMB_SUPER_MAGIC:
        case 0xFF534D42U:  // CIFS
        case 0xFE534D42U:  // SMB2
        case CODA_SUPER_MAGIC:
        case AFS_SUPER_MAGIC:
        case AFS_FS_MAGIC:
        case CEPH_SUPER_MAGIC:
        case V9FS_MAGIC:
        case 0x20030528U:  // ORANGEFS (PVFS2)
        case 0x0BD00BD0U:  // Lustre
        case 0x01161970U:  // GFS2
        case 0x7461636FU:  // OCFS2
        case PROC_SUPER_MAGIC:
        case SYSFS_MAGIC:
        case CGROUP_SUPER_MAGIC:
        case CGROUP2_SUPER_MAGIC:
        case DEBUGFS_MAGIC:
        case TRACEFS_MAGIC:
        case SECURITYFS_MAGIC:
        case BPF_FS_MAGIC:
        case 0x62656570U:  // configfs
        case PSTOREFS_MAGIC:
        case EFIVARFS_MAGIC:
        case SELINUX_MAGIC:
        case SMACK_MAGIC:
            return true;
        default:
            return false;
    }
}

// Where a walk ended: the nearest entry of the path that is there, opened O_PATH.
struct walk_end {
    unique_fd parent;  // its directory (invalid for the root)
    unique_fd fd;
    std::string name;  // its name in `parent`
    host_entry entry;
};

// Walks `path` (absolute, lexically normal) from the root, never onto a remote filesystem.
std::optional<walk_end> walk(const fs::path& path) {
    if (!path.is_absolute()) return std::nullopt;
    constexpr int at_path = O_PATH | O_NOFOLLOW | O_CLOEXEC;
    std::vector<unique_fd> dirs;
    std::vector<std::string> names;  // of dirs[1..]
    dirs.emplace_back(::open("/", at_path | O_DIRECTORY));
    if (!dirs.back() || unanswerable(dirs.back().get())) return std::nullopt;
    std::vector<std::string> pending;  // reversed: the next component last
    for (const fs::path& part : path.relative_path())
        pending.push_back(part.string());
    std::reverse(pending.begin(), pending.end());
    std::size_t components = 0;
    std::size_t hops = 0;
    bool whole = true;
    while (!pending.empty()) {
        const std::string name = std::move(pending.back());
        pending.pop_back();
        if (name.empty() || name == ".") continue;
        if (++components > most_components) return std::nullopt;
        if (name == "..") {
            if (dirs.size() > 1) {
                dirs.pop_back();
                names.pop_back();
            }
            continue;
        }
        struct stat st {};
        if (::fstatat(dirs.back().get(), name.c_str(), &st,
                      AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) != 0) {
            if (errno == ENOMEM || errno == EINTR) return std::nullopt;
            pending.push_back(name);  // not there (or not searchable): the rest stays as written
            whole = false;
            break;
        }
        if (S_ISLNK(st.st_mode)) {
            if (++hops > most_hops) return std::nullopt;
            std::string target(static_cast<std::size_t>(PATH_MAX), '\0');
            const ssize_t got =
                ::readlinkat(dirs.back().get(), name.c_str(), target.data(), target.size());
            if (got <= 0 || static_cast<std::size_t>(got) >= target.size()) return std::nullopt;
            target.resize(static_cast<std::size_t>(got));
            const fs::path to(target);
            if (to.is_absolute()) {
                dirs.resize(1);
                names.clear();
            }
            std::vector<std::string> parts;
            for (const fs::path& part : to.relative_path())
                parts.push_back(part.string());
            pending.insert(pending.end(), parts.rbegin(), parts.rend());
            continue;
        }
        unique_fd next(::openat(dirs.back().get(), name.c_str(), at_path));
        if (!next || unanswerable(next.get())) return std::nullopt;
        dirs.push_back(std::move(next));
        names.push_back(name);
        if (!S_ISDIR(st.st_mode) && !pending.empty()) {
            whole = false;  // a file with a path below it: the rest is not there
            break;
        }
    }
    walk_end out;
    fs::path at("/");
    for (const std::string& name : names)
        at /= name;
    for (auto rest = pending.rbegin(); rest != pending.rend(); ++rest)
        at /= *rest;
    out.entry = host_entry{at.lexically_normal(), whole};
    out.fd = std::move(dirs.back());
    if (dirs.size() > 1) {
        out.parent = std::move(dirs[dirs.size() - 2]);
        out.name = names.back();
    }
    return out;
}

enum class wall {
    none,         // the walls let the run do anything the host does there
    hidden,       // a denied read: neither read nor written
    read_only,    // not writable in the run
    mount_point,  // bwrap's bind: neither moved nor removed (EBUSY)
};

// Whether a kept path is kept in place (a bind onto itself, its contents writable): it holds
// another kept path (the git directory that holds the hooks).
bool kept_in_place(const fs::path& kept, const file_walls& walls) {
    return std::any_of(walls.kept.begin(), walls.kept.end(), [&kept](const fs::path& other) {
        return other != kept && within(other, kept);
    });
}

// What the walls did to `path` (resolved), for a refusal in the words `busy` or not.
wall wall_at(const fs::path& path, const file_walls& walls, bool busy) {
    if (within_any(path, walls.hidden)) return wall::hidden;
    const bool bwrap = walls.backend == sandbox::backend_kind::bwrap;
    if (walls.mode == sandbox::sandbox_mode::read_only) return wall::read_only;
    if (walls.mode != sandbox::sandbox_mode::workspace_write) return wall::none;
    if (busy) {
        // bwrap binds each writable root and each kept path: its mount points.
        const auto is = [&path](const fs::path& mount) { return mount == path; };
        if (bwrap && (std::any_of(walls.kept.begin(), walls.kept.end(), is) ||
                      std::any_of(walls.writable.begin(), walls.writable.end(), is))) {
            return wall::mount_point;
        }
        return wall::none;
    }
    if (!within_any(path, walls.writable)) return wall::read_only;
    // The Landlock rung keeps the protected paths by copy, put back after the run: writable
    // while it runs.
    if (!bwrap) return wall::none;
    for (const fs::path& kept : walls.kept) {
        if (within(path, kept) && !kept_in_place(kept, walls)) return wall::read_only;
    }
    return wall::none;
}

// What a line says was refused, by the wall that answers it.
struct refusal {
    bool dialect = false;    // the backend's or a runtime's words (EROFS, EACCES, EPERM, EXDEV...)
    bool read_only = false;  // EROFS among them
    bool busy = false;       // EBUSY
    bool directory = false;  // EISDIR
    [[nodiscard]] bool any() const { return dialect || busy || directory; }
};

// Whether the walls, and not the host, refused `path` as `said`.
bool walls_refused(const fs::path& path, const refusal& said, const file_walls& walls,
                   const host_view& host) {
    if (said.busy && wall_at(path, walls, true) == wall::mount_point) return true;
    const wall at = wall_at(path, walls, false);
    if (said.directory && at == wall::hidden && walls.backend == sandbox::backend_kind::bwrap &&
        !host.directory(path)) {
        return true;
    }
    if (!said.dialect) return false;
    switch (at) {
        case wall::none:
        case wall::mount_point:
            return false;
        case wall::hidden:
            return host.allows(path, R_OK);
        case wall::read_only:
            // The host refuses it too: its filesystem is read-only, or the user may not write
            // there (a write the walls would not have let through either way).
            if (said.read_only) return !host.read_only(path);
            return host.allows(path, W_OK);
    }
    return false;
}

std::string_view trimmed(std::string_view word) {
    constexpr std::string_view leading = "'\"`([{<";
    constexpr std::string_view trailing = "'\"`)]}>,;:.";
    while (!word.empty() && leading.find(word.front()) != std::string_view::npos)
        word.remove_prefix(1);
    while (!word.empty() && trailing.find(word.back()) != std::string_view::npos) {
        // "./" and "../" stay what they are.
        if (word.back() == '.' &&
            (word.size() == 1 || word[word.size() - 2] == '/' || word[word.size() - 2] == '.')) {
            break;
        }
        word.remove_suffix(1);
    }
    return word;
}

bool blank_in(std::string_view text) {
    return text.find_first_of(" \t") != std::string_view::npos;
}

}  // namespace

std::optional<host_entry> host_view::resolve(const fs::path& path) const {
    std::optional<walk_end> end = walk(path);
    if (!end) return std::nullopt;
    return std::move(end->entry);
}

bool host_view::allows(const fs::path& path, int mode) const {
    const std::optional<walk_end> end = walk(path);
    if (!end) return false;
    // A file that is not there is created in its directory: the directory is asked for W_OK.
    // By its name in its directory, not followed: the walk found no symlink and no automount
    // point there.
    if (!end->parent) return ::faccessat(AT_FDCWD, "/", mode, AT_EACCESS) == 0;
    return ::faccessat(end->parent.get(), end->name.c_str(), mode,
                       AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0;
}

bool host_view::read_only(const fs::path& path) const {
    const std::optional<walk_end> end = walk(path);
    struct statvfs st {};
    if (!end || ::fstatvfs(end->fd.get(), &st) != 0) return true;
    return (st.f_flag & ST_RDONLY) != 0;
}

bool host_view::directory(const fs::path& path) const {
    const std::optional<walk_end> end = walk(path);
    if (!end) return true;  // no answer: no proof that bwrap's mask made the directory
    struct stat st {};
    return end->entry.exists && ::fstat(end->fd.get(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::span<const std::string> runtime_denial_signatures() {
    // Each lower-case, as the scanner compares. The runtimes' other words for a refusal carry
    // the backend's (strerror's) words already: Python's "[Errno 13] Permission denied", Node's
    // "EACCES: permission denied", Go's "open /x: read-only file system", Rust's "Permission
    // denied (os error 13)", Java's "(Permission denied)" and "FileSystemException: /x: Read-only
    // file system", git's "Unable to create '...': Read-only file system".
    static const std::array<std::string, 4> signatures{
        // SQLite (SQLITE_READONLY): it opened the database read-only, its file or directory not
        // writable, and the first write fails; Python's sqlite3 and the sqlite3 shell print it.
        "attempt to write a readonly database",
        // Python's tempfile: not one of TMPDIR, /tmp, /var/tmp, /usr/tmp and the working
        // directory took a file; the errno it raises is ENOENT.
        "no usable temporary directory found",
        // Java NIO: EACCES is `java.nio.file.AccessDeniedException: PATH`, without strerror's
        // words.
        "accessdeniedexception",
        // git, when its object directory is not writable (EACCES, or EROFS on some paths).
        "insufficient permission for adding an object",
    };
    return signatures;
}

std::vector<std::string> named_paths(std::string_view line, const fs::path& workdir,
                                     const host_view& host, lookup_budget& budget) {
    std::vector<std::string> out;
    const auto add = [&out](std::string_view name) {
        if (out.size() >= most_paths) return;
        if (name.empty() || name.size() > longest_path || name == "." || name == "..") return;
        if (std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
    };
    // Quoted names, which may hold blanks or no slash at all: '.git', "my file.txt". What they
    // take is blanked out of what the words are looked for in.
    std::string rest(line);
    for (std::size_t at = 0; at < line.size() && out.size() < most_paths;) {
        // Not backquotes: Rust and Markdown put code in them (`Result::unwrap()`), not paths.
        const char quote = line[at];
        if (quote != '\'' && quote != '"') {
            ++at;
            continue;
        }
        const std::size_t end = line.find(quote, at + 1);
        if (end == std::string_view::npos) break;
        const std::string_view inside = line.substr(at + 1, end - at - 1);
        // "Permission denied" quoted (Rust's Debug form of an io::Error) is words, not a name.
        if (inside.find('/') != std::string_view::npos || !blank_in(inside)) add(inside);
        std::fill(rest.begin() + static_cast<std::ptrdiff_t>(at),
                  rest.begin() + static_cast<std::ptrdiff_t>(end + 1), ' ');
        at = end + 1;
    }
    // A line's leading `PROGRAM:` is who speaks, not what was refused (`/usr/bin/bash: line 1:
    // ./s.sh: Permission denied`, `/usr/bin/ld: cannot open output file ...`): the shell or the
    // linker is read-only under every wall, and taking it for the name would prove a denial the
    // host would have answered the same way.
    if (const std::size_t first = rest.find_first_not_of(" \t"); first != std::string::npos) {
        const std::size_t blank = rest.find_first_of(" \t", first);
        if (blank != std::string::npos && blank > first + 1 && rest[blank - 1] == ':') {
            std::fill(rest.begin() + static_cast<std::ptrdiff_t>(first),
                      rest.begin() + static_cast<std::ptrdiff_t>(blank), ' ');
        }
    }
    // Unquoted names: a path with a slash (not a URL), or a bare name that is there.
    line = rest;
    for (std::size_t at = 0; at < line.size() && out.size() < most_paths;) {
        const std::size_t start = line.find_first_not_of(" \t", at);
        if (start == std::string_view::npos) break;
        std::size_t end = line.find_first_of(" \t", start);
        if (end == std::string_view::npos) end = line.size();
        const std::string_view word = trimmed(line.substr(start, end - start));
        at = end;
        if (word.empty() || word.find("://") != std::string_view::npos) continue;
        if (word.find('/') != std::string_view::npos) {
            add(word);
        } else if (!workdir.empty() && word.size() <= longest_path &&
                   std::find(out.begin(), out.end(), word) == out.end() && budget.take()) {
            const std::optional<host_entry> there = host.resolve(absolute(word, workdir));
            if (there && there->exists) add(word);
        }
    }
    return out;
}

file_reading read_file_denial(std::string_view stderr_text, const file_walls& walls,
                              std::span<const std::string> dialect, const host_view& host) {
    file_reading out;
    lookup_budget budget;
    std::size_t looked = 0;
    bool unexplained = false;  // a line carries the dialect but names no path
    bool explained = false;    // a line carries the dialect and names paths
    while (!stderr_text.empty() && looked < most_lines) {
        std::size_t end = stderr_text.find('\n');
        if (end == std::string_view::npos) end = stderr_text.size();
        std::string_view line = stderr_text.substr(0, end);
        stderr_text.remove_prefix(std::min(end + 1, stderr_text.size()));
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        const std::string lower = ascii_lower(line);
        refusal said;
        said.dialect = has_any(lower, dialect);
        said.read_only = said.dialect && has_any(lower, read_only_words);
        said.busy = has_any(lower, busy_words);
        said.directory = has_any(lower, directory_words);
        if (!said.any()) continue;
        ++looked;
        if (said.dialect && out.dialect_line.empty())
            out.dialect_line = std::string(line.substr(0, longest_line));
        const std::vector<std::string> names = named_paths(line, walls.workdir, host, budget);
        // Only an absolute name the host answered for can refute the dialect. A relative one is
        // looked for where the run started, and the command may have changed directory since
        // (`cd ../pkg2 && npm run build` failing on 'dist/index.js', which the workspace has too);
        // a quoted word ('main' in a Rust panic) may be no path at all. Either may still prove a
        // denial. A name past the budget, or one the host could not answer for (a remote
        // filesystem), does neither.
        bool firm = false;
        for (const std::string& name : names) {
            if (!budget.take()) break;
            const std::optional<host_entry> there = host.resolve(absolute(name, walls.workdir));
            if (!there) continue;
            if (walls_refused(there->path, said, walls, host)) {
                out.evidence = denial_evidence{denial_source::path, there->path.string(),
                                               std::string(line.substr(0, longest_line))};
                return out;
            }
            firm = firm || name.starts_with('/');
        }
        if (!said.dialect) continue;
        (firm ? explained : unexplained) = true;
    }
    // Lines not looked at (more than most_lines) may hold what would not be refuted.
    out.refuted = explained && !unexplained && looked < most_lines;
    return out;
}

}  // namespace cordon::classify
