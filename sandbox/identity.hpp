// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Who a confined command is on the host (docs/sandbox.md, "Identity").
//
// A cordon running as root gives every confined command a uid and gid of its own from a range it
// reserves (identity_range), never uid 0: the kernel's checks that look at the uid and not at a
// capability (per-uid counters, leases, kill(2) and prlimit(2), file modes of sockets and FIFOs,
// SO_PEERCRED) then see an unprivileged stranger.
//
// The command still works on its workspace as its owner would: in a mount namespace of the run's
// own, each tree the command must reach as its owner (the workspace, the other writable roots,
// cordon's home, a directory on the way to one of them that others may not enter) is replaced by
// an idmapped mount of itself (open_tree + mount_setattr(MOUNT_ATTR_IDMAP)) that shows the tree's
// owner as the run's uid. What the command creates there is owned on disk by that owner; git sees
// the repository as its own. A sticky directory anyone may write (the host's /tmp) is not mapped:
// the command makes its own files there, as any user.
//
// Where it switches: bwrap is started as the run's uid and makes its user namespace itself (owned
// by that uid, so the namespace's quotas count against it, not root); the Landlock rung switches
// in the launcher (or the child applying its walls) after the namespaces that need root and
// before dropping the capabilities (walls.hpp).
//
// Where a tree cannot be idmapped (a filesystem without support, a kernel before 5.12) or no id
// of the range is free, the command runs as cordon's uid, as before, and the record says which
// identity ran and why (run_identity::reason): the file-effect walls are the same either way.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cordon/confined_argv.hpp"
#include "cordon/local_provider.hpp"
#include "cordon/unique_fd.hpp"
#include "sandbox/identity_child.hpp"

namespace cordon::sandbox {

// The lowest id a configured range may start at: above every system and login account's.
inline constexpr std::uint32_t lowest_identity = 65536;

// "FIRST:COUNT", as parse_identity_range() reads it.
[[nodiscard]] std::string identity_range_text(const identity_range& range);

// "FIRST:COUNT" (both decimal; the range must stay above 0 and below 2^31; a count of 0 gives
// none); nullopt when malformed.
[[nodiscard]] std::optional<identity_range> parse_identity_range(std::string_view text);

// A uid of the range for this process, reserved once and held until it exits: the first slot
// whose lock file (/run/cordon-identities/<uid>) no other living process holds. Every run of one
// cordon shares it. The reason when none can be had.
[[nodiscard]] std::variant<run_identity, std::string> reserve_identity(const identity_range& range);

// Who a confined command started now in `workspace` would be (cordon probe): cordon's own ids,
// or, cordon being root, the reserved ones when the workspace can be idmapped, with the reason
// when not.
[[nodiscard]] run_identity preview_identity(const identity_range& range,
                                            const std::string& workspace);

// One tree shown as the run's own inside the run's mount namespace.
struct idmapped_tree {
    std::string path;  // canonical; opened again in the run's namespace
    dev_t device = 0;  // what it must still be there
    ino_t inode = 0;
    uid_t owner = 0;                           // shown as the run's uid
    gid_t group = 0;                           // shown as the run's gid
    std::shared_ptr<const unique_fd> mapping;  // a user namespace mapping the owner to the run
    // The child fd a runner binds it from (bwrap's --bind-fd): the idmapped tree takes its
    // place. -1: none.
    int bind_fd = -1;
    bool read_only = false;  // mounted read-only: read as its owner, never changed
};

// What the spawner does for a run's identity (identity.hpp): make a mount namespace of the run's
// own holding `trees` (parents first), and, when `switch_in_spawner` is set, switch to `identity`
// just before exec (bwrap); otherwise the runner switches itself (the Landlock rung).
struct identity_plan {
    run_identity identity;
    std::vector<idmapped_tree> trees;
    bool switch_in_spawner = false;
    // The host's /etc/passwd and /etc/group with an account for the run's id added, bound over
    // them in the run's namespace: `id -un`, `whoami`, a shell's prompt and git's ident find a
    // name. Empty: none.
    std::string passwd;
    std::string group;
};

// The account files of `who` (identity_plan::passwd, group): made once per process beside the
// slots' locks, root's and readable by all, the host's own with `cordon-run` added for the id
// (its home: `home`). The reason when they cannot be made.
[[nodiscard]] std::variant<std::pair<std::string, std::string>, std::string> account_files(
    const run_identity& who, const std::string& home);

// The trees a run whose command is `who` must see as their owner's, with the user namespaces
// mapping them: `writable` ones it works in as their owner (the workspace under workspace-write,
// the other writable roots, the run's private /tmp), `readable` ones it only reads as their owner
// (the workspace under read-only, cordon's homes), mounted read-only so that nothing of their
// owner's can be changed (modes, times, attributes). A directory on the way to a tree that others
// may not enter is mapped read-only too when it is cordon's own (a workspace under a private
// temporary directory); anyone else's is the reason the run keeps cordon's uid, as is a tree that
// cannot be idmapped. Directories inside a writable tree decide nothing (the run may close them).
// A tree's group is shown as the run's only when the tree's owner is a member of it; else the
// owner's primary group is.
[[nodiscard]] std::variant<std::vector<idmapped_tree>, std::string> plan_idmapped_trees(
    const run_identity& who, const std::vector<std::string>& writable,
    const std::vector<std::string>& readable);

// Whether the run's id, seeing `trees` as their owners', can reach the directory `path`: a
// directory a writable tree shows as its own it may open whatever its mode (chmod), one of
// another owner's only as others may.
[[nodiscard]] bool reachable_by_run(const std::vector<idmapped_tree>& trees,
                                    const std::string& path);

}  // namespace cordon::sandbox
