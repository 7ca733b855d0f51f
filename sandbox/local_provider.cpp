// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The ladder, the cached verdict and confine(). Probing lives in probe.cpp.
#include "sandbox/local_provider.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <stdlib.h>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "base/log.hpp"
#include "cordon/sandbox_error.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/identity.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/leftovers.hpp"
#include "sandbox/mount_exposure.hpp"
#include "sandbox/network_plan.hpp"
#include "sandbox/path_plan.hpp"
#include "sandbox/private_tmp.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/quarantine.hpp"
#include "sandbox/run_journal.hpp"
#include "sandbox/run_judgement.hpp"
#include "sandbox/runner_image.hpp"
#include "sandbox/runner_path.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

platform current_platform() noexcept {
#if defined(__linux__)
    return platform::linux_;
#elif defined(__APPLE__)
    return platform::macos;
#else
    return platform::other;
#endif
}

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

local_provider::local_provider(local_provider_options options) : options_(std::move(options)) {
    // What cordons killed outright left (probe workspaces, private /tmps) goes now, once per
    // process, whether this one probes or not (leftovers.hpp).
    if (options_.host == platform::linux_) sweep_what_dead_cordons_left();
    const std::vector<backend_kind> rungs = ladder();
    const bool wants_bwrap =
        std::find(rungs.begin(), rungs.end(), backend_kind::bwrap) != rungs.end();
    if (options_.bwrap_path.empty() && wants_bwrap) {
        options_.bwrap_path = find_trusted_executable("bwrap", &bwrap_skipped_);
    }
    // The places of the default lookup are protected whatever this provider runs: the process's
    // cgroup watchdog is the launcher found there (runtime/cgroup_watchdog.hpp), started outside
    // any sandbox by this process and the next.
    launcher_places_ = launcher_places();
    if (options_.launcher_path.empty()) {
        const bool given = !options_.launcher_candidates.empty();
        const std::vector<fs::path> candidates =
            given ? options_.launcher_candidates : launcher_candidates();
        if (given) {
            launcher_places_.insert(launcher_places_.end(), options_.launcher_candidates.begin(),
                                    options_.launcher_candidates.end());
        }
        launcher_lookup found = find_launcher(candidates);
        options_.launcher_path = std::move(found.path);
        launcher_refused_ = std::move(found.refused);
        launcher_links_ = std::move(found.links);
    }
    for (backend_kind kind : rungs) {
        rung_report report;
        report.kind = kind;
        switch (kind) {
            case backend_kind::bwrap:
                report.runner = options_.bwrap_path.string();
                break;
            case backend_kind::landlock:
                report.runner = options_.launcher_path.string();
                break;
            case backend_kind::seatbelt:
                report.runner = options_.sandbox_exec_path.string();
                break;
        }
        rungs_.push_back(std::move(report));
    }
    if (!launcher_refused_.empty()) {
        // A refusal can end without the launcher changing (its directory made private again),
        // and the key would not see it: no verdict is shared meanwhile. Probing costs nothing
        // then, since no rung can run without the launcher.
        origin_ = "probed (no verdict is shared while the launcher is refused)";
    } else if (!options_.verdict_directory.empty() && options_.host == platform::linux_) {
        auto cache = verdict_cache::open(options_.verdict_directory);
        if (auto* reason = std::get_if<std::string>(&cache)) {
            origin_ = "probed (verdict cache unusable: " + *reason + ")";
            log::debug("verdict cache unusable: {}", *reason);
        } else {
            auto key = verdict_key(options_.bwrap_path, options_.launcher_path);
            if (auto* unknown = std::get_if<unknown_facts>(&key)) {
                origin_ = "probed (verdict cache unusable: " + unknown->reason + ")";
                log::debug("verdict cache unusable: {}", unknown->reason);
            } else {
                cache_.emplace(std::move(std::get<verdict_cache>(cache)));
                cache_key_ = std::move(std::get<std::string>(key));
                verdict_name_ =
                    verdict_file_name(options_.choice, options_.bwrap_path, options_.launcher_path);
            }
        }
    } else {
        origin_ = "probed (no verdict cache)";
    }
}

