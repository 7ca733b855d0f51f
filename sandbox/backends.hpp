// The backends as pure argv transformers (STYLE.md rule 8): given the runner's absolute path, the
// caller's argv and a confined policy, each returns the confined_argv to spawn. Nothing here
// spawns, probes or reads the environment, so every profile is golden-testable.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "sandbox/confined_argv.hpp"
#include "sandbox/policy.hpp"

namespace cordon::sandbox {

// The child fd at which the executor places the runner-status pipe. Fixed so that golden argv
// stay stable; fds 0-2 are the standard streams.
inline constexpr int runner_status_fd = 3;

// bubblewrap. Beyond the reference profile (--ro-bind / / --dev /dev --proc /proc
// --die-with-parent [--tmpfs /tmp --bind R R]) cordon adds:
//   --unshare-user --disable-userns --cap-drop ALL: a caller running as root must not be able to
//     remount, unmount or re-bind its way to a write. Without a user namespace bwrap keeps every
//     capability for uid 0 and `mount -o remount,rw /` succeeds inside; in a fresh user namespace
//     with all capabilities dropped it fails, and --disable-userns stops the command from creating
//     a nested namespace in which it would hold capabilities again.
//   --unshare-pid: bwrap runs a reaper as pid 1 of a new pid namespace; when the command exits or
//     bwrap is killed, the kernel kills everything left in the namespace, including processes
//     that called setsid() or double-forked.
//   --json-status-fd 3: the command ran iff the stream holds an "exit-code" record.
[[nodiscard]] confined_argv bwrap_confine(const std::filesystem::path& bwrap,
                                          std::span<const std::string> argv,
                                          const sandbox_policy& policy);

// cordon-landlock: --ro / --rw /dev/null [--rw /tmp --rw R]; the /dev/null file, not /dev, so
// that a write to /dev/shm is refused under read-only. Read-only adds --deny-metadata (a seccomp
// filter against chmod/chown/utime/xattr, which Landlock does not govern) and reports `level`,
// what the probe established; workspace-write cannot filter metadata by path and is `partial`.
[[nodiscard]] confined_argv landlock_confine(const std::filesystem::path& launcher,
                                             std::span<const std::string> argv,
                                             const sandbox_policy& policy, enforcement level);

// Seatbelt: sandbox-exec -p PROFILE -- ARGV. `roots` are writable_roots(policy), passed in so the
// profile is a pure function of its inputs.
[[nodiscard]] std::string seatbelt_profile(sandbox_mode mode,
                                           std::span<const std::filesystem::path> roots);
[[nodiscard]] confined_argv seatbelt_confine(const std::filesystem::path& sandbox_exec,
                                             std::span<const std::string> argv,
                                             const sandbox_policy& policy,
                                             std::span<const std::filesystem::path> roots);

// SBPL string literal: backslash and double quote escaped, wrapped in double quotes.
[[nodiscard]] std::string sbpl_quote(std::string_view text);

// The stderr dialects of each backend (reference 5.1), exposed for consumers and tests. The
// Landlock read-only profile adds "operation not permitted", its metadata filter's EPERM.
[[nodiscard]] std::vector<std::string> denial_signatures(
    backend_kind kind, sandbox_mode mode = sandbox_mode::workspace_write);
[[nodiscard]] std::vector<runner_failure_rule> runner_failure_rules(backend_kind kind);

inline constexpr std::string_view launcher_notice_line =
    "cordon-landlock: partial enforcement (older Landlock ABI)";

}  // namespace cordon::sandbox
