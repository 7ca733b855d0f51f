// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The local provider: a per-platform ladder of backends (Linux: bwrap, then cordon-landlock;
// macOS: Seatbelt; elsewhere: none), functional probes that really confine `true` under each
// mode's profile, and a verdict cached for the provider's lifetime.
//
// Probing needs to spawn processes, which is the runtime's job; the provider takes a
// probe_runner so that this library stays a pure argv transformer plus selection logic, and
// tests can drive the ladder with scripted outcomes.
//
// Thread safety: every member may be called from any thread, concurrently. Probing happens under
// the provider's mutex. The first selected(), plan(), confine(), refusal() or probe_all() probes
// the ladder up to the first usable rung, and concurrent callers wait for that one verdict. After
// it, confine() takes the mutex only briefly and never probes again. runtime::make_local_provider()
// calls selected() before it returns, so that no later confine() waits for a probe. A provider
// constructed directly probes on first use. probe_all() then probes the remaining rungs under the
// same mutex, and confine() calls made meanwhile wait for it. protected_set() is computed once,
// under a mutex of its own, and its first concurrent callers wait for it; a failure to compute it
// is not kept, so that the next call tries again.
//
// With a verdict directory (options), the first selected() adopts the verdict another process
// stored there when its key still holds (verdict_cache.hpp), and probes only when it does not;
// a verdict it probed is stored for the next process. A rung the cache says is usable still has
// its runner opened (and the launcher sealed) by this process: only the probe runs are saved.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/mountinfo.hpp"
#include "cordon/local_provider.hpp"
#include "cordon/provider.hpp"
#include "cordon/sandbox_error.hpp"
#include "sandbox/mount_exposure.hpp"
#include "sandbox/network_plan.hpp"
#include "sandbox/path_plan.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/rung_report.hpp"
#include "sandbox/verdict_cache.hpp"

namespace cordon::sandbox {

class local_provider final : public provider {
public:
    explicit local_provider(local_provider_options options);
    local_provider(const local_provider&) = delete;
    local_provider& operator=(const local_provider&) = delete;

    [[nodiscard]] confined_argv confine(std::span<const std::string> argv,
                                        const sandbox_policy& policy,
                                        const std::filesystem::path& workdir) override;

    [[nodiscard]] std::optional<std::string> refusal(
        const sandbox_policy& policy,
        std::span<const std::filesystem::path> also_protected) override;

    // The run's plan (provider.hpp), made once: the rung, the workspace opened before the checks,
    // the refusal's checks on one read of the mount table, the abandoned windows judged, the path
    // plan, the network walls and the gaps, each decided here only. confine() is plan() then
    // confine_planned().
    [[nodiscard]] std::variant<std::shared_ptr<const run_plan>, std::string> plan(
        const sandbox_policy& policy, const std::filesystem::path& workdir,
        std::span<const std::filesystem::path> also_protected) override;

    // Re-checks that the workspace's path still names the directory the plan checked, opens the
    // other writable roots (and the Landlock rung's private /tmp), opens the run's judgement
    // window and wraps: nothing is decided again.
    [[nodiscard]] confined_argv confine_planned(const run_plan& planned,
                                                std::span<const std::string> argv) override;

    // The rungs this provider considers, in order.
    [[nodiscard]] std::vector<backend_kind> ladder() const;

    // The selected rung, probing the ladder up to the first usable rung on first use; nullopt
    // when no rung is usable. The verdict, an unavailable one included, is cached.
    [[nodiscard]] std::optional<rung_report> selected();

    // Probes every rung (each at most once per provider lifetime) for diagnostics.
    [[nodiscard]] std::vector<rung_report> probe_all();

    // What a workspace-write run must not be able to write (protected_paths.hpp), computed on
    // first use: read-only runs never need it. The reason when it cannot be known (no /proc):
    // refusal() then refuses every workspace-write run.
    [[nodiscard]] std::variant<protected_paths, std::string> protected_set();

    // Where the verdict came from, in one line: "cached", "probed (<why not from the cache>)",
    // or after a refresh whether the cached verdict was current or stale, and why.
    [[nodiscard]] std::string verdict_origin();

