// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/quarantine.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <span>
#include <vector>

#include "cordon/policy.hpp"
#include "sandbox/directory_listing.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/write_all.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

// What a copy across filesystems may take before the rest is removed instead of kept. A person
// looks at a quarantine by its paths: a tree deeper than `copy_deepest` is a command's trick, and
// one whose paths exceed PATH_MAX could not be looked at.
constexpr std::uint64_t copy_budget_bytes = std::uint64_t{64} << 20;
constexpr std::uint64_t copy_budget_entries = 100'000;
constexpr std::size_t copy_deepest = 128;

std::string error_text(int error) {
    return std::strerror(error);
}

// `name`, then `name.1`, `name.2`, ...: a second thing of the same name in one judgement.
std::string numbered(const std::string& name, int attempt) {
    return attempt == 0 ? name : name + "." + std::to_string(attempt);
}
constexpr int numbered_attempts = 100;

// Which inode a directory is: what a walk going back up checks it arrived at.
struct inode_id {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const inode_id&) const = default;
};

inode_id identity_of(const struct stat& st) {
    return {st.st_dev, st.st_ino};
}

// A directory on the way down: its name in its parent, which inode it is, and the entries still
// to visit. Only the innermost directory of a walk is open, so that a tree thousands of levels
// deep costs neither a descriptor nor a stack frame per level (the names cost what the tree
// holds, once).
struct walk_frame {
    std::string name;
    inode_id id;
    std::vector<std::string> pending;
};

