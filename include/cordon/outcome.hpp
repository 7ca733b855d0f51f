// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// How a run ended, as one value: the vocabulary every report of a run speaks (the record, its
// JSON, the text markers, `cordon run`'s exit code). One function of the library decides it;
// nothing else derives an ending from raw process facts.
//
//     switch (record.outcome.kind) {
//         case cordon::outcome_kind::exited: return *record.outcome.exit_code;
//         case cordon::outcome_kind::runner_failed: /* nothing ran: record.outcome.message */
//         ...
//     }
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/confined_argv.hpp"
#include "cordon/export.hpp"
#include "cordon/sandbox_error.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::classify {

// Where starting a command failed. Stages before `exec` happen in cordon or in the child before
// execve; `policy` is decided before anything runs.
enum class spawn_stage {
    policy,     // the request may not run as asked (an unsafe workspace); decided before anything
    resolve,    // the program was not found on PATH / not executable (parent side, no fork)
    resources,  // pipe, stack, memfd or clone failed in the parent
    signals,    // resetting signal state in the child
    session,    // setsid
    cgroup,     // joining the run's cgroup, or a limit that stopped the runner before the command
    fds,        // placing the given fds at their target numbers
    chdir,      // entering the working directory
    exec,       // execve of the command (by the spawner, or by the launcher inside the sandbox)
    confine,    // applying the Landlock rung in the forked child (`step` says which wall)
};
[[nodiscard]] std::string_view to_string(spawn_stage stage) noexcept;

struct spawn_error {
    spawn_stage stage = spawn_stage::exec;
    int error = 0;  // errno
    int step = 0;   // spawn_stage::confine: the sandbox::launcher_stage that failed
};
// "<program>: No such file or directory", "cannot enter the working directory: ...".
[[nodiscard]] std::string describe(const spawn_error& error, std::string_view program);

// What the limits of a run's cgroup saw by the time it ended.
struct limit_events {
    bool processes = false;  // a fork or clone failed at the process limit
    bool memory = false;     // the OOM killer ended a process at the memory limit
    // cordon ended the run: its socket buffers held more than twice their bound (the memory
    // limit, or its share of the host's net.ipv4.tcp_mem), which the kernel lets each socket pass
    // a little and many sockets pass far (docs/sandbox.md, "Host-wide kernel resources").
    bool sockets = false;
};

enum class outcome_kind {
    exited,         // the command ran and exited on its own: `exit_code`
    signaled,       // the command ran and a signal that cordon did not send ended it: `signal`
    timed_out,      // cordon's deadline ended it: `exit_code` or `signal` says how it went
    out_of_memory,  // the run met its memory limit and the OOM killer ended it (all of it):
                    // `exit_code` or `signal` says how the leader went
    aborted,        // the caller cancelled it: `exit_code` or `signal` says how it went
    not_started,    // the command never ran, for a reason of the request's: `start_failure`
    runner_failed,  // the command never ran: the sandbox could not run it (`runner`, `message`)
};
// "exited", "signaled", "timed-out", "out-of-memory", "aborted", "not-started", "runner-failed".
[[nodiscard]] std::string_view to_string(outcome_kind kind) noexcept;

// runner_failed: why the sandbox could not run the command, as the SANDBOX_UNAVAILABLE error says
// it (sandbox_error.hpp). Either no backend could enforce the mode (`detail` absent) or the
// selected backend's runner failed before the command started.
struct runner_failure {
    std::optional<std::string> detail;                // the runner's own line
    std::optional<sandbox::backend_kind> backend;     // the backend whose runner failed
    std::vector<sandbox::unusable_backend> unusable;  // why each backend considered was unusable
    // A backend was usable but cannot enforce this policy: which, and what of it.
    std::optional<sandbox::unenforced_policy> unenforced{};
};

struct run_outcome {
    outcome_kind kind = outcome_kind::exited;
    // How the tree's leader ended when it ran: exactly one of the two is set for exited (exit
    // code), signaled (signal) and, usually, timed_out, out_of_memory and aborted. Neither is set
    // when the command never ran.
    std::optional<int> exit_code;
    std::optional<int> signal;
    // not_started: where and why (a missing program, an unusable working directory, a limit).
    std::optional<spawn_error> start_failure;
    // runner_failed: what failed, and where.
    std::optional<runner_failure> runner;
    // not_started: one line saying why, for people; runner_failed: the SANDBOX_UNAVAILABLE
    // message in full (sandbox_unavailable_message; decide() gives the runner's line, the
    // executor the whole message); exited without an exit code: why the status is unknown;
    // aborted: empty when the caller cancelled it, else why it was ended for the caller ("a
    // callback of the caller's threw: <what>", run.hpp) or ended before it started.
    std::string message;

    [[nodiscard]] bool started() const noexcept {
        return kind != outcome_kind::not_started && kind != outcome_kind::runner_failed;
    }
};

// Why a run was found refused by its file walls (docs/sandbox.md, "Classification"): `path`, a
// line of its stderr named a path the walls govern with the refusal they answer for it, and the
// host would have allowed it; `dialect`, the words of a refusal only (a heuristic).
enum class denial_source { path, dialect };
// "path", "dialect".
[[nodiscard]] std::string_view to_string(denial_source source) noexcept;

struct denial_evidence {
    denial_source by = denial_source::dialect;
    std::string path;  // by path: the path the walls govern, canonical
    // The line of stderr that carries it (at most 512 bytes); empty when the dialect was seen
    // only in what the retained tail lost.
    std::string line;
};

// "SIGTERM" for 15; "SIG<N>" for numbers without a name.
[[nodiscard]] std::string signal_name(int signal);

}  // namespace cordon::classify

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using classify::denial_evidence;
using classify::denial_source;
using classify::describe;
using classify::limit_events;
using classify::outcome_kind;
using classify::run_outcome;
using classify::runner_failure;
using classify::signal_name;
using classify::spawn_error;
using classify::spawn_stage;
using classify::to_string;
}  // namespace cordon
CORDON_PUBLIC_END