std::variant<protected_paths, std::string> local_provider::protected_set() {
    std::lock_guard lock(protected_mutex_);
    if (protected_) return *protected_;
    const std::vector<fs::path> runners{options_.bwrap_path, options_.launcher_path};
    auto closure = runner_closure(runners, trusted_directories());
    if (auto* reason = std::get_if<std::string>(&closure)) return *reason;
    protected_paths set = std::move(std::get<protected_paths>(closure));
    // A launcher created where cordon looks for one could be the next process's launcher: before
    // the one found, where it was looked for first; after it, once a run made the one found fail
    // the trust check; in a prefix left out today, once a run closed its root (launcher_places).
    for (const fs::path& place : launcher_places_) {
        std::error_code ec;
        fs::path canonical = fs::weakly_canonical(place, ec);
        set.push_back({ec ? place : std::move(canonical),
                       "is where the next cordon would look for cordon-landlock"});
    }
    for (const fs::path& link : launcher_links_) {
        set.push_back({link, "is a symbolic link on the way to cordon-landlock"});
    }
    // The probe workspaces (probe.cpp): cordon removes them outside any sandbox.
    set.push_back(
        {canonical_path("/var/tmp") / "cordon-probe-*", "holds the workspaces cordon probes with"});
    if (!options_.verdict_directory.empty()) {
        set.push_back(
            {canonical_path(options_.verdict_directory), "holds cordon's probe verdicts"});
    }
    // A run that could remove the record of its window would leave it unjudged should its
    // cordon die.
    if (const fs::path journal = journal_directory(); !journal.empty()) {
        set.push_back({canonical_path(journal), "holds the judgements cordon owes"});
    }
    protected_ = std::move(set);
    return *protected_;
}

fs::path local_provider::journal_directory() const {
    return options_.journal_directory.value_or(default_journal_directory());
}

fs::path local_provider::quarantine_home() const {
    return options_.quarantine_home.value_or(default_quarantine_home());
}

std::optional<std::string> local_provider::refusal(const sandbox_policy& policy,
                                                   std::span<const fs::path> also_protected) {
    std::vector<mount_entry> mounts;
    return refusal(policy, also_protected, mounts);
}

std::optional<std::string> local_provider::refusal(const sandbox_policy& policy,
                                                   std::span<const fs::path> also_protected,
                                                   std::vector<mount_entry>& mounts) {
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
    const auto table = read_mounts();
    if (const auto* unreadable = std::get_if<std::string>(&table)) {
        return "refusing a workspace-write workspace: " + *unreadable +
               "; cordon cannot tell which filesystems the command could write";
    }
    mounts = std::get<std::vector<mount_entry>>(table);
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
    std::optional<rung_report> rung = selected();
    if (!rung) return std::nullopt;  // confine() fails closed on its own
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
        all.push_back({path, "holds the records of cordon's runs"});
    }
    // By spelling first, then by what the mounts show.
    auto exposed = exposed_by(all, roots);
    if (!exposed) exposed = exposed_through_mounts(all, roots, mounts);
    if (exposed) return "refusing a workspace-write workspace: " + *exposed;
    return std::nullopt;
}

std::vector<backend_kind> local_provider::ladder() const {
    switch (options_.choice) {
        case backend_choice::bwrap:
            return {backend_kind::bwrap};
        case backend_choice::landlock:
            return {backend_kind::landlock};
        case backend_choice::seatbelt:
            return {backend_kind::seatbelt};
        case backend_choice::automatic:
            break;
    }
    switch (options_.host) {
        case platform::linux_:
            return {backend_kind::bwrap, backend_kind::landlock};
        case platform::macos:
            return {backend_kind::seatbelt};
        case platform::other:
            return {};
    }
    return {};
}

