// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "base/tree_removal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <variant>
#include <vector>

#include "base/directory_listing.hpp"
#include "cordon/unique_fd.hpp"

namespace cordon::base {

namespace {

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U  // Linux 5.8; older headers lack the name, not the kernel
#endif

std::string error_text(int error) {
    return std::strerror(error);
}

// Which inode a directory is, and on which mount: what a walk going back up checks it arrived at,
// and what tells a mount point inside the tree from the tree. `mount` is 0 where the kernel gives
// no mount id (before Linux 5.8): the device alone then tells filesystems apart (a bind mount of
// the same filesystem is not seen; only root can make one, and a confined command cannot).
struct place {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t mount = 0;
    [[nodiscard]] bool same_inode(const place& other) const {
        return dev == other.dev && ino == other.ino;
    }
    [[nodiscard]] bool same_filesystem(const place& other) const {
        return dev == other.dev && (mount == 0 || other.mount == 0 || mount == other.mount);
    }
};

// The place of the entry `name` of `dir` (itself, not what a symlink there points to), or of
// `dir` itself for ""; false and errno when it cannot be told.
bool place_at(int dir, const char* name, place& out) {
    struct statx sx {};
    const int flags = AT_SYMLINK_NOFOLLOW | (name[0] == '\0' ? AT_EMPTY_PATH : 0);
    if (::statx(dir, name, flags, STATX_INO | STATX_MNT_ID, &sx) != 0) return false;
    out.dev = (std::uint64_t{sx.stx_dev_major} << 32) | sx.stx_dev_minor;
    out.ino = sx.stx_ino;
    out.mount = (sx.stx_mask & STATX_MNT_ID) != 0 ? sx.stx_mnt_id : 0;
    return true;
}

bool place_of(int fd, place& out) {
    return place_at(fd, "", out);
}

// A directory on the way down: its name in its parent, which inode it is, and the entries still
// to visit. Only the innermost directory of a walk is open, so that a tree thousands of levels
// deep costs neither a descriptor nor a stack frame per level (the names cost what the tree
// holds, once).
struct walk_frame {
    std::string name;
    place where;
    std::vector<std::string> pending;
};

// grant_owner_rights() of u+rwx (listing and removing the entries: a directory being removed
// keeps nothing worth its permissions), errno left as it was: the caller reports the error that
// sent it here when nothing could be given.
bool grant_owner_rwx(int dir) {
    const int saved = errno;
    const bool granted = grant_owner_rights(dir, S_IRWXU);
    errno = saved;
    return granted;
}

// remove_tree(): depth first from one open directory at a time (walk_frame).
class tree_removal {
public:
    tree_removal(int base, std::optional<place> top) : base_(base), top_(top) {}

