// The sandbox seam: wrap an argv so that it runs confined under a per-call policy.
#pragma once

#include <filesystem>
#include <span>
#include <string>

#include "sandbox/confined_argv.hpp"
#include "sandbox/policy.hpp"

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
};

}  // namespace cordon::sandbox
