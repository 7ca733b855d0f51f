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
    // A run that could remove another cordon's slot lock would have the next cordon take that
    // cordon's uid while it lives, or could rewrite the account files runs see (identity.hpp).
    set.push_back({canonical_path("/run") / "cordon-identities",
                   "holds the locks that give each cordon its own uid, and its runs' accounts"});
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
    host.network_namespace = extra.network_namespace;
    host.network = extra.network;
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
            out = seatbelt_confine(rung.runner, argv, policy, roots, extra.network);
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
