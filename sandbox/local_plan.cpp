// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// One run's plan and its confinement (provider.hpp, run_plan): plan() checks and decides, once
// per run, on one read of the mount table; confine_planned() opens, re-checks identity and wraps.
// The ladder and the verdict are local_provider.cpp's.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "cordon/sandbox_error.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/local_provider.hpp"
#include "sandbox/mount_exposure.hpp"
#include "sandbox/network_plan.hpp"
#include "sandbox/path_plan.hpp"
#include "sandbox/private_tmp.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/run_judgement.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

// True when `path` still names the directory open as `fd`: by the kernel's name for the
// descriptor, and by identity through the path.
bool still_names(const fs::path& path, int fd) {
    std::error_code ec;
    const fs::path opened = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
    if (ec || opened != path) return false;
    struct stat by_fd {};
    struct stat by_path {};
    return ::fstat(fd, &by_fd) == 0 && ::lstat(path.c_str(), &by_path) == 0 &&
           by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

// Where a command confined by `kind` under `policy` can write on the host, canonical. A private
// /tmp is bwrap's tmpfs, or under the Landlock rung a directory cordon has just made, empty.
std::vector<fs::path> writable_for(backend_kind kind, const sandbox_policy& policy) {
    if (policy.mode != sandbox_mode::workspace_write) return {};
    if (kind == backend_kind::seatbelt) return writable_roots(policy);
    std::vector<fs::path> out{canonical_path(policy.workspace_root)};
    for (const fs::path& root : policy.rules.writable_roots)
        out.push_back(canonical_path(root));
    if (policy.rules.tmp == tmp_policy::host) out.push_back(canonical_path("/tmp"));
    return out;
}

// Opens a writable root once, without following a symlink; the reason when it cannot.
std::variant<std::shared_ptr<const unique_fd>, std::string> open_root(const fs::path& root) {
    unique_fd fd(landlock::open_no_symlinks(root.c_str(), O_DIRECTORY));
    if (!fd) return "cannot open the writable root " + root.string() + ": " + std::strerror(errno);
    if (!still_names(root, fd.get())) {
        return "the writable root " + root.string() + " was moved while it was being checked";
    }
    return std::make_shared<const unique_fd>(std::move(fd));
}

}  // namespace

// What plan() decided for one run. Immutable but for `confined`, which lets it be confined once.
struct local_provider::local_plan final : run_plan {
    local_plan(const sandbox_policy& policy, const fs::path& workdir, const local_provider& made_by)
        : run_plan(policy, workdir), owner(&made_by) {}

    const local_provider* owner;  // the provider that made it: only it confines it
    rung_report rung;
    // The workspace (workspace-write, but on Seatbelt), opened before the checks: confine_planned()
    // hands the runners this directory, once its path still names it.
    std::shared_ptr<const unique_fd> workspace;
    // The mount table the checks read (workspace-write), which the judgement's scope reads too.
    std::vector<mount_entry> mounts;
    path_plan paths;
    network_walls network;
    bool network_namespace = false;  // the Landlock rung can make the command one
    std::vector<std::string> gaps;   // the paths' and the plan's, accepted (accept_partial)
    // The windows dead cordons left, judged before the path plan read what they may have changed.
    std::vector<neutralized_path> abandoned;
    mutable std::atomic<bool> confined{false};
};

std::optional<std::string> local_provider::refusal(const sandbox_policy& policy,
                                                   std::span<const fs::path> also_protected) {
    if (policy.mode != sandbox_mode::workspace_write) return std::nullopt;
    mount_snapshot mounts;
    const std::optional<rung_report> rung = selected();
    return workspace_refusal(policy, also_protected, rung ? &*rung : nullptr, mounts);
}

