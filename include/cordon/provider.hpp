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
// Thread safety: implementations must allow confine() and refusal() to be called concurrently
// from any thread. The executor calls them on the thread that prepares a run (executor::prepare),
// and the policy travels with each call: nothing about one call may be kept on the provider. May
// block: local_provider probes its ladder on first use, unless it came from
// make_local_provider(), which probes before it returns.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "cordon/confined_argv.hpp"
#include "cordon/export.hpp"
#include "cordon/policy.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::sandbox {

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
};

}  // namespace cordon::sandbox

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using sandbox::provider;
}  // namespace cordon
CORDON_PUBLIC_END
