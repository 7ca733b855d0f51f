// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The sandbox seam: wrap an argv so that it runs confined under a per-call policy
// (docs/contract.md, "confine()").
//
//     class my_sandbox final : public cordon::provider {
//         cordon::confined_argv confine(std::span<const std::string> argv,
//                                       const cordon::sandbox_policy& policy,
//                                       const std::filesystem::path& workdir) override;
//     };
//     cordon::run(std::make_shared<my_sandbox>(), request);
//
// The executor asks for each run's plan once (plan(): the checks and decisions), then confines
// that plan (confine_planned(): the descriptors, the argv). A provider that implements only
// confine() and refusal() gets both from them.
//
// Thread safety: implementations must allow confine(), refusal(), plan() and confine_planned()
// to be called concurrently from any thread. The executor calls them on the thread that prepares
// a run (executor::prepare), and the policy travels with each call (or in its plan): nothing
// about one call may be kept on the provider. May block: local_provider probes its ladder on
// first use, unless it came from make_local_provider(), which probes before it returns.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>

#include "cordon/confined_argv.hpp"
#include "cordon/export.hpp"
#include "cordon/policy.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::sandbox {

// One run as a provider planned it (provider::plan): the policy and working directory it was
// planned for, and, in a provider's own plan (a class derived from this one), what that provider
// decided, which only it reads. A plan is for one run: it is confined once, soon after it was
// made (what it checked is re-checked then as far as identity goes, not decided again).
class run_plan {
public:
    run_plan(sandbox_policy policy, std::filesystem::path workdir)
        : policy_(std::move(policy)), workdir_(std::move(workdir)) {}
    virtual ~run_plan() = default;
    run_plan(const run_plan&) = delete;
    run_plan& operator=(const run_plan&) = delete;

    [[nodiscard]] const sandbox_policy& policy() const noexcept { return policy_; }
    [[nodiscard]] const std::filesystem::path& workdir() const noexcept { return workdir_; }

private:
    sandbox_policy policy_;
    std::filesystem::path workdir_;
};

class provider {
public:
    virtual ~provider() = default;

    // Returns the argv to spawn instead of `argv`, whose runner enforces `policy` and starts the
    // command in `workdir` (absolute), or throws sandbox_unavailable_error. A silent unconfined
    // passthrough is never a legal outcome. `policy.mode` must be confined: passing
    // danger-full-access throws std::invalid_argument (a programmer error: that mode never
    // reaches a provider).
    [[nodiscard]] virtual confined_argv confine(std::span<const std::string> argv,
                                                const sandbox_policy& policy,
                                                const std::filesystem::path& workdir) = 0;

    // Why `policy` must not be confined although a backend may be usable: a workspace-write root
    // on a pseudo filesystem, or one under which the command could write what runs unconfined
    // later (`also_protected` adds the caller's own such paths, e.g. its spill files). nullopt
    // when nothing stands in the way. The request is at fault, not the host, so callers report
    // it as such; confine() refuses such a policy too, as the last line of defence.
    [[nodiscard]] virtual std::optional<std::string> refusal(
        const sandbox_policy& policy, std::span<const std::filesystem::path> also_protected) {
        (void)policy;
        (void)also_protected;
        return std::nullopt;
    }

    // A run's runner failed before its command started (the command never ran): whatever chose
    // that runner may no longer hold. Called by the executor; the local provider forgets the
    // verdict it shares with other processes.
    virtual void runner_failed(const confined_argv& wrapped) { (void)wrapped; }

    // The run's plan, once: what refusal() says of `policy` (with `also_protected`), as the
    // request's fault, or everything confine_planned() needs to confine `policy` in `workdir`
    // (absolute) without deciding anything again. Throws sandbox_unavailable_error when no
    // backend can enforce `policy` (request_refused_error, a kind of it, when the request is at
    // fault beyond what refusal() says), and std::invalid_argument for danger-full-access, as
    // confine() does. The default asks refusal() and keeps the policy and the working directory.
    [[nodiscard]] virtual std::variant<std::shared_ptr<const run_plan>, std::string> plan(
        const sandbox_policy& policy, const std::filesystem::path& workdir,
        std::span<const std::filesystem::path> also_protected) {
        if (auto refused = refusal(policy, also_protected)) return *std::move(refused);
        return std::make_shared<const run_plan>(policy, workdir);
    }

    // confine() for a plan this provider made: the argv to spawn instead of `argv`, under the
    // plan's policy and in its working directory. Throws what confine() throws; a plan of another
    // provider's, or one confined already, is a programmer error (std::invalid_argument,
    // std::logic_error). The default calls confine() with the plan's policy and working
    // directory.
    [[nodiscard]] virtual confined_argv confine_planned(const run_plan& planned,
                                                        std::span<const std::string> argv) {
        return confine(argv, planned.policy(), planned.workdir());
    }
};

}  // namespace cordon::sandbox

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using sandbox::provider;
using sandbox::run_plan;
}  // namespace cordon
CORDON_PUBLIC_END
