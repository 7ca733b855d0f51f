// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// One process tree on a Boost.Asio event loop: spawn through the one spawn path, read stdout,
// stderr and the runner-status pipe, wait for the leader's exit through its pidfd, enforce the
// deadline and the caller's cancellation with the kill plan, and end the whole tree before the
// leader is reaped. Many processes share one io_context; each runs on its own strand.
//
// The end of a run, in order:
//   1. the leader exits (on its own, or after the kill plan's signals);
//   2. the rest of the tree may keep the pipes open for at most the plan's grace (none on the
//      Landlock rung: process_spec::end_tree_with_leader);
//   3. the tree is swept: SIGKILL to the process group and, when cgroup containment is
//      available, to every process in the run's cgroup (setsid() and double-fork included);
//   4. only then is the leader reaped, so its pgid was never free for reuse while signalled;
//   5. the pipes drain to EOF and the run's cgroup is removed.
// Under bwrap the pid namespace already guarantees step 3 for everything inside it.
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "classify/classify.hpp"
#include "cordon/confined_argv.hpp"
#include "cordon/executor.hpp"
#include "cordon/kill_plan.hpp"
#include "runtime/cgroup.hpp"
#include "runtime/output_collector.hpp"
#include "runtime/pty.hpp"
#include "runtime/spawn.hpp"
#include "sandbox/status_channel.hpp"

namespace cordon::runtime {

struct process_spec {
    std::vector<std::string> argv;
    // The command's environment. With `environment_fd` set it is handed to the runner through
    // that child fd (a NUL-separated block) and the runner itself starts with none.
    std::vector<std::string> env;
    std::optional<int> environment_fd;
    std::filesystem::path cwd;
    // The command's stdin: bytes written to a pipe, or an open descriptor handed over as is (a
    // file, a pipe, the caller's own stdin). Neither: /dev/null. Not both.
    std::optional<std::string> stdin_data;
    std::shared_ptr<const unique_fd> stdin_fd;
    // A run under a pseudo-terminal (pty.hpp): the slave is the command's fd 0, 1 and 2, what it
    // writes is read from the master as stdout (stderr stays empty), and `stdin_data` is written
    // to the master, as if typed; not with `stdin_fd`. The slave is let go once the command has
    // it, so that the master reads the end of the output once every process of the run has.
    struct terminal_ends {
        std::shared_ptr<const unique_fd> master;
        std::shared_ptr<const unique_fd> slave;
        // The spawned child makes the slave its controlling terminal; false when the runner
        // does it for the command (the launcher's --controlling-tty).
        bool spawn_takes_it = true;
    };
    std::optional<terminal_ends> terminal;
    std::optional<sandbox::status_channel> status;
    std::vector<sandbox::passed_fd> fds;  // placed at their child numbers; held until spawned
    // Executed instead of argv[0] (spawn_request::exec_fd); held until the spawn is done.
    std::shared_ptr<const unique_fd> exec_image;
    // The Landlock rung applied in the forked child instead of by an exec'd launcher
    // (sandbox/child_confinement.hpp); held until the spawn is done.
    std::shared_ptr<const sandbox::child_confinement> confinement;
    // The run's identity (sandbox/identity.hpp, spawn_request::identity); held until the spawn is
    // done.
    std::shared_ptr<const sandbox::identity_plan> identity;
    // The leader is a runner that does not forward signals and takes the whole sandbox down when
    // it dies (bwrap): the polite steps of the kill plan go to the rest of the run's cgroup, and
    // only SIGKILL to the leader.
    bool spare_leader_from_polite_signals = false;
    // The rest of the tree goes as soon as the leader exits, without the kill plan's drain grace:
    // the Landlock rung, which ends a run the way bwrap's pid namespace does (its pid 1 gone,
    // every member dies). Unconfined runs keep the grace (docs/execution.md, "Ending a run").
    bool end_tree_with_leader = false;
    output_limits stdout_limits;
    output_limits stderr_limits;
    std::shared_ptr<spill_directory> spill;  // null: no spill files
    std::optional<std::chrono::milliseconds> timeout;
    kill_plan plan = kill_plan::standard();
    std::vector<std::string> denial_signatures;  // scanned over the whole stderr stream
    std::shared_ptr<cgroup_host> cgroups;        // null: process-group containment only
    // Applied in the run's cgroup. With `limits_required`, a cgroup that cannot carry them fails
    // the spawn (stage cgroup); otherwise the run degrades to a cgroup without limits, or to the
    // process group alone, and process_outcome::limits_applied says what held.
    run_limits limits;
    bool limits_required = false;
    spawn_method method = default_spawn_method();
    bool die_with_spawning_thread = false;  // spawn_request::die_with_spawning_thread
    // Watch the leader through its pidfd when the kernel gives one; false polls it instead, as
    // on kernels without pidfds (tests use it to cover that path).
    bool use_pidfd = true;
    // Called on the process's strand with each chunk as it arrives (live output). One that throws
    // ends the run as cancel() would; nothing escapes onto the loop (run_request::on_stdout).
    std::function<void(std::string_view)> on_stdout;
    std::function<void(std::string_view)> on_stderr;
    // run_request::stdout_pace and stderr_pace.
    std::function<void(std::function<void()> more)> stdout_pace;
    std::function<void(std::function<void()> more)> stderr_pace;
};

// What the tree's run observed: the classifier's evidence (the spawn failure, how the leader
// ended and who ended it, the status channel, the denial scan, the limits met) plus the output.
// classify::decide() turns it into the run's outcome.
struct process_outcome : classify::run_evidence {
    collected_output stdout_output;
    collected_output stderr_output;
    run_limits limits_applied;  // the limits the run's cgroup carried
    double duration_ms = 0;
};

class process_tree;

// A handle on a running process tree; cancel() may be called from any thread, any number of
// times, also after completion. It ends the tree with the spec's kill plan, or with `plan` when
// given (which then always ends in SIGKILL too); only the first cancel counts.
// The handle of a started tree is the executor's run_handle (cordon/executor.hpp).
using process_handle = run_handle;

// Why a run was ended for its caller when a callback of the caller's threw `thrown`
// (run_outcome::message): "a callback of the caller's threw: <what()>"; empty when even that
// line cannot be made (bad_alloc).
[[nodiscard]] std::string caller_threw_message(const std::exception_ptr& thrown) noexcept;

// Starts the tree; `done` runs exactly once on the tree's strand.
process_handle start_process(boost::asio::any_io_executor executor, process_spec spec,
                             std::function<void(process_outcome)> done);

// Runs to completion on a private io_context (probes and simple callers).
[[nodiscard]] process_outcome run_process(process_spec spec);

}  // namespace cordon::runtime