std::optional<rung_report> local_provider::selected() {
    std::lock_guard lock(mutex_);
    if (!verdict_.decided && cache_) {
        std::string stale;
        std::optional<std::string> body = cache_->load(verdict_name(), cache_key_, &stale);
        if (options_.refresh_verdict) {
            cached_body_ = body;
            origin_ = body ? "" : "probed (no current cached verdict: " + stale + ")";
        } else if (body && adopt_cached_locked(*body)) {
            origin_ = "cached";
            verdict_.decided = true;
            log::debug("sandbox verdict: cached");
        } else {
            origin_ =
                "probed (" + (body ? std::string("the cached verdict did not apply") : stale) + ")";
        }
    }
    if (!verdict_.decided) {
        if (rungs_.size() == 1 && options_.host == platform::macos &&
            rungs_.front().kind == backend_kind::seatbelt) {
            // A sole candidate needs no arbitration: sandbox-exec's own refusal at run time is
            // the fail-closed end (docs/contract.md, "confine()": probes only choose between
            // several candidates).
            rungs_.front().state = rung_state::usable;
            verdict_.index = 0;
        } else {
            for (std::size_t i = 0; i < rungs_.size(); ++i) {
                if (probe_rung_locked(i).state == rung_state::usable) {
                    verdict_.index = i;
                    break;
                }
                // No answer from this rung: a later one must not be chosen in its place.
                if (!inconclusive_.empty()) return std::nullopt;
            }
        }
        verdict_.decided = true;
        store_verdict_locked();
        log::debug("sandbox verdict: {}", origin_);
    }
    if (!verdict_.index) return std::nullopt;
    return rungs_[*verdict_.index];
}

std::vector<rung_report> local_provider::probe_all() {
    (void)selected();
    std::lock_guard lock(mutex_);
    bool probed = false;
    bool answered = true;
    for (std::size_t i = 0; i < rungs_.size(); ++i) {
        if (rungs_[i].state == rung_state::not_probed) {
            probe_rung_locked(i);
            probed = true;
            if (!inconclusive_.empty()) answered = false;
        }
    }
    if (probed && answered) store_verdict_locked();
    return rungs_;
}

confined_argv local_provider::wrap(const rung_report& rung, std::span<const std::string> argv,
                                   const sandbox_policy& policy, const fs::path& workdir,
                                   std::shared_ptr<const unique_fd> workspace,
                                   extra_paths extra) const {
    profile host;
    host.landlock_abi = rung.landlock_abi.value_or(0);
    host.bind_fd = rung.bind_fd;
    host.workdir = workdir;
    host.launcher_image = launcher_.image;
    host.workspace = std::move(workspace);
    host.paths = extra.plan;
    host.writable = std::move(extra.writable);
    host.private_tmp = extra.private_tmp;
    host.network_namespace = rung.kind == backend_kind::landlock && can_make_network_namespace();
    const std::shared_ptr<identity_plan> identity =
        plan_identity(rung.kind, policy, host.paths, host.private_tmp);
    if (rung.kind == backend_kind::landlock && identity->identity.reserved) {
        host.become = identity->identity;
    }
    // bwrap, started as the run's id, cannot make its mount over a hidden path that id cannot
    // reach; nor does it need one: the path is out of the command's reach already, and stays so
    // (outside its writable trees the run can open no directory; inside them every hidden path
    // keeps its mask).
    std::optional<path_plan> reachable;
    if (rung.kind == backend_kind::bwrap && identity->identity.reserved && host.paths != nullptr) {
        reachable = *host.paths;
        std::erase_if(reachable->hidden, [&identity](const hidden_path& hidden) {
            return !reachable_by_run(identity->trees, hidden.path.parent_path().string());
        });
        host.paths = &*reachable;
    }
    confined_argv out;
    switch (rung.kind) {
        case backend_kind::bwrap: {
            if (host.paths != nullptr && !host.paths->hidden.empty()) {
                unique_fd empty(::open("/dev/null", O_RDONLY | O_CLOEXEC));
                if (!empty) {
                    throw request_refused_error(
                        policy.mode, std::string("cannot open /dev/null: ") + std::strerror(errno));
                }
                host.empty = std::make_shared<const unique_fd>(std::move(empty));
            }
            // The launcher writes the sandbox's user namespace limits through it; without it
            // a run would go unbounded, so none starts (bwrap's own --disable-userns writes
            // through the same proc).
            unique_fd sysctls(::open("/proc/sys/user", O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (!sysctls) {
                throw sandbox_unavailable_error(
                    policy.mode,
                    std::string("cannot open /proc/sys/user: ") + std::strerror(errno));
            }
            host.user_sysctls = std::make_shared<const unique_fd>(std::move(sysctls));
            out = bwrap_confine(rung.runner, argv, policy, host);
            out.runner = bwrap_image_;
            break;
        }
        case backend_kind::landlock:
            out = landlock_confine(rung.runner, argv, policy, host);
            break;
        case backend_kind::seatbelt: {
            auto roots = writable_roots(policy);
            out = seatbelt_confine(rung.runner, argv, policy, roots);
            break;
        }
    }
    if (!extra.gaps.empty()) {
        out.level = enforcement::partial;
        out.gaps.insert(out.gaps.end(), extra.gaps.begin(), extra.gaps.end());
    }
    out.residue.insert(out.residue.end(), extra.residue.begin(), extra.residue.end());
    out.judgement = std::move(extra.judgement);
    if (!host.private_tmp.empty()) out.tmpdir = host.private_tmp.string();
    // bwrap binds each writable root from the fd it is given: the idmapped tree takes its place.
    // bwrap's own options only: they end at the first "--", after which the command's argv,
    // anyone's words, begins.
    for (std::size_t i = 0; i + 2 < out.argv.size() && out.argv[i] != "--"; ++i) {
        if (rung.kind != backend_kind::bwrap || out.argv[i] != "--bind-fd") continue;
        const std::string& number = out.argv[i + 1];
        int fd = -1;
        const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), fd);
        if (error != std::errc() || end != number.data() + number.size() || fd < 0) continue;
        for (idmapped_tree& tree : identity->trees) {
            if (tree.path == out.argv[i + 2]) tree.bind_fd = fd;
        }
    }
    out.identity = identity->identity;
    if (identity->identity.reserved) out.identity_setup = identity;
    // The Landlock rung's read-only trees (identity.hpp) refuse a write with the mount's word,
    // as bwrap's do.
    if (rung.kind == backend_kind::landlock &&
        std::any_of(identity->trees.begin(), identity->trees.end(),
                    [](const idmapped_tree& tree) { return tree.read_only; })) {
        out.denial_signatures.emplace_back("read-only file system");
    }
    return out;
}

