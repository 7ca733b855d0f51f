// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The record of one run: how it ended (one classify::run_outcome), its output, its limits and
// the sandbox facts (mode, enforcement, denied, backend). Every run delivers one, including a run
// the sandbox could not run (runner_failed, with the SANDBOX_UNAVAILABLE error's facts). Plain
// values; record_json.hpp gives their JSON.
//
//     const cordon::run_record record = cordon::run(request);
//     if (record.sandbox.denied) { /* the sandbox stopped it: ask for a wider mode */ }
//     else if (record.outcome.exit_code == 0) { use(record.stdout_output.text); }
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "cordon/confined_argv.hpp"
#include "cordon/export.hpp"
#include "cordon/limits.hpp"
#include "cordon/mode.hpp"
#include "cordon/outcome.hpp"
#include "cordon/output.hpp"
#include "cordon/policy.hpp"
#include "cordon/sandbox_error.hpp"
#include "cordon/terminal.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::runtime {

using classify::outcome_kind;
using classify::run_outcome;
using classify::runner_failure;
using classify::signal_name;

struct sandbox_facts {
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    std::optional<sandbox::enforcement> enforcement;  // absent for danger-full-access
    bool denied = false;
    bool network_denied = false;  // the denial was the network's (classify::verdict)
    // A denial of the file walls seen in what the command printed: the path it named, or the
    // dialect's words only (docs/sandbox.md, "Classification"). Absent for a network denial and
    // for one that only the judgement of what the run left found.
    std::optional<classify::denial_evidence> evidence;
    std::optional<sandbox::backend_kind> backend;  // absent for danger-full-access
    // The policy as the run enforced it (confined runs only): where it could write, what /tmp
    // was, the protected paths kept, the paths hidden, and why enforcement is partial (one line
    // per part).
    std::vector<std::string> writable_roots;
    std::optional<sandbox::tmp_policy> tmp;
    std::vector<std::string> protected_paths;
    std::vector<std::string> hidden_paths;
    // Workspace-write: how what the run left was judged once it was over, and what was
    // neutralized (docs/sandbox.md, "Protected names"). Anything neutralized makes the run
    // `denied`. Absent where nothing was judged.
    std::optional<sandbox::judgement_report> judged;
    std::vector<std::string> gaps;
    bool quotas_per_run = false;  // sandbox::confined_argv::quotas_per_run
    // Who the command ran as on the host (confined_argv::identity; for danger-full-access,
    // cordon's own ids). Absent when no command started under a known policy.
    std::optional<sandbox::run_identity> identity;
    // The network policy as the run had it: confine()'s facts for a confined run; for
    // danger-full-access the host's network (allow, enforcement none). Absent when no run
    // started under a known policy (a sandbox that could not run the command).
    std::optional<sandbox::network_facts> network;
};

struct run_record {
    run_outcome outcome;
    std::chrono::milliseconds timeout{0};
    double duration_ms = 0;
    collected_output stdout_output;
    collected_output stderr_output;
    sandbox_facts sandbox;
    run_limits limits;        // the limits the run's cgroup enforced (nullopt: none)
    limit_events limits_hit;  // whether the run met them
    // The pseudo-terminal the run had (run_request::tty): its output is all in stdout_output, as
    // a terminal shows it (with its escape sequences and "\r\n" line ends).
    std::optional<terminal_size> tty;
};

// The record of a run the sandbox could not run (outcome runner_failed): no backend could enforce
// `mode`, or the runner of `failure.backend` failed. Its message is the SANDBOX_UNAVAILABLE
// error's, in full.
[[nodiscard]] run_record sandbox_unavailable_record(sandbox::sandbox_mode mode,
                                                    classify::runner_failure failure);

// The contract's exception for such a record, for a caller who wants to throw it (run() returns
// the record).
[[nodiscard]] sandbox::sandbox_unavailable_error sandbox_unavailable(const run_record& record);

}  // namespace cordon::runtime

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using runtime::run_record;
using runtime::sandbox_facts;
using runtime::sandbox_unavailable;
}  // namespace cordon
CORDON_PUBLIC_END