// The parent ("..") of the directory `dir`, which must be the directory `expected` the walk came
// down from: another means the tree was moved under the walk, and it must not act wherever the
// way up now leads. The reason when it cannot be opened or is another.
std::variant<unique_fd, std::string> open_parent_checked(int dir, const inode_id& expected) {
    unique_fd parent(::openat(dir, "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!parent || ::fstat(parent.get(), &st) != 0) {
        return "cannot go back up the tree: " + error_text(errno);
    }
    if (identity_of(st) != expected) return std::string("the tree was moved while it was walked");
    return parent;
}

// Copies an entry from one filesystem to another, directory by directory as base::remove_tree
// walks: regular files, symlinks (as links) and directories; anything else is left out.
class tree_copy {
public:
    // Copies the entry `name` of `from` to the new entry `as` of `to`. False when the budget or
    // the depth ran out or a step failed; what was made of the copy is then removed.
    bool run(int from, const std::string& name, int to, const std::string& as) {
        bool copied = copy_entry(from, name, to, as);
        while (copied && !levels_.empty()) {
            walk_frame& innermost = levels_.back().source;
            if (innermost.pending.empty()) {
                copied = leave();
                continue;
            }
            const std::string child = std::move(innermost.pending.back());
            innermost.pending.pop_back();
            copied = copy_entry(source_.get(), child, target_.get(), child);
        }
        levels_.clear();
        source_.reset();
        target_.reset();
        if (!copied && made_) (void)remove_tree(to, as);
        return copied;
    }

private:
    struct level {
        walk_frame source;
        inode_id target;
    };

    bool copy_entry(int from, const std::string& name, int to, const std::string& as) {
        if (entries_left_ == 0) return false;
        --entries_left_;
        struct stat st {};
        if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
        if (S_ISLNK(st.st_mode)) {
            const ssize_t got =
                ::readlinkat(from, name.c_str(), buffer_.data(), buffer_.size() - 1);
            if (got < 0) return false;
            buffer_[static_cast<std::size_t>(got)] = '\0';
            if (::symlinkat(buffer_.data(), to, as.c_str()) != 0) return false;
            made_ = true;
            return true;
        }
        if (S_ISREG(st.st_mode)) return copy_file(from, name, to, as, st);
        if (!S_ISDIR(st.st_mode)) return true;  // a FIFO, a socket, a device: nothing to keep
        if (levels_.size() >= copy_deepest) return false;
        unique_fd source(
            ::openat(from, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        struct stat opened {};
        if (!source || ::fstat(source.get(), &opened) != 0 ||
            identity_of(opened) != identity_of(st)) {
            return false;
        }
        auto names = names_in(source.get());
        if (!names || ::mkdirat(to, as.c_str(), 0700) != 0) return false;
        made_ = true;
        unique_fd target(::openat(to, as.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        struct stat made {};
        if (!target || ::fstat(target.get(), &made) != 0) return false;
        levels_.push_back({{name, identity_of(opened), std::move(*names)}, identity_of(made)});
        source_ = std::move(source);
        target_ = std::move(target);
        return true;
    }

    bool copy_file(int from, const std::string& name, int to, const std::string& as,
                   const struct stat& st) {
        if (static_cast<std::uint64_t>(st.st_size) > bytes_left_) return false;
        unique_fd in(::openat(from, name.c_str(),
                              O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        struct stat opened {};
        if (!in || ::fstat(in.get(), &opened) != 0 || !S_ISREG(opened.st_mode)) return false;
        unique_fd out(
            ::openat(to, as.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!out) return false;
        made_ = true;
        for (;;) {
            const ssize_t got = ::read(in.get(), buffer_.data(), buffer_.size());
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) return false;
            if (got == 0) break;
            // What is read counts: the file may have grown since it was looked at.
            const auto size = static_cast<std::size_t>(got);
            if (size > bytes_left_) return false;
            bytes_left_ -= size;
            if (!write_all(out.get(), std::string_view(buffer_.data(), size))) return false;
        }
        (void)::fchmod(out.get(), st.st_mode & 0700);
        return true;
    }

    // Both sides back up to the directories they came down from.
    bool leave() {
        levels_.pop_back();
        if (levels_.empty()) return true;
        auto source = open_parent_checked(source_.get(), levels_.back().source.id);
        auto target = open_parent_checked(target_.get(), levels_.back().target);
        if (!std::holds_alternative<unique_fd>(source) ||
            !std::holds_alternative<unique_fd>(target)) {
            return false;
        }
        source_ = std::move(std::get<unique_fd>(source));
        target_ = std::move(std::get<unique_fd>(target));
        return true;
    }

    std::uint64_t bytes_left_ = copy_budget_bytes;
    std::uint64_t entries_left_ = copy_budget_entries;
    // One buffer for the whole copy (file contents, link targets), on the heap.
    std::vector<char> buffer_ = std::vector<char>(std::size_t{64} << 10);
    std::vector<level> levels_;
    unique_fd source_;  // the innermost directory being copied, on each side
    unique_fd target_;
    bool made_ = false;  // the copy's top entry exists (the first thing made is it)
};

// Renames the entry `name` of `from` into `to` under the first free name of numbered(): the name
// it got, or nullopt with errno (EXDEV: another filesystem).
std::optional<std::string> rename_into(int from, const std::string& name, int to) {
    for (int attempt = 0; attempt < numbered_attempts; ++attempt) {
        const std::string kept = numbered(name, attempt);
        if (::renameat2(from, name.c_str(), to, kept.c_str(), RENAME_NOREPLACE) == 0) return kept;
        if (errno == EINVAL || errno == ENOSYS) {
            // A filesystem that does not support RENAME_NOREPLACE (EINVAL, renameat2(2)), or no
            // renameat2 at all: the name is looked at first. The quarantine is cordon's own
            // (0700), so nothing else makes it meanwhile.
            struct stat st {};
            if (::fstatat(to, kept.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
                errno = EEXIST;
            } else if (errno == ENOENT && ::renameat(from, name.c_str(), to, kept.c_str()) == 0) {
                return kept;
            }
        }
        if (errno != EEXIST) return std::nullopt;
    }
    return std::nullopt;
}

// The first name of numbered() that is free in `dir`.
std::optional<std::string> free_name(int dir, const std::string& name) {
    for (int attempt = 0; attempt < numbered_attempts; ++attempt) {
        std::string candidate = numbered(name, attempt);
        struct stat st {};
        if (::fstatat(dir, candidate.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) return candidate;
            return std::nullopt;
        }
    }
    return std::nullopt;
}

// `path` lexically normal, without a trailing separator.
fs::path normal_form(const fs::path& path) {
    fs::path out = path.lexically_normal();
    if (out.has_relative_path() && !out.has_filename()) out = out.parent_path();
    return out;
}

// The directory `path` (absolute and normal), each component opened from "/" without following a
// symlink and made 0700 where missing; -1 when it cannot be.
unique_fd make_directories_no_follow(const fs::path& path) {
    unique_fd at(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    for (const fs::path& part : path.relative_path()) {
        const std::string name = part.string();
        if (!at) return {};
        if (name.empty() || name == ".") continue;
        unique_fd next(
            ::openat(at.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next && errno == ENOENT) {
            if (::mkdirat(at.get(), name.c_str(), 0700) != 0 && errno != EEXIST) return {};
            next.reset(
                ::openat(at.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        }
        at = std::move(next);
    }
    return at;
}

// The quarantine home `home` (normal), made where missing, when it may hold what runs took:
// absolute, not within a writable root of the run (whose next command could reach what was
// taken), reached through no symlink, and the effective uid's own, writable by nobody else (a
// quarantine others may write is no quarantine). -1 otherwise.
unique_fd open_home(const fs::path& home, std::span<const fs::path> roots) {
    if (!home.is_absolute()) return {};
    for (const fs::path& root : roots) {
        if (is_within(home, root)) return {};
    }
    unique_fd dir = make_directories_no_follow(home);
    struct stat st {};
    if (!dir || ::fstat(dir.get(), &st) != 0 || st.st_uid != ::geteuid() ||
        (st.st_mode & 0022) != 0) {
        return {};
    }
    return dir;
}

// `text` with each control byte and the backslash spelled out ("\x0a", "\\"): a name a command
// chose must not start a second manifest line or add a field to its own.
std::string manifest_field(std::string_view text) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\\') {
            out += "\\\\";
        } else if (byte < 0x20 || byte == 0x7f) {
            out += "\\x";
            out += hex[byte >> 4];
            out += hex[byte & 0xf];
        } else {
            out += c;
        }
    }
    return out;
}

// Where `path`, beneath `root`, is kept as `name` in the judgement's `directory`.
std::string kept_path(const fs::path& directory, const fs::path& root, const fs::path& path,
                      const std::string& name) {
    return (directory / root.filename() / path.parent_path().lexically_relative(root) / name)
        .lexically_normal()
        .string();
}

// "2026-12-05T07-30-01Z-4242-1": sorts by time, unique per process.
std::string judgement_name() {
    static std::atomic<unsigned> counter{0};
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H-%M-%SZ", &utc);
    return std::string(stamp) + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

}  // namespace

fs::path default_quarantine_home() {
    if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state == '/') {
        return canonical_path(state) / "cordon" / "quarantine";
    }
    const fs::path home = invoking_home();
    if (home.empty()) return {};
    return home / ".local" / "state" / "cordon" / "quarantine";
}

fs::path fallback_quarantine_home() {
    return "/var/tmp/cordon-quarantine-" + std::to_string(::geteuid());
}

unique_fd open_directory_no_symlinks(const fs::path& path) {
    return unique_fd(landlock::open_no_symlinks(path.c_str(), O_DIRECTORY));
}

unique_fd open_parent_no_symlinks(const fs::path& path) {
    return open_directory_no_symlinks(path.parent_path());
}

std::optional<std::string> read_regular_file(int dir, const std::string& name, std::size_t limit) {
    unique_fd fd(
        ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    if (static_cast<std::uint64_t>(st.st_size) > limit) return std::nullopt;
    std::string text;
    char buffer[16384];
    for (;;) {
        const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return std::nullopt;
        if (got == 0) break;
        text.append(buffer, static_cast<std::size_t>(got));
        if (text.size() > limit) return std::nullopt;  // grew while it was read
    }
    return text;
}

std::optional<std::string> replace_file(int dir, const std::string& name,
                                        std::string_view content) {
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return error_text(errno);
    if (!S_ISREG(st.st_mode)) return "not a regular file";
    const std::string lock = name + ".lock";
    unique_fd fd(::openat(dir, lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          st.st_mode & 0777));
    if (!fd) return "cannot create " + lock + ": " + error_text(errno);
    bool written = write_all(fd.get(), content);
    // cordon may run as root in a user's tree: the file stays the user's.
    if (written && ::geteuid() == 0) written = ::fchown(fd.get(), st.st_uid, st.st_gid) == 0;
    if (written) written = ::fchmod(fd.get(), st.st_mode & 07777) == 0;
    const int error = errno;
    fd.reset();
    if (!written || ::renameat(dir, lock.c_str(), dir, name.c_str()) != 0) {
        const int failed = written ? errno : error;
        ::unlinkat(dir, lock.c_str(), 0);
        return error_text(failed);
    }
    return std::nullopt;
}

quarantine::quarantine(fs::path home, std::vector<fs::path> roots)
    : home_(std::move(home)), roots_(std::move(roots)) {
    for (fs::path& root : roots_)
        root = normal_form(root);
}

unique_fd quarantine::place_for(const fs::path& root, const fs::path& path) {
    if (home_.empty() || unusable_) return {};
    if (!directory_fd_) {
        fs::path home = normal_form(home_);
        unique_fd opened = open_home(home, roots_);
        if (!opened) {
            home = fallback_quarantine_home();
            opened = open_home(home, roots_);
        }
        const std::string name = judgement_name();
        if (!opened || ::mkdirat(opened.get(), name.c_str(), 0700) != 0) {
            unusable_ = true;
            return {};
        }
        directory_fd_.reset(
            ::openat(opened.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!directory_fd_) {
            unusable_ = true;
            return {};
        }
        directory_ = home / name;
    }
    // <quarantine>/<the root's own name>/<the path's directories beneath it>
    fs::path relative = root.filename() / path.parent_path().lexically_relative(root);
    unique_fd at(::fcntl(directory_fd_.get(), F_DUPFD_CLOEXEC, 0));
    for (const fs::path& part : relative.lexically_normal()) {
        const std::string name = part.string();
        if (name.empty() || name == ".") continue;
        if (::mkdirat(at.get(), name.c_str(), 0700) != 0 && errno != EEXIST) return {};
        at.reset(::openat(at.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!at) return {};
    }
    return at;
}

void quarantine::note(const fs::path& path, std::string_view why) {
    if (!directory_fd_) return;
    unique_fd manifest(::openat(directory_fd_.get(), "manifest",
                                O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!manifest) return;
    // One line per entry, "<path>\t<why>", whatever the names hold.
    std::string line = manifest_field(path.string());
    line += '\t';
    line += manifest_field(why);
    line += '\n';
    (void)write_all(manifest.get(), line);
}

std::variant<quarantine::taken, std::string> quarantine::take(const fs::path& root,
                                                              const fs::path& path,
                                                              std::string_view why) {
    const std::string name = path.filename().string();
    if (name.empty() || name == "." || name == "..") {
        return "cannot take " + path.string() + ": it names no entry of a directory";
    }
    unique_fd parent = open_parent_no_symlinks(path);
    if (!parent) return "cannot open " + path.parent_path().string() + ": " + error_text(errno);
    struct stat st {};
    if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        // Gone already (another run's judgement took it).
        if (errno == ENOENT) return taken{.kept_at = {}, .gone = true};
        return error_text(errno);
    }
    if (unique_fd place = place_for(root, path)) {
        if (const auto kept = rename_into(parent.get(), name, place.get())) {
            note(path, why);
            return taken{.kept_at = kept_path(directory_, root, path, *kept)};
        }
        if (errno == EXDEV) {
            // Another filesystem: a copy is kept when it is small and shallow enough, and the
            // original removed either way.
            const auto kept = free_name(place.get(), name);
            const bool copied = kept && tree_copy().run(parent.get(), name, place.get(), *kept);
            if (copied) note(path, why);
            if (auto failed = remove_tree(parent.get(), name)) return *failed;
            if (copied) return taken{.kept_at = kept_path(directory_, root, path, *kept)};
            return taken{};
        }
    }
    // Removed, as much of it as can be; the reason when something stayed.
    if (auto failed = remove_tree(parent.get(), name)) return *failed;
    return taken{};
}

std::string quarantine::keep_copy(const fs::path& root, const fs::path& path,
                                  std::string_view content, std::string_view why) {
    unique_fd place = place_for(root, path);
    if (!place) return {};
    const std::string name = path.filename().string();
    for (int attempt = 0; attempt < numbered_attempts; ++attempt) {
        const std::string kept = numbered(name, attempt);
        unique_fd out(::openat(place.get(), kept.c_str(),
                               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (out) {
            if (!write_all(out.get(), content)) return {};
            note(path, why);
            return kept_path(directory_, root, path, kept);
        }
        if (errno != EEXIST) return {};
    }
    return {};
}

}  // namespace cordon::sandbox