std::shared_ptr<identity_plan> local_provider::plan_identity(backend_kind kind,
                                                             const sandbox_policy& policy,
                                                             const path_plan* paths,
                                                             const fs::path& private_tmp) const {
    auto out = std::make_shared<identity_plan>();
    out->identity = {::geteuid(), ::getegid(), false, {}};
    out->switch_in_spawner = kind == backend_kind::bwrap;
    if (out->identity.uid != 0 || kind == backend_kind::seatbelt) return out;
    auto reserved = reserve_identity(options_.identities);
    if (auto* why = std::get_if<std::string>(&reserved)) {
        out->identity.reason = "the command runs as root: " + *why;
        return out;
    }
    // Worked in as their owner: the writable roots (the workspace first) and the run's own /tmp.
    // Read as their owner, never changed: the workspace under read-only, and cordon's homes
    // (read as root read them, their credential stores hidden).
    const std::string workspace = canonical_path(policy.workspace_root).string();
    std::vector<std::string> writable;
    std::vector<std::string> readable;
    if (policy.mode == sandbox_mode::workspace_write) {
        writable.push_back(workspace);
        if (paths != nullptr) {
            for (const fs::path& root : paths->writable_roots)
                writable.push_back(root.string());
        }
        if (!private_tmp.empty()) writable.push_back(private_tmp.string());
    } else {
        readable.push_back(workspace);
    }
    for (const fs::path& home : credential_homes()) {
        // $HOME may name the home through a symlink; the trees are opened without following one.
        // Only a home of cordon's own: another account's (a $HOME kept through sudo) is read as
        // cordon's uid read it, as anyone's.
        std::error_code ec;
        const fs::path resolved = fs::canonical(home, ec);
        struct stat st {};
        if (!ec && ::stat(resolved.c_str(), &st) == 0 && st.st_uid == ::geteuid()) {
            readable.push_back(resolved.string());
        }
    }
    auto trees = plan_idmapped_trees(std::get<run_identity>(reserved), writable, readable);
    if (auto* why = std::get_if<std::string>(&trees)) {
        out->identity.reason = "the command runs as root: " + *why;
        return out;
    }
    // A name for the id, where the host's account files are (`id -un`, git's ident).
    const char* home = std::getenv("HOME");
    auto accounts = account_files(std::get<run_identity>(reserved),
                                  home != nullptr && home[0] == '/' ? home : "");
    if (auto* why = std::get_if<std::string>(&accounts)) {
        out->identity.reason = "the command runs as root: " + *why;
        return out;
    }
    out->passwd = std::get<std::pair<std::string, std::string>>(accounts).first;
    out->group = std::get<std::pair<std::string, std::string>>(accounts).second;
    out->identity = std::get<run_identity>(reserved);
    out->trees = std::move(std::get<std::vector<idmapped_tree>>(trees));
    return out;
}

