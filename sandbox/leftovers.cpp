// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/leftovers.hpp"

#include <mutex>

#include "base/log.hpp"
#include "cordon/policy.hpp"
#include "sandbox/private_tmp.hpp"

namespace cordon::sandbox {

void sweep_what_dead_cordons_left() {
    static std::once_flag once;
    std::call_once(once, [] {
        std::size_t probes = 0;
        for (const char* parent : {"/var/tmp", "/tmp"}) {
            probes += sweep_dead_probe_workspaces(canonical_path(parent));
        }
        if (probes > 0)
            log::info("removed {} probe workspaces left by cordons that are gone", probes);
        (void)sweep_dead_private_tmps(canonical_path("/tmp"));
    });
}

}  // namespace cordon::sandbox
