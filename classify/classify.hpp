// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Deciding how a run ended: one function, decide(), from what the runtime observed to one
// run_outcome plus the denial flag. The order (docs/contract.md, "Classification order"):
//
//   1. nothing started: a spawn failure. Under a sandbox, the runner itself missing or not
//      executable is a runner failure (SANDBOX_UNAVAILABLE); everything else is the request's
//      (not_started: a missing program, an unusable working directory, an argv too large);
//   2. the runner failed: proven out of band by the launcher's status channel (a failure record
//      before `started`, a malformed channel, or no proof at all from a runner that exited on
//      its own), or, for runners without a channel (Seatbelt), by the backend's stderr rules. The
//      launcher's own exec of the command failing is not a runner failure: the sandbox worked,
//      the program could not be run, exactly as without a sandbox (not_started, stage exec).
//      A runner that died at the run's memory or process limit before proving anything was
//      stopped by the limit (not_started, stage cgroup);
//   3. otherwise the command ran: timed_out, aborted, out_of_memory (the OOM killer at the run's
//      memory limit), signaled or exited, in that order of who ended it; and it was `denied` when
//      it exited non-zero and its stderr named a path its walls govern with their refusal, or
//      carried the denial dialect (the backend's and the runtimes') that its lines do not refute
//      (file_denial.hpp).
//
// A command that prints "bwrap: ..." and exits 125 is an ordinary result whenever the status
// channel proved that it ran.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "classify/file_denial.hpp"
#include "cordon/confined_argv.hpp"
#include "cordon/outcome.hpp"
#include "sandbox/status_channel.hpp"

namespace cordon::classify {

// What the runtime observed of one finished process tree.
struct run_evidence {
    std::optional<spawn_error> spawn_failure;  // set: nothing was started
    std::string spawn_detail;                  // why, when errno alone does not say it
    std::optional<int> exit_code;              // the leader's, when it exited
    std::optional<int> signal;                 // the signal that ended the leader
    bool timed_out = false;                    // cordon's deadline fired first
    bool aborted = false;                      // the caller cancelled first
    // aborted: why, when cordon ended the run for the caller (a callback of the caller's threw);
    // empty when the caller cancelled it.
    std::string abort_reason;
    // What the runner's status channel said; nullopt when the run had none.
    std::optional<sandbox::status_report> status;
    bool denial_seen = false;  // the denial dialect appeared anywhere in the stderr stream
    limit_events limits_hit;
};

// What the run was, beside the evidence: how it was confined (nullptr: not at all), the program
// that was spawned (the runner, for a confined run) and the command's own, for messages.
struct run_context {
    const sandbox::confined_argv* confined = nullptr;
    std::string_view program{};
    std::string_view stderr_text{};  // the retained stderr (the tail)
    std::string_view command{};      // the command's argv[0]; empty: the same as `program`
    // The confinement was applied in the forked child (child_confinement.hpp): the spawned
    // program is the command itself, and a successful exec proves it started.
    bool confined_in_child = false;
    // The run's network policy is `deny` (a confined run): the network denial dialect
    // (network_denial.hpp) makes a non-zero exit a denial too.
    bool network_denied = false;
    // The network proxy refused a destination during the run (network policy proxy): a
    // non-zero exit is then a denial of the network's.
    bool proxy_blocked = false;
    // What the run's file walls govern (file_denial.hpp): a line naming one of their paths with
    // the refusal they answer is a denial whatever its words, and the dialect is refuted by lines
    // that name an absolute path and only paths the walls do not govern. nullptr: the dialect
    // alone decides.
    const file_walls* walls = nullptr;
    const host_view* host = nullptr;  // nullptr: this host
    // `stderr_text` is the whole stream (nothing was cut from its tail): only then can the lines
    // refute the dialect seen in the stream.
    bool stderr_whole = false;
};

struct verdict {
    run_outcome outcome;
    bool denied = false;
    // The denial is the network's: its dialect (network_denial.hpp) is in the retained stderr.
    // A denial whose words are only the file walls' is the file walls'.
    bool network_denied = false;
    // A denial of the file walls': what shows it (file_denial.hpp).
    std::optional<denial_evidence> evidence;
};

[[nodiscard]] verdict decide(const run_evidence& evidence, const run_context& context);

// The stderr-only heuristic for runners without a status channel: for each rule, skip it unless
// the exit code is allowed (any non-zero when the list is empty); ignore lines equal to an
// informational line; return the first original line containing a fatal signature.
[[nodiscard]] std::optional<std::string> match_runner_failure(
    std::optional<int> exit_code, std::string_view stderr_text,
    std::span<const sandbox::runner_failure_rule> rules);

// The denial dialect on a retained text: non-zero, non-signal exit and a signature present.
[[nodiscard]] bool matches_denial(std::optional<int> exit_code, std::string_view stderr_text,
                                  std::span<const std::string> signatures);

}  // namespace cordon::classify