confined_argv local_provider::confine(std::span<const std::string> argv,
                                      const sandbox_policy& policy, const fs::path& workdir) {
    if (!is_confined(policy.mode)) {
        throw std::invalid_argument("danger-full-access never reaches a sandbox provider");
    }
    std::optional<rung_report> rung = selected();
    if (!rung) {
        std::vector<unusable_backend> why;
        {
            std::lock_guard lock(mutex_);
            for (const rung_report& report : rungs_) {
                why.push_back({std::string(to_string(report.kind)), report.reason});
            }
        }
        throw sandbox_unavailable_error(policy.mode, std::nullopt, std::move(why));
    }

    // The workspace is opened once, here, without following a symlink, and the runners are
    // handed this descriptor: a directory renamed into its place afterwards is not the one they
    // make writable. It is opened before the checks, which read paths, and the path must still
    // name it after them: a directory swapped in and out while they ran is refused.
    std::shared_ptr<const unique_fd> workspace;
    if (policy.mode == sandbox_mode::workspace_write && rung->kind != backend_kind::seatbelt) {
        unique_fd fd(landlock::open_no_symlinks(policy.workspace_root.c_str(), O_DIRECTORY));
        if (!fd) {
            const int error = errno;
            // A path the checks refuse (through a symlink, say) is refused with their reason.
            if (auto refused = refusal(policy, {})) {
                throw request_refused_error(policy.mode, *refused);
            }
            throw request_refused_error(policy.mode, "cannot open the workspace " +
                                                         policy.workspace_root.string() + ": " +
                                                         std::strerror(error));
        }
        workspace = std::make_shared<const unique_fd>(std::move(fd));
    }
    std::vector<mount_entry> mounts;
    if (auto refused = refusal(policy, {}, mounts)) {
        throw request_refused_error(policy.mode, *refused);
    }
    if (workspace && !still_names(policy.workspace_root, workspace->get())) {
        throw request_refused_error(policy.mode, "the workspace " + policy.workspace_root.string() +
                                                     " was moved while it was being checked");
    }
    // The windows dead cordons left are judged before the plan reads what they may have changed,
    // and reported beside this run's record (judgement_report::abandoned).
    std::vector<neutralized_path> abandoned;
    if (options_.judge_runs)
        abandoned = judge_abandoned_windows(journal_directory(), quarantine_home());
    auto planned = plan_paths(policy);
    if (auto* refused = std::get_if<std::string>(&planned)) {
        throw request_refused_error(policy.mode, *refused);
    }
    const path_plan& paths = std::get<path_plan>(planned);
    std::vector<std::string> gaps = path_gaps(rung->kind, policy, paths);
    // The network's gaps join the record's through confine()'s own assessment; here they only
    // decide, with the paths', whether the run may go ahead.
    const network_walls network =
        plan_network(rung->kind, policy.network, rung->landlock_abi.value_or(0),
                     rung->kind == backend_kind::landlock && can_make_network_namespace());
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

    extra_paths extra;
    extra.plan = &paths;
    extra.gaps = std::move(gaps);
    if (!paths.found_left.empty()) {
        // Neither is refused: no rung could do more (hide more paths, or find a file's other
        // names), and no request of the caller's asked for them; but the record does not claim
        // them hidden.
        extra.gaps.push_back(found_left_gap(paths.found_left));
    }
    if (!paths.several_names.empty()) extra.gaps.push_back(several_names_gap(paths.several_names));
    if (!paths.links_left.empty()) extra.gaps.push_back(links_left_gap(paths.links_left));
    if (policy.mode == sandbox_mode::workspace_write) {
        if (paths.writable_roots.size() > max_writable_fds) {
            throw request_refused_error(policy.mode, "too many writable roots (at most " +
                                                         std::to_string(max_writable_fds - 1) +
                                                         " beside the workspace)");
        }
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
            judged.mounts = std::move(mounts);
            if (!extra.private_tmp.empty()) judged.elsewhere.push_back(extra.private_tmp);
            judged.journal = journal_directory();
            judged.quarantine_home = quarantine_home();
            judged.watch = options_.watch_changes;
            judged.abandoned = std::move(abandoned);
            extra.judgement = run_judgement::start(std::move(judged));
        } else if (!abandoned.empty()) {
            run_judgement::settings judged;
            judged.abandoned = std::move(abandoned);
            extra.judgement = run_judgement::start(std::move(judged));
        }
    }
    return wrap(*rung, argv, policy, workdir.empty() ? policy.workspace_root : workdir,
                std::move(workspace), std::move(extra));
}

}  // namespace cordon::sandbox

