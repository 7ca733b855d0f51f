// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What changed in the writable roots while a run lasted: the list judge_changes() works from.
//
// Two ways to know, and the cost of each grows with what the run did, not with the tree:
//
//   - change_watch: fanotify on the filesystems of the roots (and of every mount beneath them),
//     opened before the command starts. The kernel reports each entry created, renamed in,
//     written or changed in its metadata, and each file opened, as it happens, by its directory's
//     file handle and its name; the directories are named once the run is over, and a file only
//     opened is a change when its change time moved (a write through a shared mapping reports
//     nothing else before the file is closed, and a command can put that off past the run). It
//     needs CAP_SYS_ADMIN (cordon as root, the usual deployment) and filesystems that report file
//     handles (ext4, xfs, btrfs, tmpfs).
//   - scan_changes(): the inodes' change times, read once the run is over. A directory's ctime
//     moves when an entry is added, removed or renamed in it; a file's when it is written or its
//     metadata changes; and no command can set a ctime. The directories are walked (the names
//     of those whose ctime did not move are remembered per process, so that a later scan lists
//     only what changed), and what lies in a changed directory, or could be protected where it is
//     (scan_interest), is looked at. The fallback where no watch can be opened, and the judgement
//     of a window whose cordon was killed.
#pragma once

#include <time.h>

#include <filesystem>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "base/mountinfo.hpp"
#include "sandbox/judgement.hpp"

namespace cordon::sandbox {

class change_watch {
public:
    // Starts watching the filesystems `roots` (canonical) and the mounts beneath them lie on, for
    // a window opened at `since`; the reason when it cannot (the caller scans instead). `elsewhere`
    // names the other places the run may write (canonical: the Landlock rung's private /tmp),
    // where a file written under one name may have another beneath the roots. What changes
    // outside both is another process's doing and is not looked at.
    [[nodiscard]] static std::variant<std::unique_ptr<change_watch>, std::string> open(
        std::span<const std::filesystem::path> roots, std::span<const base::mount_entry> mounts,
        timespec since, std::span<const std::filesystem::path> elsewhere = {});

    ~change_watch();
    change_watch(const change_watch&) = delete;
    change_watch& operator=(const change_watch&) = delete;

    // Stops watching (once every process of the run is gone) and names what changed beneath the
    // roots; the reason when events were lost (the caller scans instead).
    [[nodiscard]] std::variant<change_set, std::string> finish();

    struct state;

private:
    explicit change_watch(std::unique_ptr<state> state);
    std::unique_ptr<state> state_;
};

// Which entries may be what judge_changes() looks at (a protected name or what lies in one, a git
// directory's part): the scan reads their change time even in a directory that did not change,
// since a file written in place changes only its own. Asked once per directory, then per name.
class scan_interest {
public:
    // `places`: those of the names anchored to the homes and of PATH's directories (each is of
    // interest by its last component, wherever it lies).
    explicit scan_interest(std::span<const std::string> names,
                           std::span<const protected_place> places = {});

    // Everything in `dir` (relative to its writable root) is of interest (a component of it
    // starts a protected name, or it is a hooks directory).
    [[nodiscard]] bool everything_in(const std::filesystem::path& dir) const;
    // The entry `name` is, wherever it lies (a protected name's first component, a git
    // directory's config, commondir or HEAD).
    [[nodiscard]] bool entry(std::string_view name) const;

    // Says which interest this is: what a scan remembered with one holds for another only when
    // their keys are equal.
    [[nodiscard]] const std::string& key() const;

private:
    std::set<std::string, std::less<>> first_;
    std::string key_;
};

// The scan_interest for the protected names `names` and the places of the anchored ones.
[[nodiscard]] scan_interest interest_of(std::span<const std::string> names,
                                        std::span<const protected_place> places = {});

// What changed beneath `roots` (canonical) since `since`, by the inodes' change times; the reason
// when a root cannot be read.
[[nodiscard]] std::variant<change_set, std::string> scan_changes(
    std::span<const std::filesystem::path> roots, timespec since, const scan_interest& interest);

}  // namespace cordon::sandbox
