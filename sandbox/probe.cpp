// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Probing the ladder's rungs: functional probes that confine `true` under each mode's real
// profile, through the caller's probe_runner (the runtime's spawn path in production).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "base/locked_directory.hpp"
#include "base/log.hpp"
#include "base/tree_removal.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/leftovers.hpp"
#include "sandbox/local_provider.hpp"
#include "sandbox/runner_image.hpp"
#include "sandbox/runner_path.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view probe_prefix = "cordon-probe-";

// A private, empty directory standing in for a workspace while probing the workspace-write
// profile. It is made where no confined command can write (/var/tmp: a Landlock workspace-write
// command writes the host's /tmp, and the provider protects /var/tmp/cordon-probe-*), held by a
// lock while the probe lives (base/locked_directory.hpp), so that a probe killed outright leaves
// nothing for long: every later cordon of its uid removes every one whose lock is free
// (sweep_dead_probe_workspaces, sandbox/leftovers.hpp), whether it probes or takes a cached
// verdict: when only a probing cordon swept, the cached verdict every later cordon took let them
// pile up. The workspace is empty as a rule; it is removed as a tree all the same
// (base/tree_removal.hpp), so that whatever lands in it (a runner's mount point, a command's
// files where the fallback /tmp is used) cannot keep it forever, relative to the base's
// descriptor and only while its name still holds the directory this process made: a command
// that swapped the entry for a symlink or another directory would aim that removal, run by
// cordon outside any sandbox, at any directory on the host.
class probe_workspace {
public:
    probe_workspace() {
        for (const char* candidate : {"/var/tmp", "/tmp"}) {
            const fs::path parent = canonical_path(candidate);
            unique_fd base_fd(landlock::open_no_symlinks(parent.c_str(), O_DIRECTORY));
            if (!base_fd) continue;
            (void)sweep_dead_probe_workspaces(parent);
            auto made = base::make_locked_directory(parent, probe_prefix);
            auto* directory = std::get_if<base::locked_directory>(&made);
            if (directory == nullptr) continue;
            struct stat st {};
            if (::fstat(directory->fd.get(), &st) != 0 || (st.st_mode & 077) != 0) {
                // Not the directory mkdtemp made: leave whatever is there alone.
                continue;
            }
            unique_fd fd(::openat(base_fd.get(), directory->name.c_str(),
                                  O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!fd || !base::still_at(base_fd.get(), directory->name.c_str(), fd.get())) continue;
            path_ = directory->path;
            leaf_ = directory->name;
            base_fd_ = std::move(base_fd);
            lock_ = std::move(directory->fd);
            fd_ = std::make_shared<const unique_fd>(std::move(fd));
            return;
        }
    }
    ~probe_workspace() {
        if (!base_fd_) return;
        // Unlocked only after: no sweep takes it meanwhile.
        if (auto stayed = base::remove_tree(base_fd_.get(), leaf_, lock_.get())) {
            log::warn("cannot remove all of the probe workspace {}: {}", path_.string(), *stayed);
        }
    }
    probe_workspace(const probe_workspace&) = delete;
    probe_workspace& operator=(const probe_workspace&) = delete;
    [[nodiscard]] const fs::path& path() const { return path_; }
    [[nodiscard]] const std::shared_ptr<const unique_fd>& fd() const { return fd_; }

private:
    fs::path path_;
    std::string leaf_;
    unique_fd base_fd_;
    unique_fd lock_;  // the directory, flock(LOCK_EX) held while the probe lives
    std::shared_ptr<const unique_fd> fd_;
};

}  // namespace

std::size_t sweep_dead_probe_workspaces(const fs::path& parent) {
    unique_fd base_fd(landlock::open_no_symlinks(parent.c_str(), O_DIRECTORY));
    if (!base_fd) return 0;
    std::size_t removed = 0;
    for (const base::locked_directory& dead : base::abandoned_directories(parent, probe_prefix)) {
        if (auto stayed = base::remove_tree(base_fd.get(), dead.name, dead.fd.get())) {
            log::debug("cannot remove all of {}: {}", dead.path.string(), *stayed);
        } else {
            ++removed;
        }
    }
    return removed;
}