// Adopting and storing the verdict (its text and its lifetime are verdict_cache.cpp's).
namespace cordon::sandbox {

std::string local_provider::verdict_name() const {
    return verdict_name_;
}

cached_verdict local_provider::verdict_locked() const {
    return {since_boot(), {launcher_.probed, launcher_.abi, launcher_.reason}, rungs_};
}

bool local_provider::adopt_cached_locked(const std::string& body) {
    std::optional<cached_verdict> cached = cached_verdict::parse(body, rungs_);
    if (!cached || !cached->current(since_boot())) return false;
    const std::optional<std::size_t> first_usable = cached->first_usable();
    // Both Linux rungs end in the launcher, and the enforcement a rung reports follows from the
    // Landlock ABI its probe found: it must be the kernel's own. A verdict made while the
    // launcher's probe failed on a kernel with Landlock (a timeout on a loaded host) would
    // otherwise run every later command without the Landlock wall; it is never adopted.
    if (first_usable && !cached->launcher.probed) return false;
    const int kernel_abi = landlock::query_abi();
    if (kernel_abi > 0 ? cached->launcher.abi != kernel_abi : cached->launcher.abi > 0) {
        return false;
    }
    for (const rung_report& rung : cached->rungs) {
        if (rung.state != rung_state::usable) continue;
        if (kernel_abi > 0 ? rung.landlock_abi != kernel_abi : rung.landlock_abi.has_value()) {
            return false;
        }
    }
    // This process's own handles on what a usable rung runs: the verdict saves the probe runs,
    // never the checks on the runners themselves.
    if (cached->launcher.probed) {
        launcher_.probed = true;
        launcher_.abi = cached->launcher.abi;
        launcher_.reason = cached->launcher.reason;
        if (first_usable && !load_launcher_image_locked()) {
            launcher_ = {};
            return false;
        }
    }
    for (const rung_report& rung : cached->rungs) {
        if (rung.kind != backend_kind::bwrap || rung.state != rung_state::usable) continue;
        auto image = open_runner(rung.runner);
        if (std::holds_alternative<std::string>(image)) {
            launcher_ = {};
            return false;
        }
        bwrap_image_ = std::make_shared<const unique_fd>(std::move(std::get<unique_fd>(image)));
    }
    rungs_ = std::move(cached->rungs);
    verdict_.index = first_usable;
    return true;
}

void local_provider::store_verdict_locked() {
    if (!cache_) return;
    if (options_.refresh_verdict) {
        if (!cached_body_) {
            // origin_ already says why nothing current was cached.
        } else if (auto before = cached_verdict::parse(*cached_body_, rungs_); !before) {
            origin_ = "probed (the cached verdict was unreadable)";
        } else if (std::string changed = verdict_difference(before->rungs, rungs_);
                   !changed.empty()) {
            origin_ = "probed (the cached verdict was stale: " + changed + ")";
        } else {
            origin_ = "probed (the cached verdict was current)";
        }
    }
    if (!cache_->store(verdict_name(), cache_key_, verdict_locked().to_text())) {
        log::debug("could not store the probe verdict in {}", options_.verdict_directory.string());
    }
}

std::string local_provider::verdict_origin() {
    std::lock_guard lock(mutex_);
    return origin_;
}

void local_provider::forget_cached_verdict() {
    std::lock_guard lock(mutex_);
    if (cache_) cache_->forget(verdict_name());
}

void local_provider::runner_failed(const confined_argv& wrapped) {
    log::debug("{} failed before the command started: the shared verdict is forgotten",
               to_string(wrapped.backend));
    forget_cached_verdict();
}

}  // namespace cordon::sandbox
