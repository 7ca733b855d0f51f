// The ladder, the cached verdict and confine(). Probing lives in probe.cpp.
#include "sandbox/local_provider.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "sandbox/backends.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/protected_paths.hpp"
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

std::string_view to_string(backend_choice choice) noexcept {
    switch (choice) {
        case backend_choice::automatic:
            return "auto";
        case backend_choice::bwrap:
            return "bwrap";
        case backend_choice::landlock:
            return "landlock";
        case backend_choice::seatbelt:
            return "seatbelt";
    }
    return "invalid";
}

std::optional<backend_choice> parse_backend_choice(std::string_view text) noexcept {
    for (auto choice : {backend_choice::automatic, backend_choice::bwrap, backend_choice::landlock,
                        backend_choice::seatbelt}) {
        if (text == to_string(choice)) return choice;
    }
    return std::nullopt;
}

std::string_view to_string(rung_state state) noexcept {
    switch (state) {
        case rung_state::usable:
            return "usable";
        case rung_state::unusable:
            return "unusable";
        case rung_state::not_probed:
            return "not probed";
    }
    return "invalid";
}

namespace {

// Where a command confined by `kind` under `policy` can write on the host, canonical.
std::vector<fs::path> writable_for(backend_kind kind, const sandbox_policy& policy) {
    if (policy.mode != sandbox_mode::workspace_write) return {};
    switch (kind) {
        case backend_kind::bwrap:
            return {canonical_path(policy.workspace_root)};  // /tmp is private
        case backend_kind::landlock:
            return {canonical_path(policy.workspace_root), canonical_path("/tmp")};
        case backend_kind::seatbelt:
            return writable_roots(policy);
    }
    return {};
}

}  // namespace

local_provider::local_provider(local_provider_options options) : options_(std::move(options)) {
    if (options_.bwrap_path.empty() && options_.host == platform::linux_) {
        options_.bwrap_path = find_trusted_executable("bwrap", &bwrap_skipped_);
    }
    if (options_.launcher_path.empty()) options_.launcher_path = default_launcher_path();
    for (backend_kind kind : ladder()) {
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
}

const protected_paths& local_provider::protected_set() {
    std::call_once(protected_once_, [this] {
        const std::vector<fs::path> runners{options_.bwrap_path, options_.launcher_path};
        protected_ = runner_closure(runners, trusted_directories());
        // The probe workspaces (probe.cpp): cordon removes them outside any sandbox.
        protected_.push_back({canonical_path("/var/tmp") / "cordon-probe-*",
                              "holds the workspaces cordon probes with"});
    });
    return protected_;
}

std::optional<std::string> local_provider::refusal(const sandbox_policy& policy,
                                                   std::span<const fs::path> also_protected) {
    if (policy.mode != sandbox_mode::workspace_write) return std::nullopt;
    // The path must name the directory itself: a symlink on the way (planted by an earlier run
    // in a directory it could write) would decide which directory becomes writable.
    if (const fs::path resolved = canonical_path(policy.workspace_root);
        resolved != policy.workspace_root) {
        return "refusing a workspace-write workspace: " + policy.workspace_root.string() +
               " is not the directory's own path (it resolves to " + resolved.string() +
               "); give the real path";
    }
    if (auto pseudo = pseudo_filesystem_at(policy.workspace_root)) {
        return "refusing a workspace-write workspace: " + *pseudo;
    }
    std::optional<rung_report> rung = selected();
    if (!rung) return std::nullopt;  // confine() fails closed on its own
    // Nothing that runs unconfined later may lie where this command can write: not the runner of
    // this run, not the other rung's, not cordon itself, not what they load.
    const std::vector<fs::path> roots = writable_for(rung->kind, policy);
    std::vector<protected_path> extra;
    for (const fs::path& path : also_protected) {
        extra.push_back({path, "holds the records of cordon's runs"});
    }
    auto exposed = exposed_by(protected_set(), roots);
    if (!exposed) exposed = exposed_by(extra, roots);
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
            }
        }
        verdict_.decided = true;
    }
    if (!verdict_.index) return std::nullopt;
    return rungs_[*verdict_.index];
}

std::vector<rung_report> local_provider::probe_all() {
    (void)selected();
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < rungs_.size(); ++i) {
        if (rungs_[i].state == rung_state::not_probed) probe_rung_locked(i);
    }
    return rungs_;
}

confined_argv local_provider::wrap(const rung_report& rung, std::span<const std::string> argv,
                                   const sandbox_policy& policy, const fs::path& workdir,
                                   std::shared_ptr<const unique_fd> workspace) const {
    profile host;
    host.landlock_abi = rung.landlock_abi.value_or(0);
    host.bind_fd = rung.bind_fd;
    host.workdir = workdir;
    host.launcher_image = launcher_.image;
    host.workspace = std::move(workspace);
    switch (rung.kind) {
        case backend_kind::bwrap: {
            confined_argv out = bwrap_confine(rung.runner, argv, policy, host);
            out.runner = bwrap_image_;
            return out;
        }
        case backend_kind::landlock:
            return landlock_confine(rung.runner, argv, policy, host);
        case backend_kind::seatbelt: {
            auto roots = writable_roots(policy);
            return seatbelt_confine(rung.runner, argv, policy, roots);
        }
    }
    throw std::logic_error("unreachable backend_kind");
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

    if (auto refused = refusal(policy, {})) throw sandbox_unavailable_error(policy.mode, *refused);

    // The workspace is opened once, here, without following a symlink, and the runners are
    // handed this descriptor: a directory renamed into its place afterwards is not the one they
    // make writable. What the descriptor names is what gets checked below.
    std::shared_ptr<const unique_fd> workspace;
    if (policy.mode == sandbox_mode::workspace_write && rung->kind != backend_kind::seatbelt) {
        unique_fd fd(landlock::open_no_symlinks(policy.workspace_root.c_str(), O_DIRECTORY));
        if (!fd) {
            const int error = errno;
            throw sandbox_unavailable_error(policy.mode, "cannot open the workspace " +
                                                             policy.workspace_root.string() + ": " +
                                                             std::strerror(error));
        }
        std::error_code ec;
        const fs::path opened = fs::read_symlink("/proc/self/fd/" + std::to_string(fd.get()), ec);
        if (ec || opened != policy.workspace_root) {
            throw sandbox_unavailable_error(policy.mode,
                                            "the workspace " + policy.workspace_root.string() +
                                                " was moved while it was being opened");
        }
        workspace = std::make_shared<const unique_fd>(std::move(fd));
    }

    return wrap(*rung, argv, policy, workdir.empty() ? policy.workspace_root : workdir,
                std::move(workspace));
}

}  // namespace cordon::sandbox