std::optional<std::string> local_provider::workspace_refusal(
    const sandbox_policy& policy, std::span<const fs::path> also_protected, const rung_report* rung,
    mount_snapshot& snapshot) {
    if (policy.mode != sandbox_mode::workspace_write) return std::nullopt;
    // The path must name the directory itself: a symlink on the way (planted by an earlier run
    // in a directory it could write) would decide which directory becomes writable.
    if (const fs::path resolved = canonical_path(policy.workspace_root);
        resolved != policy.workspace_root) {
        return "refusing a workspace-write workspace: " + policy.workspace_root.string() +
               " is not the directory's own path (it resolves to " + resolved.string() +
               "); give the real path";
    }
    // Every mount check below reads this one table. Without it (no /proc) nothing below could
    // tell what the workspace reaches: refused, never allowed unchecked.
    const auto& table = snapshot.table();
    if (const auto* unreadable = std::get_if<std::string>(&table)) {
        return "refusing a workspace-write workspace: " + *unreadable +
               "; cordon cannot tell which filesystems the command could write";
    }
    const std::vector<mount_entry>& mounts = std::get<std::vector<mount_entry>>(table);
    if (auto pseudo = pseudo_filesystem_at(policy.workspace_root, mounts)) {
        return "refusing a workspace-write workspace: " + *pseudo;
    }
    for (const fs::path& root : policy.rules.writable_roots) {
        if (const fs::path resolved = canonical_path(root); resolved != root) {
            return "refusing the writable root " + root.string() +
                   ": it is not the directory's own path (it resolves to " + resolved.string() +
                   "); give the real path";
        }
        if (auto pseudo = pseudo_filesystem_at(root, mounts)) {
            return "refusing the writable root " + root.string() + ": " + *pseudo;
        }
    }
    if (rung == nullptr) return std::nullopt;  // no rung: the plan fails closed on its own
    // Nothing that runs unconfined later may lie where this command can write: not the runner of
    // this run, not the other rung's, not cordon itself, not what they load.
    const std::vector<fs::path> roots = writable_for(rung->kind, policy);
    // The rung's other writable roots (the Landlock rung's /tmp) no more than the workspace: a
    // cgroup hierarchy mounted under /tmp would let the command leave its run's cgroup.
    for (const fs::path& root : roots) {
        if (root == policy.workspace_root) continue;
        if (auto pseudo = pseudo_filesystem_at(root, mounts)) {
            return "refusing a workspace-write run: the " + std::string(to_string(rung->kind)) +
                   " rung also lets the command write " + root.string() + ", and " + *pseudo;
        }
    }
    auto closure = protected_set();
    if (const auto* unknown = std::get_if<std::string>(&closure)) {
        return "refusing a workspace-write workspace: " + *unknown +
               "; cordon cannot tell what runs unconfined later";
    }
    protected_paths all = std::move(std::get<protected_paths>(closure));
    for (const fs::path& path : also_protected) {
        // A file of several names (a hard link) could have one where the command writes, which
        // no path compared below shows.
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
            return "refusing a workspace-write workspace: " + path.string() +
                   " is one of cordon's own files and has " + std::to_string(st.st_nlink) +
                   " names (hard links), one of which the command could write";
        }
        // The caller's: the session log, the configuration files, the output spill files.
        all.push_back(
            {path,
             "is one of cordon's own files (its session log, configuration or output spills)"});
    }
    // By spelling first, then by what the mounts show.
    auto exposed = exposed_by(all, roots);
    if (!exposed) exposed = exposed_through_mounts(all, roots, mounts);
    if (exposed) return "refusing a workspace-write workspace: " + *exposed;
    return std::nullopt;
}

sandbox_unavailable_error local_provider::no_rung(sandbox_mode mode) {
    std::vector<unusable_backend> why;
    std::lock_guard lock(mutex_);
    for (const rung_report& report : rungs_)
        why.push_back({std::string(to_string(report.kind)), report.reason});
    return sandbox_unavailable_error(mode, std::nullopt, std::move(why));
}

