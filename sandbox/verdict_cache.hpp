// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The verdict cache: what probing the ladder found, kept across processes, so that a cordon that
// starts for one command does not probe the ladder again (a probe confines `true` under every
// profile: tens of milliseconds, several times the cost of the command).
//
// A verdict is reused only while nothing that could change it has changed. The key holds the
// boot, the user and its namespaces, the process's capabilities, no_new_privs, seccomp state and
// filters, its LSM label, the sysctls that gate user namespaces and executable memfds, the kernel's
// Landlock ABI, and the identity (device, inode, size, mtime, ctime) of every runner and of the
// program that probed. Anything else that breaks a runner shows at run time as a runner failure,
// before the command ran, and the caller then forgets the verdict
// (local_provider::forget_cached_verdict).
//
// The cache lives in /dev/shm/cordon-verdicts-<euid>: a directory of this user that nobody else
// may enter, on a filesystem no confined command can open (Landlock grants /dev node by node,
// bwrap mounts a private /dev), and it is one of the paths a workspace-write workspace may not
// contain. The files are read only when this user owns them and no one else could have written
// them: a verdict decides which rung runs, so it is guarded like the runners. The provider checks
// the Landlock ABI of every usable rung against the kernel's, so a verdict cannot report
// enforcement the rung does not give.
//
// Files are replaced atomically (written beside, then renamed), so a concurrent reader sees the
// old verdict or the new one, never a mix.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cordon/local_provider.hpp"
#include "cordon/unique_fd.hpp"
#include "sandbox/rung_report.hpp"

namespace cordon::sandbox {

// What the launcher's probe found, as a verdict keeps it.
struct launcher_facts {
    bool probed = false;
    int abi = 0;         // > 0: Landlock works at this ABI; <= 0: unavailable
    std::string reason;  // why the image could not be loaded, or why Landlock is unavailable
};

// One verdict: what probing a ladder found, and when. Its text, one line per fact:
//   probed <seconds since boot>
//   launcher <probed 0|1> <abi> <reason>
//   rung <kind> <state 0|1|2> <abi|-> <bind_fd 0|1> <reason>   (one per rung, ladder order)
// The format is that of the files cordon has always written ("cordon-verdict 1"): a verdict
// stored by an earlier cordon is read, and one that is not of this shape is simply not adopted.
struct cached_verdict {
    std::chrono::seconds probed_at{0};  // CLOCK_BOOTTIME, as since_boot() says
    launcher_facts launcher;
    std::vector<rung_report> rungs;

    [[nodiscard]] std::string to_text() const;
    // `text` laid over `ladder` (whose rungs give the kinds, in order, and the runners); nullopt
    // when it is not a verdict of that ladder. A usable rung's enforcement follows from its ABI.
    [[nodiscard]] static std::optional<cached_verdict> parse(
        std::string_view text, const std::vector<rung_report>& ladder);

    [[nodiscard]] std::optional<std::size_t> first_usable() const;
    // Whether it may be reused at `now` (since_boot()): one whose first rung is usable until its
    // key changes; one that passed over a rung or found none usable, which may rest on a passing
    // condition (a probe that timed out on a loaded host), for a minute only.
    [[nodiscard]] bool current(std::chrono::seconds now) const;
};

// Seconds since boot (CLOCK_BOOTTIME): a verdict's clock.
[[nodiscard]] std::chrono::seconds since_boot();

// How two verdicts of one ladder differ where both probed a rung, in one line; empty when they
// agree.
[[nodiscard]] std::string verdict_difference(const std::vector<rung_report>& before,
                                             const std::vector<rung_report>& now);

// /dev/shm/cordon-verdicts-<euid>.
[[nodiscard]] std::filesystem::path default_verdict_cache();

// A key that could not be made: a fact only /proc gives (the boot, the namespaces, the
// process's privileges, its executable) could not be read. Two processes without /proc would
// otherwise share one key whatever their facts are; such a process probes for itself.
struct unknown_facts {
    std::string reason;
};

// The facts a verdict depends on, one `name value` line each, for the runners given.
[[nodiscard]] std::variant<std::string, unknown_facts> verdict_key(
    const std::filesystem::path& bwrap, const std::filesystem::path& launcher);

// The file a verdict is kept in: one per ladder choice and per prober (the running program, its
// bwrap and its launcher, by path), so that programs that probe the same host with runners of
// their own — an agent that links the library beside the cordon command, two builds of cordon —
// each keep theirs instead of replacing the other's at every call, which cost each of their calls
// a probe. A changed runner at the same path still names the fact that changed (load()).
[[nodiscard]] std::string verdict_file_name(backend_choice choice,
                                            const std::filesystem::path& bwrap,
                                            const std::filesystem::path& launcher);

class verdict_cache {
public:
    // Opens (creating it when missing) the cache directory; the reason it cannot be trusted
    // otherwise: not a directory, not this user's, open to others.
    [[nodiscard]] static std::variant<verdict_cache, std::string> open(
        const std::filesystem::path& directory);

    // The body stored under `name` for exactly `key`, or nullopt; `stale` (when given) is set to
    // why a stored verdict was not the current one: the first fact of the key that differs.
    [[nodiscard]] std::optional<std::string> load(const std::string& name, const std::string& key,
                                                  std::string* stale = nullptr) const;
    // Replaces what is stored under `name`; false when it could not (the cache is an
    // optimisation: the caller goes on). Verdict files of any name not written for a week go
    // (another boot's, a build since removed): the directory holds what is in use.
    bool store(const std::string& name, const std::string& key, const std::string& body) const;
    void forget(const std::string& name) const;

private:
    explicit verdict_cache(unique_fd directory) : directory_(std::move(directory)) {}
    // Removes the verdict files but `kept` that were not written for a week, and the temporaries
    // of a store() that a killed cordon never renamed.
    void forget_unused(const std::string& kept) const;
    unique_fd directory_;
};

}  // namespace cordon::sandbox