    // Removes the shared verdict, so that the next cordon probes afresh.
    void forget_cached_verdict();
    void runner_failed(const confined_argv& wrapped) override;

private:
    // The launcher, shared by both Linux rungs: its sealed image and what its probe found.
    struct launcher_state {
        bool probed = false;
        std::shared_ptr<const unique_fd> image;
        int abi = 0;         // > 0: Landlock works at this ABI; <= 0: unavailable
        std::string reason;  // why the image could not be loaded, or why Landlock is unavailable
    };

    struct local_plan;  // local_plan.cpp
    // refusal() under `rung` (null: none is usable, and only what needs none is checked), reading
    // the mount table from the run's snapshot.
    [[nodiscard]] std::optional<std::string> workspace_refusal(
        const sandbox_policy& policy, std::span<const std::filesystem::path> also_protected,
        const rung_report* rung, mount_snapshot& mounts);
    [[nodiscard]] sandbox_unavailable_error no_rung(sandbox_mode mode);
    [[nodiscard]] std::filesystem::path journal_directory() const;
    [[nodiscard]] std::filesystem::path quarantine_home() const;
    rung_report& probe_rung_locked(std::size_t index);
    const launcher_state& probe_launcher_locked();
    bool load_launcher_image_locked();
    [[nodiscard]] std::string verdict_name() const;
    [[nodiscard]] cached_verdict verdict_locked() const;
    bool adopt_cached_locked(const std::string& body);
    void store_verdict_locked();
    rung_report probe_bwrap(rung_report report);
    rung_report probe_landlock(rung_report report);
    rung_report probe_seatbelt(rung_report report) const;
    [[nodiscard]] std::optional<std::string> run_profiles(const rung_report& report) const;
    // What confine() resolved beyond the mode for one run (the probes need none of it).
    struct extra_paths {
        const path_plan* plan = nullptr;
        const network_walls* network = nullptr;  // planned once, for the rung
        bool network_namespace = false;          // what the walls were planned with
        std::vector<std::shared_ptr<const unique_fd>> writable;
        std::filesystem::path private_tmp;
        std::vector<std::string> gaps;  // accepted (policy.rules.accept_partial)
        std::vector<std::shared_ptr<const void>> residue;
        std::shared_ptr<run_judgement> judgement;
    };
    [[nodiscard]] confined_argv wrap(const rung_report& rung, std::span<const std::string> argv,
                                     const sandbox_policy& policy,
                                     const std::filesystem::path& workdir,
                                     std::shared_ptr<const unique_fd> workspace,
                                     extra_paths extra) const;
    // Who a run's command is on the host (identity.hpp): cordon's own ids, or, cordon being
    // root, one reserved for this process with the trees it must see as its owner's.
    [[nodiscard]] std::shared_ptr<identity_plan> plan_identity(
        backend_kind kind, const sandbox_policy& policy, const path_plan* paths,
        const std::filesystem::path& private_tmp) const;

    local_provider_options options_;
    std::mutex protected_mutex_;
    std::optional<protected_paths> protected_;
    std::mutex mutex_;
    std::vector<rung_report> rungs_;
    struct verdict {
        bool decided = false;
        std::optional<std::size_t> index;  // the selected rung
    };
    verdict verdict_;
    launcher_state launcher_;
    std::shared_ptr<const unique_fd> bwrap_image_;  // bwrap, held open since it was checked
    std::string bwrap_skipped_;     // an untrusted bwrap that the search passed over
    std::string launcher_refused_;  // why the launcher found is not run (find_launcher)
    // Every place it could be looked for (runner_path.hpp, launcher_places): protected.
    std::vector<std::filesystem::path> launcher_places_;
    // The symbolic links on the way to the launcher and to the candidates before it: protected.
    std::vector<std::filesystem::path> launcher_links_;
    std::optional<verdict_cache> cache_;
    std::string cache_key_;
    std::string verdict_name_;                // verdict_file_name(), with cache_key_
    std::string origin_;                      // verdict_origin()
    std::optional<std::string> cached_body_;  // under refresh_verdict: what the cache held
    // Why the last probe proved nothing (its exit status was lost: probe_run_result::
    // status_lost), or empty. Set by the probes under mutex_ (run_profiles() among them, which is
    // const); a rung probed while it is set keeps no report and no verdict is decided or stored.
    mutable std::string inconclusive_;
};

}  // namespace cordon::sandbox