std::optional<std::string> local_provider::run_profiles(const rung_report& report) const {
    // Probe = run: each mode's real profile confines `true`, status channel included, so a
    // workspace-write-only failure (a --bind or --tmpfs the host refuses) is caught here too.
    probe_workspace workspace;
    if (!workspace.fd()) return "cannot create a probe workspace under /var/tmp or /tmp";
    // `true` by absolute path from a directory no command can write: one planted on PATH could
    // make every rung look unusable, or fake a failure that selects a weaker profile.
    const fs::path true_path = find_trusted_executable("true");
    if (true_path.empty()) return "no `true` in a directory runners are taken from";
    const std::vector<std::string> command{true_path.string()};
    for (sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        sandbox_policy policy{mode, workspace.path()};
        // The Landlock rung's run may grant the host's /tmp by path (tmp = host): the probe
        // makes that grant, so that a host where it fails is caught here (a private /tmp is a
        // descriptor like the workspace).
        if (report.kind == backend_kind::landlock) policy.rules.tmp = tmp_policy::host;
        probe_run_result result =
            options_.run_probe(wrap(report, command, policy, workspace.path(), workspace.fd(), {}),
                               options_.probe_timeout);
        if (result.status_lost) inconclusive_ = *result.failure;
        if (result.failure) return std::string(to_string(mode)) + " profile: " + *result.failure;
    }
    return std::nullopt;
}

bool local_provider::load_launcher_image_locked() {
    if (launcher_.image) return true;
    const fs::path& path = options_.launcher_path;
    if (!launcher_refused_.empty()) {
        launcher_.reason = launcher_refused_;
        return false;
    }
    if (::access(path.c_str(), X_OK) != 0) {
        const int error = errno;
        launcher_.reason =
            "launcher not executable: " + path.string() + ": " + std::strerror(error);
        return false;
    }
    // From here on this provider runs its own sealed copy, probes included. Where memfds may not
    // be executed (vm.memfd_noexec=2), it runs the file it opened instead: a command still cannot
    // write it (the file is protected from workspace-write runs), it only loses the copy's
    // immunity to a rewrite by someone outside every sandbox.
    auto image = load_sealed_image(path);
    if (auto* error = std::get_if<std::string>(&image)) {
        log::debug("no sealed copy of the launcher ({}); running it from its file", *error);
        image = open_runner(path);
        if (auto* again = std::get_if<std::string>(&image)) {
            launcher_.reason = *error + "; " + *again;
            return false;
        }
    }
    launcher_.image = std::make_shared<const unique_fd>(std::move(std::get<unique_fd>(image)));
    return true;
}

const local_provider::launcher_state& local_provider::probe_launcher_locked() {
    if (launcher_.probed) return launcher_;
    launcher_.probed = true;
    if (!load_launcher_image_locked()) return launcher_;
    const fs::path& path = options_.launcher_path;
    confined_argv probe;
    probe.argv = {path.string(),
                  "--status-fd",
                  std::to_string(runner_status_fd),
                  "--env-fd",
                  std::to_string(command_environment_fd),
                  "--probe"};
    probe.backend = backend_kind::landlock;
    probe.status = status_channel{runner_status_fd, runner_job::answer_probe};
    probe.environment_fd = command_environment_fd;
    probe.runner = launcher_.image;
    probe_run_result result = options_.run_probe(probe, options_.probe_timeout);
    if (result.status_lost) {
        // No answer is not "Landlock is unavailable": asked again by the next probe.
        inconclusive_ = *result.failure;
        launcher_.probed = false;
        launcher_.reason = *result.failure;
        return launcher_;
    }
    if (result.failure || result.abi <= 0) {
        launcher_.reason = result.failure.value_or("the launcher's probe answer holds no ABI");
        return launcher_;
    }
    launcher_.abi = result.abi;
    return launcher_;
}

