// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Where what a run left and must not keep goes: taken out of the user's tree into a directory of
// cordon's own (`$XDG_STATE_HOME/cordon/quarantine`, else `~/.local/state/cordon/quarantine`; when
// that one cannot be used or lies within a writable root of the run,
// `/var/tmp/cordon-quarantine-<euid>`), one subdirectory per judgement, with the path it came from
// beneath it and a `manifest` of what and why, one line per entry. A person can look at it and put
// back what they want.
//
// Every step works on descriptors opened without following a symlink, from the writable root
// down: the tree was a command's to shape, and a symlink it left on the way must not send a
// rename, a rewrite or a removal anywhere else. A root is opened once; its path must still name it.
// The shape of the tree is the command's too: no walk here costs a descriptor or a stack frame per
// level, so a tree thousands of levels deep is removed like any other.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/tree_removal.hpp"
#include "cordon/unique_fd.hpp"

namespace cordon::sandbox {

// The default home of the quarantines: $XDG_STATE_HOME/cordon/quarantine when absolute, else
// <invoking_home>/.local/state/cordon/quarantine; empty when neither is known.
[[nodiscard]] std::filesystem::path default_quarantine_home();

// Where the quarantines go when the home given cannot be used or lies within a writable root:
// /var/tmp/cordon-quarantine-<euid> (made 0700; used only when it is this user's own).
[[nodiscard]] std::filesystem::path fallback_quarantine_home();

// Opens `path` (canonical) as a directory, following no symlink on the way (O_PATH); -1 and errno.
[[nodiscard]] unique_fd open_directory_no_symlinks(const std::filesystem::path& path);

// The parent directory of `path` opened as open_directory_no_symlinks() does, for an operation on
// its last component.
[[nodiscard]] unique_fd open_parent_no_symlinks(const std::filesystem::path& path);

// The regular file `name` in the directory `dir`, at most `limit` bytes, or nullopt when it is not
// a regular file (a symlink, a FIFO, a directory, missing) or is larger. Never blocks on a FIFO.
[[nodiscard]] std::optional<std::string> read_regular_file(int dir, const std::string& name,
                                                           std::size_t limit);

// Replaces the regular file `name` in `dir` with `content`, keeping its mode and owner, through
// `name.lock` (git's own lock file: a git running meanwhile waits for it, and one that holds it
// makes this fail) and a rename. The reason when it cannot.
[[nodiscard]] std::optional<std::string> replace_file(int dir, const std::string& name,
                                                      std::string_view content);

// Removes the entry `name` of `dir` and everything beneath it, never following a symlink, at any
// depth and width (base/tree_removal.hpp).
using base::remove_tree;

class quarantine {
public:
    // Quarantines go to a new subdirectory of `home`, made on first use (each missing directory
    // made 0700, no symlink followed); an empty `home` keeps nothing (what is taken away is
    // removed). A home that cannot be used (not this user's own, writable by others, reached
    // through a symlink) or lies within one of `roots` (canonical: the run's writable roots, from
    // which a later command could reach what was taken) gives way to fallback_quarantine_home(),
    // under the same conditions; when neither can be used, what is taken away is removed.
    explicit quarantine(std::filesystem::path home, std::vector<std::filesystem::path> roots = {});

    struct taken {
        std::string kept_at;  // where it is now; empty when it was removed instead
        bool gone = false;    // it was not there any more: neither kept nor removed
    };

    // Moves `path` (canonical, beneath the writable root `root`) into the quarantine, removing it
    // where it cannot be kept (another filesystem and too large or too deep to copy, no quarantine
    // home). Where it can be neither, everything of it that can be removed is.
    // `why` goes to the manifest. The reason when it is still there.
    [[nodiscard]] std::variant<taken, std::string> take(const std::filesystem::path& root,
                                                        const std::filesystem::path& path,
                                                        std::string_view why);

    // Keeps a copy of `content`, which was the file at `path`, before cordon rewrites it. Where it
    // went, or empty when it could not be kept.
    [[nodiscard]] std::string keep_copy(const std::filesystem::path& root,
                                        const std::filesystem::path& path, std::string_view content,
                                        std::string_view why);

    // The subdirectory of this judgement, once something went there.
    [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_; }

private:
    // The directory in the quarantine that takes `path`'s last component (its parents made);
    // -1 when there is none.
    unique_fd place_for(const std::filesystem::path& root, const std::filesystem::path& path);
    void note(const std::filesystem::path& path, std::string_view why);

    std::filesystem::path home_;
    std::vector<std::filesystem::path> roots_;
    std::filesystem::path directory_;
    unique_fd directory_fd_;
    bool unusable_ = false;
};

}  // namespace cordon::sandbox
