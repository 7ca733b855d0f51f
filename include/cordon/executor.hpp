// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The executor: cordon's main job. Takes a request (argv, mode, workspace, limits), resolves the
// per-call policy, confines the argv through the provider (danger-full-access never consults it),
// runs the result as one process tree on the event loop, and classifies the outcome in order:
// runner failure (SANDBOX_UNAVAILABLE, the command never ran) before denial.
//
//     boost::asio::io_context io;
//     cordon::executor exec(io.get_executor(), cordon::make_local_provider());
//     cordon::run_handle handle = exec.async_run(request, [](cordon::run_record record) {
//         std::cout << cordon::to_string(record.outcome.kind) << '\n';
//     });
//     io.run();  // handle.cancel() from any thread ends the run's tree early
//
// The executor holds no policy of its own: every call carries its mode and workspace, so an
// approved escalation is just another call.
//
// Thread safety: async_run() may be called concurrently from any thread, the event loop's own
// included. After construction the executor only reads its members, and what its runs share is
// thread-safe: the provider (provider.hpp), the spill directory and the cgroup host. Each run lives
// on a strand of its own. Its live-output callbacks run on that strand, and so does `done` once a
// process was started. One run's callbacks never overlap. Callbacks of different runs may run at
// the same time when several threads run the loop. run_handle::cancel() may be called from any
// thread. Blocking: with cgroup containment, the process's first executor makes the cgroup host
// that every executor of the process then shares, and first ends the runs that a crashed cordon of
// the same user left behind (docs/execution.md): SIGKILL to what is left, then up to about 200 ms
// per stale cgroup while it empties. A run is prepared (prepare(): the checks,
// confine(), the Landlock ruleset, which may wait on the file system) and then launched (launch():
// the spawn); async_run() does both on the calling thread. A caller whose loop thread must stay
// responsive (the job supervisor) prepares on another thread and launches on the loop.
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cordon/export.hpp"
#include "cordon/kill_plan.hpp"
#include "cordon/provider.hpp"
#include "cordon/record.hpp"
#include "cordon/run.hpp"
#include "cordon/unique_fd.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::proxy {
class session;
}  // namespace cordon::proxy

namespace cordon::runtime {

// The private parts an executor and its runs hold (runtime/).
class cgroup_host;
class child_confinement_cache;
class spill_directory;

// A run that executor::prepare() made ready: the program found, the request checked against the
// policy, the argv confined and the Landlock ruleset built; nothing started yet. Move-only.
// Dropping one starts nothing and closes what it holds (the workspace, the runner's image).
class prepared_run {
public:
    prepared_run(prepared_run&&) noexcept;
    prepared_run& operator=(prepared_run&&) noexcept;
    prepared_run(const prepared_run&) = delete;
    prepared_run& operator=(const prepared_run&) = delete;
    ~prepared_run();

    [[nodiscard]] sandbox::sandbox_mode mode() const noexcept;
    [[nodiscard]] std::chrono::milliseconds timeout() const noexcept;
    // The master of the run's pseudo-terminal (run_request::tty), null without one: what is
    // written to it is typed into the command's terminal, TIOCSWINSZ on it resizes the terminal
    // (SIGWINCH), and reading it is the run's, whose output arrives as stdout. Its open file
    // description is non-blocking (a write the terminal has no room for fails EAGAIN).
    [[nodiscard]] std::shared_ptr<const unique_fd> terminal() const noexcept;

private:
    friend class executor;
    prepared_run();

    // The spawn's specification, the confined argv, the proxy session (runtime/executor.cpp).
    struct state;
    std::unique_ptr<state> state_;
};

// What prepare() gives: a run ready to launch, or the record of a run that cannot start (outcome
// not_started or runner_failed, its timeout set), which launch() never sees.
using preparation = std::variant<prepared_run, run_record>;

class executor {
public:
    // `provider` may be null: then only danger-full-access runs, and every confined request
    // fails closed (a runner_failed record: SANDBOX_UNAVAILABLE).
    executor(boost::asio::any_io_executor io, std::shared_ptr<sandbox::provider> provider,
             executor_options options = {});

    // Starts the run; `done` is called exactly once with its record, from the event loop (on
    // the run's strand when a process was started). A run the sandbox could not run is a
    // record too: outcome runner_failed, with what SANDBOX_UNAVAILABLE says (record.hpp). A request
    // that breaks the contract (empty argv, relative workspace, non-positive timeout) throws
    // std::invalid_argument before anything runs.
    //
    // Work done on the calling thread:
    //   - the program is looked up on PATH;
    //   - for a confined mode, the provider's refusal() and confine() run. confine() opens a
    //     workspace-write workspace. The first workspace-write call also gathers the protected
    //     paths (this process's mappings, the loader's configuration), once per provider.
    // Probes: with a provider from runtime::make_local_provider(), this never waits for a probe,
    // because that function probed before it returned. A local_provider constructed directly
    // probes on its first confine(), refusal() or selected(): a few confined runs of `true`, each
    // bounded by probe_timeout, under the provider's mutex. Concurrent callers wait for that probe.
    // Called from a thread that runs the loop: the spawn itself also happens inline, and `done` may
    // run before async_run() returns when the spawn fails at once. Called from another thread:
    // `done` may run concurrently with the return. Either way, do not hold a lock across
    // async_run() that `done` takes.
    run_handle async_run(run_request request, std::function<void(run_record)> done);

    // async_run() in two steps. prepare() is the calling-thread work listed above and may run on
    // any thread, concurrently with the loop and with other preparations; it throws
    // std::invalid_argument as async_run() does. launch() spawns the prepared run on the calling
    // thread (the one whose death ends the run when die_with_spawning_thread is set) and calls
    // `done` exactly once, as async_run() does. A preparation that is a record is the caller's to
    // deliver (async_run() posts it to `done` on the event loop).
    [[nodiscard]] preparation prepare(run_request request) const;
    run_handle launch(prepared_run run, std::function<void(run_record)> done);
    // Where what a workspace-write run left is judged once it is over (a scan of a large tree
    // can take a while): work that may block, on `where` (a thread pool of the caller's, which
    // must outlive every run), then the record on the event loop. Unset (the default), the
    // judgement runs on the event loop before `done`. Call before the first run.
    void judge_on(boost::asio::any_io_executor where);

    // The lifetime `request` gets: its own timeout, else the default, capped at the maximum.
    [[nodiscard]] std::chrono::milliseconds timeout_for(const run_request& request) const noexcept;

    [[nodiscard]] const executor_options& options() const noexcept { return options_; }
    // Whether runs are contained in their own cgroup (docs/execution.md), and why not.
    [[nodiscard]] bool cgroup_containment() const noexcept { return cgroups_ != nullptr; }
    [[nodiscard]] const std::string& cgroup_unavailable() const noexcept { return no_cgroup_; }
    [[nodiscard]] const std::shared_ptr<cgroup_host>& cgroups() const noexcept { return cgroups_; }

private:
    boost::asio::any_io_executor io_;
    std::shared_ptr<sandbox::provider> provider_;
    executor_options options_;
    std::shared_ptr<spill_directory> spill_;
    std::shared_ptr<cgroup_host> cgroups_;
    std::string no_cgroup_;
    std::shared_ptr<child_confinement_cache> confinements_;
    std::optional<boost::asio::any_io_executor> judge_on_;
};

}  // namespace cordon::runtime

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using runtime::executor;
using runtime::preparation;
using runtime::prepared_run;
}  // namespace cordon
CORDON_PUBLIC_END
