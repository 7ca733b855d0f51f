// Where what a run left and must not keep goes: taken out of the user's tree into a directory of
// cordon's own (`$XDG_STATE_HOME/cordon/quarantine`, else `~/.local/state/cordon/quarantine`), one
// subdirectory per judgement, with the path it came from beneath it and a `manifest` of what and
// why. A person can look at it and put back what they want.
//
// Every step works on descriptors opened without following a symlink, from the writable root
// down: the tree was a command's to shape, and a symlink it left on the way must not send a
// rename, a rewrite or a removal anywhere else. A root is opened once; its path must still name it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "cordon/unique_fd.hpp"

namespace cordon::sandbox {

// The default home of the quarantines: $XDG_STATE_HOME/cordon/quarantine when absolute, else
// <invoking_home>/.local/state/cordon/quarantine; empty when neither is known.
[[nodiscard]] std::filesystem::path default_quarantine_home();

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

// Removes the entry `name` of `dir` and everything beneath it, never following a symlink; the
// reason when something stayed.
[[nodiscard]] std::optional<std::string> remove_tree(int dir, const std::string& name);

class quarantine {
public:
    // Quarantines go to a new subdirectory of `home`, made on first use; an empty `home` keeps
    // nothing (what is taken away is removed).
    explicit quarantine(std::filesystem::path home);

    struct taken {
        std::string kept_at;  // where it is now; empty when it was removed instead
    };

    // Moves `path` (canonical, beneath the writable root `root`) into the quarantine, removing it
    // where it cannot be kept (another filesystem and too large to copy, no quarantine home).
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
    std::filesystem::path directory_;
    unique_fd directory_fd_;
    bool unusable_ = false;
};

}  // namespace cordon::sandbox
