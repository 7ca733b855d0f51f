// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/launcher/rules.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cordon::launcher {

namespace landlock = sandbox::landlock;
using sandbox::launcher_stage;

// ENOSYS and EOPNOTSUPP need different fixes (another kernel vs. a boot parameter), so they get
// different lines.
int require_abi(const reporter& report, int cap) noexcept {
    const int abi = landlock::query_abi();
    if (abi > 0) return cap > 0 && cap < abi ? cap : abi;
    const int error = -abi;
    if (error == ENOSYS) {
        report.fail(launcher_stage::abi, error,
                    "landlock is not supported by this kernel (built without Landlock: ENOSYS)");
    }
    if (error == EOPNOTSUPP) {
        report.fail(launcher_stage::abi, error,
                    "landlock is disabled on this kernel (EOPNOTSUPP: add landlock to the lsm= "
                    "boot parameter)");
    }
    // Anything else (e.g. EPERM from a container's seccomp filter) is still "not enforced".
    report.fail(launcher_stage::abi, error, "landlock ruleset error: %s", std::strerror(error));
}

namespace {

[[noreturn]] void fail_rule(const reporter& report, const landlock::failure& failure) noexcept {
    if (failure.stage == launcher_stage::open_rule_path) {
        report.fail(failure.stage, failure.error, "cannot open rule path: %s: %s",
                    failure.path != nullptr ? failure.path : "(descriptor)",
                    std::strerror(failure.error));
    }
    report.fail(failure.stage, failure.error, "landlock ruleset error: %s",
                std::strerror(failure.error));
}

}  // namespace

int build_ruleset(const reporter& report, int abi, const command_line& line) noexcept {
    landlock::failure failure{};
    const int ruleset = landlock::create_ruleset(abi, &failure);
    if (ruleset < 0) fail_rule(report, failure);
    if (line.read_root && landlock::add_root_read_rules(ruleset, abi, line.denied,
                                                        line.denied_count, &failure) != 0) {
        fail_rule(report, failure);
    }
    for (std::size_t i = 0; i < line.grant_count; ++i) {
        const grant& g = line.grants[i];
        const int result =
            g.path != nullptr
                ? landlock::add_path_rule(ruleset, abi, g.path, g.rights, g.optional, &failure)
                : landlock::add_fd_rule(ruleset, abi, g.fd, g.rights, &failure);
        if (result != 0) fail_rule(report, failure);
    }
    return ruleset;
}

// A functional check, not a version query: it restricts itself with a real ruleset (read beneath
// /, scopes included) so that a kernel which reports an ABI but refuses rulesets is caught here.
int probe(const reporter& report, int abi_cap) noexcept {
    const int abi = require_abi(report, abi_cap);
    landlock::failure failure{};
    const int ruleset = landlock::create_ruleset(abi, &failure);
    if (ruleset < 0) fail_rule(report, failure);
    if (landlock::add_path_rule(ruleset, abi, "/", landlock::access::read, false, &failure) != 0) {
        fail_rule(report, failure);
    }
    if (const int error = landlock::restrict_self(ruleset); error != 0) {
        report.fail(launcher_stage::ruleset, error, "landlock ruleset error: %s",
                    std::strerror(error));
    }
    report.probed(abi);
    char out[128];
    const int size = std::snprintf(
        out, sizeof(out), "landlock: %s\nabi: %d\n",
        abi >= landlock::full_filesystem_abi ? "fully enforced" : "partially enforced (older ABI)",
        abi);
    if (size < 0 || !write_all(STDOUT_FILENO, out, static_cast<std::size_t>(size))) {
        return cordon::sandbox::launcher_failure_exit;
    }
    return 0;
}

}  // namespace cordon::launcher