std::variant<std::shared_ptr<const run_plan>, std::string> local_provider::plan(
    const sandbox_policy& policy, const fs::path& workdir,
    std::span<const fs::path> also_protected) {
    if (!is_confined(policy.mode)) {
        throw std::invalid_argument("danger-full-access never reaches a sandbox provider");
    }
    const std::optional<rung_report> rung = selected();
    auto out = std::make_shared<local_plan>(
        policy, workdir.empty() ? policy.workspace_root : workdir, *this);
    // Every check of this run reads this one table, on first need: the workspace's refusal, the
    // other names of a denied path, and the judgement's scope afterwards.
    mount_snapshot mounts;

    // The workspace is opened once, here, without following a symlink, and the runners are
    // handed this descriptor: a directory renamed into its place afterwards is not the one they
    // make writable. It is opened before the checks, which read paths, and the path must still
    // name it after them (here, and again when the plan is confined): a directory swapped in and
    // out while they ran is refused.
    if (rung && policy.mode == sandbox_mode::workspace_write &&
        rung->kind != backend_kind::seatbelt) {
        unique_fd fd(landlock::open_no_symlinks(policy.workspace_root.c_str(), O_DIRECTORY));
        if (!fd) {
            const int error = errno;
            // A path the checks refuse (through a symlink, say) is refused with their reason.
            if (auto refused = workspace_refusal(policy, also_protected, &*rung, mounts)) {
                return *std::move(refused);
            }
            return "cannot open the workspace " + policy.workspace_root.string() + ": " +
                   std::strerror(error);
        }
        out->workspace = std::make_shared<const unique_fd>(std::move(fd));
    }
    if (auto refused = workspace_refusal(policy, also_protected, rung ? &*rung : nullptr, mounts)) {
        return *std::move(refused);
    }
    if (!rung) throw no_rung(policy.mode);
    out->rung = *rung;
    if (out->workspace && !still_names(policy.workspace_root, out->workspace->get())) {
        return "the workspace " + policy.workspace_root.string() +
               " was moved while it was being checked";
    }
    // The windows dead cordons left are judged before the plan reads what they may have changed,
    // and reported beside this run's record (judgement_report::abandoned).
    if (options_.judge_runs)
        out->abandoned = judge_abandoned_windows(journal_directory(), quarantine_home());
    auto planned = plan_paths(policy, mounts);
    if (auto* refused = std::get_if<std::string>(&planned)) return *std::move(refused);
    out->paths = std::get<path_plan>(std::move(planned));
    const path_plan& paths = out->paths;
    std::vector<std::string> gaps = path_gaps(rung->kind, policy, paths);
    out->network_namespace = rung->kind == backend_kind::landlock && can_make_network_namespace();
    out->network = plan_network(rung->kind, policy.network, rung->landlock_abi.value_or(0),
                                out->network_namespace);
    const network_walls& network = out->network;
    if (network.unavailable) {
        // Never a gap to accept (network_plan.hpp): the rung cannot serve this network policy.
        std::vector<unusable_backend> backends;
        backends.push_back({std::string(to_string(rung->kind)), *network.unavailable});
        throw sandbox_unavailable_error(policy.mode, std::nullopt, std::move(backends));
    }
    if ((!gaps.empty() || !network.facts.missing.empty()) && !policy.rules.accept_partial) {
        // The rung is usable, not for this policy: the refusal says what of it, and why the other
        // rungs were not taken.
        std::string why;
        for (const std::string& gap : gaps)
            why += (why.empty() ? "" : "; ") + gap;
        for (const std::string& gap : network.facts.missing)
            why += (why.empty() ? "" : "; ") + gap;
        std::vector<unusable_backend> others;
        {
            std::lock_guard lock(mutex_);
            for (const rung_report& report : rungs_) {
                if (report.kind == rung->kind) continue;
                others.push_back({std::string(to_string(report.kind)),
                                  report.reason.empty() ? "not selected" : report.reason});
            }
        }
        throw sandbox_unavailable_error(policy.mode, std::nullopt, std::move(others),
                                        unenforced_policy{std::string(to_string(rung->kind)), why});
    }

    // The network's gaps join the record's through the backend's own assessment (backends.cpp);
    // the plan keeps the paths'.
    out->gaps = std::move(gaps);
    if (!paths.found_left.empty()) {
        // Neither is refused: no rung could do more (hide more paths, or find a file's other
        // names), and no request of the caller's asked for them; but the record does not claim
        // them hidden.
        out->gaps.push_back(found_left_gap(paths.found_left));
    }
    if (!paths.several_names.empty()) out->gaps.push_back(several_names_gap(paths.several_names));
    if (!paths.links_left.empty()) out->gaps.push_back(links_left_gap(paths.links_left));
    if (policy.mode == sandbox_mode::workspace_write &&
        paths.writable_roots.size() > max_writable_fds) {
        return "too many writable roots (at most " + std::to_string(max_writable_fds - 1) +
               " beside the workspace)";
    }
    if (policy.mode == sandbox_mode::workspace_write) {
        // Read by the workspace's refusal above: the judgement's scope sees the same mounts.
        if (const auto* table = std::get_if<std::vector<mount_entry>>(&mounts.table()))
            out->mounts = *table;
    }
    return std::shared_ptr<const run_plan>(std::move(out));
}

confined_argv local_provider::confine(std::span<const std::string> argv,
                                      const sandbox_policy& policy, const fs::path& workdir) {
    auto planned = plan(policy, workdir, {});
    if (auto* refused = std::get_if<std::string>(&planned)) {
        throw request_refused_error(policy.mode, *refused);
    }
    return confine_planned(*std::get<std::shared_ptr<const run_plan>>(planned), argv);
}