    std::optional<std::string> run(const std::string& name) {
        struct stat st {};
        if (::fstatat(base_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            return errno == ENOENT && !top_ ? std::nullopt : std::optional(error_text(errno));
        }
        if (!S_ISDIR(st.st_mode)) {
            if (top_) return std::string("not the directory meant: something else is there now");
            remove_entry(base_, name, 0);
            return failure_;
        }
        enter(base_, name);
        while (!frames_.empty()) {
            walk_frame& innermost = frames_.back();
            if (innermost.pending.empty()) {
                if (auto stopped = leave()) return stopped;
                continue;
            }
            const std::string child = std::move(innermost.pending.back());
            innermost.pending.pop_back();
            visit(child);
        }
        return failure_;
    }

private:
    // The directory open as current_, or base_ above the top of the tree.
    [[nodiscard]] int at() const { return frames_.empty() ? base_ : current_.get(); }

    void visit(const std::string& name) {
        struct stat st {};
        if (::fstatat(at(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT) fail(name, errno);
        } else if (S_ISDIR(st.st_mode)) {
            enter(at(), name);
        } else {
            remove_entry(at(), name, 0);
        }
    }

    // Lists the directory `name` of `parent` and makes it the current one. One that cannot be
    // listed is removed when it is empty (rmdir asks only its parent) and passed over otherwise.
    // One on another filesystem than the top is not entered, nor removed (a mount point).
    void enter(int parent, const std::string& name) {
        unique_fd dir(
            ::openat(parent, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        place where;
        if (!dir || !place_of(dir.get(), where)) {
            if (errno != ENOENT || (frames_.empty() && top_)) fail(name, errno);
            return;
        }
        if (frames_.empty()) {
            if (top_ && !where.same_inode(*top_)) {
                fail(name, "not the directory meant: another one is there now");
                return;
            }
            root_ = where;
        } else if (!where.same_filesystem(root_)) {
            fail(name, "another filesystem is mounted there: not entered");
            return;
        }
        auto names = names_in(dir.get());
        if (!names && errno == EACCES && grant_owner_rwx(dir.get())) names = names_in(dir.get());
        if (!names) {
            const int error = errno;
            if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
                fail(name, error);
            }
            return;
        }
        frames_.push_back({name, where, std::move(*names)});
        current_ = std::move(dir);
    }

    // The parent ("..") of the current directory, which must be the directory `expected` the walk
    // came down from: another means the tree was moved under the walk, and it must not act
    // wherever the way up now leads. The reason when it cannot be opened or is another.
    std::variant<unique_fd, std::string> open_parent_checked(const place& expected) const {
        unique_fd parent(
            ::openat(current_.get(), "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        place where;
        if (!parent || !place_of(parent.get(), where)) {
            return "cannot go back up the tree: " + error_text(errno);
        }
        if (!where.same_inode(expected))
            return std::string("the tree was moved while it was walked");
        return parent;
    }

    // The current directory is done with, emptied as far as it could be: back up to the
    // directory it was entered from, and remove it there. The reason when the walk must stop.
    std::optional<std::string> leave() {
        const walk_frame done = std::move(frames_.back());
        frames_.pop_back();
        unique_fd parent;
        if (!frames_.empty()) {
            auto up = open_parent_checked(frames_.back().where);
            if (auto* stopped = std::get_if<std::string>(&up)) return *stopped;
            parent = std::move(std::get<unique_fd>(up));
        }
        current_ = std::move(parent);
        place now;
        if (!place_at(at(), done.name.c_str(), now)) {
            if (errno != ENOENT) fail(done.name, errno);
        } else if (!now.same_inode(done.where)) {
            fail(done.name, "replaced while the tree was removed");
        } else {
            remove_entry(at(), done.name, AT_REMOVEDIR);
        }
        return std::nullopt;
    }

    // unlinkat() in the current directory (or, for the top of the tree, in base_), which gets
    // its owner's rights once when it denies them. base_ is not the tree's: it keeps its own.
    void remove_entry(int dir, const std::string& name, int flags) {
        if (::unlinkat(dir, name.c_str(), flags) == 0 || errno == ENOENT) return;
        if (errno == EACCES && dir != base_ && grant_owner_rwx(dir) &&
            (::unlinkat(dir, name.c_str(), flags) == 0 || errno == ENOENT)) {
            return;
        }
        fail(name, errno);
    }

    void fail(const std::string& name, int error) { fail(name, error_text(error)); }
    void fail(const std::string& name, std::string reason) {
        if (failure_) return;
        // The top of the tree is the caller's to name.
        failure_ = frames_.empty() ? std::move(reason) : beneath_top(name) + ": " + reason;
    }

    // `name` in the current directory as a path from the top of the tree, its last levels only
    // when it is deep.
    [[nodiscard]] std::string beneath_top(const std::string& name) const {
        constexpr std::size_t shown = 8;
        const std::size_t first = frames_.size() > shown + 1 ? frames_.size() - shown : 1;
        std::string out = first > 1 ? ".../" : "";
        for (std::size_t level = first; level < frames_.size(); ++level) {
            out += frames_[level].name + "/";
        }
        return out + name;
    }

    int base_;
    std::optional<place> top_;  // the directory the caller means, when it said
    place root_;                // the top's place, once entered
    unique_fd current_;
    std::vector<walk_frame> frames_;
    std::optional<std::string> failure_;
};

std::optional<std::string> refused(const std::string& name) {
    // An entry of `dir`, never `dir` itself or its parent, however a caller came to the name.
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
        return "\"" + name + "\" names no entry of a directory";
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> remove_tree(int dir, const std::string& name) {
    if (auto refusal = refused(name)) return refusal;
    return tree_removal(dir, std::nullopt).run(name);
}

std::optional<std::string> remove_tree(int dir, const std::string& name, int same_as) {
    if (auto refusal = refused(name)) return refusal;
    place meant;
    if (!place_of(same_as, meant))
        return "cannot tell which directory is meant: " + error_text(errno);
    return tree_removal(dir, meant).run(name);
}

}  // namespace cordon::base
