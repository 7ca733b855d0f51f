// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The backends as pure argv transformers: given the runner's path, the caller's argv, a confined
// policy and what the host can do, each returns the confined_argv to spawn.
// Nothing here spawns, probes, opens or reads the environment, so every profile is
// golden-testable.
//
// Walls in depth: both Linux backends end in cordon-landlock. On its own it is the Landlock rung;
// under bwrap it runs inside the sandbox, after bwrap's mounts are in place, with the same rules,
// scopes and seccomp filter, so that a gap in the mounts and a gap in the path rules must line up
// before a command escapes.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cordon/confined_argv.hpp"
#include "cordon/policy.hpp"
#include "sandbox/path_plan.hpp"
#include "sandbox/walls.hpp"

namespace cordon::sandbox {

struct network_walls;  // network_plan.hpp

// The child fds at which the executor places what a runner needs. Fixed so that golden argv stay
// stable; fds 0-2 are the standard streams.
inline constexpr int runner_status_fd = 3;        // the launcher's status records
inline constexpr int command_environment_fd = 4;  // the command's environment block
inline constexpr int workspace_fd = 5;            // the workspace, for the launcher's --rw-fd
inline constexpr int launcher_image_fd = 6;       // the sealed launcher, exec'd by bwrap
inline constexpr int workspace_bind_fd = 7;       // the workspace, for bwrap's --bind-fd (it
                                                  // closes the fd once mounted)
// The other writable directories (extra roots, the Landlock rung's private /tmp): the launcher's
// --rw-fd at writable_fd + i, bwrap's --bind-fd at writable_bind_fd + i; then the empty data
// bwrap copies into each hidden file, at hidden_data_fd + i.
inline constexpr int writable_fd = 8;
inline constexpr int writable_bind_fd = 24;
inline constexpr std::size_t max_writable_fds = 16;
inline constexpr int hidden_data_fd = 43;
// Network proxy: the sandbox's end of the proxy session's socketpair, over which the launcher's
// forwarder hands cordon's proxy each connection the command makes to it (--proxy-fd).
inline constexpr int proxy_forwarder_fd = 41;
// Network deny and proxy: the sandbox's end of the network witness's socketpair, over which the
// launcher (or the in-child confinement) sends the listener of its connect(2) filter to cordon
// (--witness-fd, sandbox/walls.hpp).
inline constexpr int network_witness_fd = 42;
// /proc/sys/user of cordon's proc, through which the launcher writes the bwrap sandbox's user
// namespace limits (--quota-fd, sandbox/quotas.hpp) and which it closes before anything else runs.
inline constexpr int user_sysctls_fd = 40;

// What the profiles depend on beyond the policy: what the probe established and the descriptors
// the provider opened.
struct profile {
    // The kernel's Landlock ABI, or <= 0 when Landlock is unavailable (then the launcher runs
    // with --no-landlock and applies the rest: capabilities, seccomp, the IPC namespace).
    int landlock_abi = 0;
    bool bind_fd = true;  // bwrap understands --bind-fd (bubblewrap 0.10, Debian's 0.8.0-2+deb12u1)
    std::filesystem::path workdir;  // where the command starts; empty: the workspace root
    std::shared_ptr<const unique_fd> launcher_image;  // the sealed launcher
    std::shared_ptr<const unique_fd> workspace;       // O_PATH fd of the workspace, opened once
    // The policy's paths as resolved for this run (path_plan.hpp); null: none beyond the mode.
    const path_plan* paths = nullptr;
    // O_PATH fds of the writable directories beyond the workspace: the extra roots in the plan's
    // order, then (Landlock rung, tmp private) the run's own /tmp directory.
    std::vector<std::shared_ptr<const unique_fd>> writable;
    std::filesystem::path private_tmp;       // that directory's path, handed on as $TMPDIR
    std::shared_ptr<const unique_fd> empty;  // /dev/null, read by bwrap into each hidden file
    // bwrap: an O_PATH fd of /proc/sys/user in a writable proc (cordon's own), handed to the
    // launcher at user_sysctls_fd.
    std::shared_ptr<const unique_fd> user_sysctls;
    // The Landlock rung: cordon can make the command a network namespace (it holds
    // CAP_SYS_ADMIN), network_plan.hpp.
    bool network_namespace = false;
    // The walls the provider planned for this run's network policy (plan_network, with the two
    // values above); null: planned here, from the same values.
    const network_walls* network = nullptr;
    // The Landlock rung, cordon as root: the run's own uid and gid, which the launcher (or the
    // child applying its walls) switches to (identity.hpp). bwrap is started as them instead.
    std::optional<run_identity> become;
};

// How completely a backend enforces a mode with a given Landlock ABI, and why not fully.
struct enforcement_assessment {
    enforcement level = enforcement::full;
    std::vector<std::string> gaps;
};
[[nodiscard]] enforcement_assessment assess(backend_kind kind, sandbox_mode mode, int landlock_abi);

// The parts of `policy` (resolved as `paths`) that `kind` cannot enforce, one line each: the
// Landlock rung cannot keep a path read-only or uncreatable beneath a writable tree, nor hide one
// inside it; no backend can keep a protected symlink from being replaced.
[[nodiscard]] std::vector<std::string> path_gaps(backend_kind kind, const sandbox_policy& policy,
                                                 const path_plan& paths);

// The record's line for the files found by their content that a run leaves readable
// (path_plan::found_left): named, not refused (no rung could hide more).
[[nodiscard]] std::string found_left_gap(const std::vector<std::filesystem::path>& left);
// The record's line for the denied files of several names (path_plan::several_names).
[[nodiscard]] std::string several_names_gap(const std::vector<std::filesystem::path>& files);
// The record's line for the places links in denied directories lead to, left (links_left).
[[nodiscard]] std::string links_left_gap(const std::vector<std::filesystem::path>& places);

// Which parts of a policy beyond the mode `kind` can enforce, for `cordon probe`: {part, how, or
// why not}. Whatever the host: what a backend cannot do for one run it cannot do for any.
struct policy_part {
    std::string_view part;  // "protected names", "read-only paths", ...
    bool enforced;
    std::string_view how;  // how, or why not
};
[[nodiscard]] std::vector<policy_part> policy_parts(backend_kind kind);

// cordon-landlock's arguments for a mode, up to and including the "--" before the command:
//   --status-fd 3 --env-fd 4 [--no-landlock] [--private-ipc] [--deny-metadata] --read-root
//   --rw /dev/null --rw-try /dev/zero --rw-try /dev/full --ro-try /dev/random --ro-try /dev/urandom
//   [inside bwrap: --rw-try /dev/shm --rw-try /dev/pts]  [workspace-write: --rw /tmp --rw-fd 5]
// /dev is granted node by node, never as a tree: a host's terminals, input devices and disks
// stay closed. Inside bwrap, /dev/shm and /dev/pts are bwrap's private instances.
// One grant of cordon's Landlock profile beyond reading the whole root (every entry of / but
// /dev): the launcher's --rw/--ro flags, and what the forked child of an in-process run applies.
struct landlock_grant {
    const char* path;  // nullptr: the workspace, from the descriptor cordon opened and checked
    bool write;
    bool optional;  // a path that may be missing on the host (--rw-try, --ro-try)
};
// /tmp is granted inside bwrap unless `tmp` is none (it is bwrap's tmpfs or the host's, bound),
// and on the Landlock rung only when `tmp` is host (private: the run's own directory, an fd).
// `terminal`: the run has a controlling terminal, and /dev/tty is granted.
[[nodiscard]] std::vector<landlock_grant> landlock_grants(sandbox_mode mode, bool inside_bwrap,
                                                          tmp_policy tmp = tmp_policy::private_tmp,
                                                          bool terminal = false);

// What the launcher is told beyond the mode.
struct launcher_paths {
    tmp_policy tmp = tmp_policy::private_tmp;
    std::vector<std::string> deny_read;   // --deny-read, each
    std::vector<std::string> allow_read;  // --ro-try, each (beneath a denied directory)
    std::size_t writable = 0;             // --rw-fd writable_fd + i, each
    network_confinement network;          // launcher_network_arguments(), network_plan.hpp
    bool controlling_terminal = false;    // --controlling-tty
    std::optional<run_identity> become;   // --identity UID:GID (identity.hpp)
};
[[nodiscard]] std::vector<std::string> launcher_arguments(sandbox_mode mode, bool inside_bwrap,
                                                          bool landlock,
                                                          const launcher_paths& paths = {});

// bubblewrap:
//   bwrap --unshare-user --disable-userns --unshare-pid --unshare-ipc --unshare-uts
//         [network deny: --unshare-net] --unshare-cgroup-try --new-session --cap-drop ALL
//         --die-with-parent
//         --ro-bind / / --dev /dev --proc /proc --remount-ro /proc --size S/4 --tmpfs /dev/shm
//         [--size S/2 --tmpfs /tmp --bind-fd 7 R]  --chdir WORKDIR
//         -- /proc/self/fd/6 LAUNCHER-ARGUMENTS... -- ARGV
//   --unshare-user --disable-userns --cap-drop ALL: a caller running as root must not be able to
//     remount, unmount or re-bind its way to a write, nor regain capabilities in a nested user
//     namespace.
//   --unshare-pid: bwrap runs a reaper as pid 1; when the command exits or bwrap is killed, the
//     kernel kills everything left in the namespace, and no host process can be named by pid.
//   --unshare-ipc --unshare-uts --unshare-cgroup-try: private SysV IPC (shared memory of host
//     processes out of reach, nothing outlives the run), hostname, and cgroup view.
//   --unshare-net (network deny): a network namespace whose loopback bwrap brings up; the
//     launcher inside refuses socket(AF_UNIX) (network_plan.hpp).
//   --new-session: no terminal to inject input into (TIOCSTI).
//   --remount-ro /proc: uid 0 writes procfs files whose permission checks look at the uid, not
//     at a capability (/proc/sys among them); bwrap's own cover of /proc/sys is skipped when the
//     directory's mode makes access(W_OK) fail.
//   --bind-fd: the workspace is the directory the provider opened and checked, not whatever the
//     path names by the time bwrap resolves it (without --bind-fd support: --bind R R, and the
//     inner launcher's fd rule still grants only the checked directory).
//   --size: every tmpfs is bounded; S is sandbox_policy::tmpfs_bytes, the run's memory limit.
//   --chdir: a working directory the profile hides (under the private /tmp) fails loudly instead
//     of silently starting in $HOME.
[[nodiscard]] confined_argv bwrap_confine(const std::filesystem::path& bwrap,
                                          std::span<const std::string> argv,
                                          const sandbox_policy& policy, const profile& host);

// cordon-landlock on its own: LAUNCHER LAUNCHER-ARGUMENTS... -- ARGV. It makes the command a
// private IPC namespace when it can (as root), and refuses SysV IPC otherwise.
[[nodiscard]] confined_argv landlock_confine(const std::filesystem::path& launcher,
                                             std::span<const std::string> argv,
                                             const sandbox_policy& policy, const profile& host);

// Seatbelt: sandbox-exec -p PROFILE -- ARGV. `roots` are writable_roots(policy), passed in so the
// profile is a pure function of its inputs; `network`, the walls the provider planned (null:
// planned here).
[[nodiscard]] std::string seatbelt_profile(sandbox_mode mode,
                                           std::span<const std::filesystem::path> roots);
[[nodiscard]] confined_argv seatbelt_confine(const std::filesystem::path& sandbox_exec,
                                             std::span<const std::string> argv,
                                             const sandbox_policy& policy,
                                             std::span<const std::filesystem::path> roots,
                                             const network_walls* network = nullptr);

// SBPL string literal: backslash and double quote escaped, wrapped in double quotes.
[[nodiscard]] std::string sbpl_quote(std::string_view text);

// The stderr dialects of each backend (docs/contract.md, "Classification order"), exposed for
// consumers and tests. Under bwrap a write is refused by the read-only mount ("Read-only file
// system") or, where a mount does not govern it (a FIFO, a mount that appeared during the run), by
// Landlock ("Permission denied"); read-only's seccomp filter answers metadata changes with
// "Operation not permitted".
[[nodiscard]] std::vector<std::string> denial_signatures(
    backend_kind kind, sandbox_mode mode = sandbox_mode::workspace_write);
[[nodiscard]] std::vector<runner_failure_rule> runner_failure_rules(backend_kind kind);

// walls::partial_notice without its newline.
inline constexpr std::string_view launcher_notice_line{walls::partial_notice,
                                                       sizeof walls::partial_notice - 2};

// The working directory `workdir` is hidden from the command by `kind`'s profile for `policy`:
// bwrap's workspace-write mounts a private, empty /tmp over the host's (tmp private).
[[nodiscard]] bool profile_hides(backend_kind kind, const sandbox_policy& policy,
                                 const std::filesystem::path& workdir);

}  // namespace cordon::sandbox