confined_argv local_provider::confine_planned(const run_plan& planned,
                                              std::span<const std::string> argv) {
    const auto* ours = dynamic_cast<const local_plan*>(&planned);
    if (ours == nullptr || ours->owner != this) {
        throw std::invalid_argument("a run plan is confined by the provider that made it");
    }
    if (ours->confined.exchange(true)) {
        throw std::logic_error("a run plan is confined once");
    }
    const sandbox_policy& policy = ours->policy();
    const rung_report* rung = &ours->rung;
    const path_plan& paths = ours->paths;
    // The workspace the checks passed is the one the runners get: its path must still name it.
    if (ours->workspace && !still_names(policy.workspace_root, ours->workspace->get())) {
        throw request_refused_error(policy.mode, "the workspace " + policy.workspace_root.string() +
                                                     " was moved while it was being checked");
    }
    extra_paths extra;
    extra.plan = &paths;
    extra.network = &ours->network;
    extra.network_namespace = ours->network_namespace;
    extra.gaps = ours->gaps;
    if (policy.mode == sandbox_mode::workspace_write) {
        for (std::size_t i = 1; i < paths.writable_roots.size(); ++i) {
            auto opened = open_root(paths.writable_roots[i]);
            if (auto* reason = std::get_if<std::string>(&opened)) {
                throw request_refused_error(policy.mode, *reason);
            }
            extra.writable.push_back(std::get<std::shared_ptr<const unique_fd>>(opened));
        }
        if (rung->kind == backend_kind::landlock && policy.rules.tmp == tmp_policy::private_tmp) {
            auto made = private_tmp_directory::create(canonical_path("/tmp"));
            if (auto* reason = std::get_if<std::string>(&made)) {
                throw request_refused_error(policy.mode, *reason);
            }
            auto directory =
                std::get<std::shared_ptr<const private_tmp_directory>>(std::move(made));
            const std::string name = directory->path().string();
            auto opened = open_root(name);
            if (auto* reason = std::get_if<std::string>(&opened)) {
                throw request_refused_error(policy.mode, *reason);
            }
            extra.writable.push_back(std::get<std::shared_ptr<const unique_fd>>(opened));
            extra.private_tmp = name;
            extra.residue.push_back(std::move(directory));
        }
    }
    // What the run leaves is judged once it is over; the window opens now, after every check
    // that could refuse the run.
    if (options_.judge_runs) {
        if (policy.mode == sandbox_mode::workspace_write && !policy.rules.protect.empty() &&
            rung->kind != backend_kind::seatbelt) {
            run_judgement::settings judged;
            judged.scope.roots = writable_for(rung->kind, policy);
            judged.scope.names = policy.rules.protect;
            judged.scope.hook_directories = paths.hook_directories;
            judged.scope.configurations = paths.configurations;
            judged.scope.places = paths.places;
            if (rung->kind == backend_kind::bwrap) {
                // Bound read-only: nothing changes them through their own names. A file of
                // several names is written through another one (`ln scripts/pc
                // .git/hooks/pre-commit`), which no bind covers: it is judged like the rest.
                for (const fs::path& path : paths.read_only) {
                    struct stat st {};
                    if (::lstat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && st.st_nlink > 1)
                        continue;
                    judged.scope.kept.push_back(path);
                }
                if (!paths.read_only.empty()) judged.kept = "prevented";
            } else {
                // No mounts: kept by a copy put back afterwards (the carve-outs remain a gap).
                // One that holds another writable root (`--writable-root ws/.vscode/sub`) is
                // judged instead: put back whole, it would undo what the run wrote in that root.
                for (const fs::path& path : paths.read_only) {
                    const bool holds_a_root =
                        std::any_of(paths.writable_roots.begin(), paths.writable_roots.end(),
                                    [&path](const fs::path& root) {
                                        return root != path && is_within(root, path);
                                    });
                    if (!holds_a_root &&
                        std::find(policy.rules.read_only.begin(), policy.rules.read_only.end(),
                                  path) == policy.rules.read_only.end()) {
                        judged.copied.push_back(path);
                    }
                }
                if (!judged.copied.empty()) judged.kept = "restored";
            }
            judged.mounts = ours->mounts;
            if (!extra.private_tmp.empty()) judged.elsewhere.push_back(extra.private_tmp);
            judged.journal = journal_directory();
            judged.quarantine_home = quarantine_home();
            judged.watch = options_.watch_changes;
            judged.abandoned = ours->abandoned;
            extra.judgement = run_judgement::start(std::move(judged));
        } else if (!ours->abandoned.empty()) {
            run_judgement::settings judged;
            judged.abandoned = ours->abandoned;
            extra.judgement = run_judgement::start(std::move(judged));
        }
    }
    return wrap(*rung, argv, policy, ours->workdir(), ours->workspace, std::move(extra));
}

}  // namespace cordon::sandbox