rung_report local_provider::probe_bwrap(rung_report report) {
    if (report.runner.empty()) {
        report.state = rung_state::unusable;
        report.reason = bwrap_skipped_.empty() ? "bwrap not found in a root-owned directory on PATH"
                                               : "no trusted bwrap: " + bwrap_skipped_;
        return report;
    }
    // cordon-landlock runs inside every bwrap sandbox; without it bwrap alone is not enough.
    const launcher_state& launcher = probe_launcher_locked();
    if (!inconclusive_.empty()) return report;
    if (!launcher.image) {
        report.state = rung_state::unusable;
        report.reason = "cordon-landlock is needed inside the sandbox: " + launcher.reason;
        return report;
    }
    if (launcher.abi > 0) report.landlock_abi = launcher.abi;
    auto image = open_runner(report.runner);
    if (auto* error = std::get_if<std::string>(&image)) {
        report.state = rung_state::unusable;
        report.reason = *error;
        return report;
    }
    bwrap_image_ = std::make_shared<const unique_fd>(std::move(std::get<unique_fd>(image)));
    report.bind_fd = true;
    std::optional<std::string> failure = run_profiles(report);
    if (failure && failure->find("--bind-fd") != std::string::npos) {
        // A bubblewrap older than 0.10 binds the workspace by path; the launcher's rule still
        // comes from the checked descriptor.
        report.bind_fd = false;
        failure = run_profiles(report);
    }
    if (failure) {
        report.state = rung_state::unusable;
        report.reason = *failure;
    } else {
        report.state = rung_state::usable;
        report.level = assess(backend_kind::bwrap, sandbox_mode::read_only, launcher.abi).level;
    }
    return report;
}

rung_report local_provider::probe_landlock(rung_report report) {
    const launcher_state& launcher = probe_launcher_locked();
    if (!launcher.image || launcher.abi <= 0) {
        report.state = rung_state::unusable;
        report.reason = launcher.reason;
        return report;
    }
    report.landlock_abi = launcher.abi;
    if (auto failure = run_profiles(report)) {
        report.state = rung_state::unusable;
        report.reason = *failure;
    } else {
        report.state = rung_state::usable;
        report.level = assess(backend_kind::landlock, sandbox_mode::read_only, launcher.abi).level;
    }
    return report;
}

rung_report local_provider::probe_seatbelt(rung_report report) const {
    if (::access(report.runner.c_str(), X_OK) != 0) {
        const int error = errno;
        report.state = rung_state::unusable;
        report.reason = report.runner + ": " + std::strerror(error);
        return report;
    }
    if (auto failure = run_profiles(report)) {
        report.state = rung_state::unusable;
        report.reason = *failure;
    } else {
        report.state = rung_state::usable;
    }
    return report;
}

rung_report& local_provider::probe_rung_locked(std::size_t index) {
    if (rungs_[index].state != rung_state::not_probed) return rungs_[index];
    if (!options_.run_probe) {
        throw std::logic_error("local_provider: a probe_runner is required to probe " +
                               std::string(to_string(rungs_[index].kind)));
    }
    rung_report report = rungs_[index];
    inconclusive_.clear();
    switch (report.kind) {
        case backend_kind::bwrap:
            report = probe_bwrap(std::move(report));
            break;
        case backend_kind::landlock:
            report = probe_landlock(std::move(report));
            break;
        case backend_kind::seatbelt:
            report = probe_seatbelt(std::move(report));
            break;
    }
    if (!inconclusive_.empty()) {
        // A probe whose status another process took proved nothing: calling the rung unusable
        // (or usable without the Landlock wall) on that would be a lie, and a cached one would
        // outlive the cause. The rung stays unprobed, saying why, and nothing is decided.
        log::warn("probe {}: no verdict: {}", to_string(report.kind), inconclusive_);
        rungs_[index].reason = "no verdict: " + inconclusive_;
        return rungs_[index];
    }
    log::debug("probe {}: {}{}{}", to_string(report.kind), to_string(report.state),
               report.reason.empty() ? "" : ": ", report.reason);
    rungs_[index] = std::move(report);
    return rungs_[index];
}

}  // namespace cordon::sandbox
