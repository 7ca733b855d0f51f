// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What probing found about one rung of the local provider's ladder (local_provider.hpp), as the
// provider reports it and as a cached verdict keeps it (verdict_cache.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cordon/confined_argv.hpp"

namespace cordon::sandbox {

enum class rung_state { usable, unusable, not_probed };
[[nodiscard]] std::string_view to_string(rung_state state) noexcept;

struct rung_report {
    backend_kind kind = backend_kind::bwrap;
    std::string runner;  // absolute path of the runner, empty when it was not found
    rung_state state = rung_state::not_probed;
    enforcement level = enforcement::full;  // under read-only; see assess() for each mode
    std::optional<int> landlock_abi;        // the kernel's raw ABI, for the Linux rungs
    bool bind_fd = false;                   // bwrap: the workspace is bound from a descriptor
    std::string reason;                     // why the rung is unusable: first stderr line, errno
};

}  // namespace cordon::sandbox
