// The executor: cordon's main job. Takes a request (argv, mode, workspace, limits), resolves the
// per-call policy, confines the argv through the provider (danger-full-access never consults it),
// runs the result as one process tree on the event loop, and classifies the outcome in order:
// runner failure (SANDBOX_UNAVAILABLE, the command never ran) before denial.
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
// thread. Blocking: with cgroup containment, the constructor first ends the runs that a crashed
// cordon of the same user left behind (cgroup.hpp): SIGKILL to what is left, then up to about
// 200 ms per stale cgroup while it empties. A run is prepared (prepare(): the checks, confine(),
// the Landlock ruleset, which may wait on the file system) and then launched (launch(): the
// spawn); async_run() does both on the calling thread. A caller whose loop thread must stay
// responsive (the job supervisor) prepares on another thread and launches on the loop.
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runtime/cgroup.hpp"
#include "runtime/environment.hpp"
#include "runtime/kill_plan.hpp"
#include "runtime/output_collector.hpp"
#include "runtime/process.hpp"
#include "runtime/record.hpp"
#include "sandbox/provider.hpp"

namespace cordon::proxy {
class service;
class session;
}  // namespace cordon::proxy

namespace cordon::runtime {

struct run_request {
    std::vector<std::string> argv;  // e.g. {"bash", "-c", command}
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    std::filesystem::path workspace_root;  // absolute and canonical
    // The policy's other parts (sandbox/policy.hpp): protected names and the credential stores
    // hidden by default, extra writable roots, read-only carve-outs, what /tmp is.
    sandbox::path_rules rules;
    // What the command may reach over the network (docs/network.md). Ignored under
    // danger-full-access, which has the host's network.
    sandbox::network_rules network;
    std::optional<std::filesystem::path> workdir;           // default: the workspace root
    std::optional<std::chrono::milliseconds> timeout;       // default and cap: executor_options
    std::optional<std::size_t> stdout_max_bytes;            // raises the stdout tail for this call
    std::map<std::string, std::optional<std::string>> env;  // wins over scrub and defaults
    // How the inherited environment is filtered (clear, keep, unset); `env` wins over it.
    environment_policy environment;
    // Each replaces its executor_options::default_limits entry for this call; 0 means no limit.
    // A limit given here that the host cannot enforce means the run is not started; a default
    // limit it cannot enforce is dropped (the record shows which limits held).
    std::optional<std::uint64_t> max_processes;
    std::optional<std::uint64_t> max_memory;
    // The command's stdin: these bytes through a pipe, or this descriptor handed over as is (an
    // open file or pipe: nothing is read into memory). Neither: /dev/null. Not both. A host
    // file's own description lets the command change that file's metadata (fchmod, futimens)
    // whatever the mode; hand over a pipe to give it bytes only (cordon run does).
    std::optional<std::string> stdin_data;
    std::shared_ptr<const unique_fd> stdin_fd;
    // Live output, called on the run's strand as chunks arrive.
    std::function<void(std::string_view)> on_stdout;
    std::function<void(std::string_view)> on_stderr;
};

// True unless the environment variable CORDON_LANDLOCK_VIA_LAUNCHER is set to 1: a diagnostic
// switch (and how the test suites run the launcher path), never a change of what is enforced.
[[nodiscard]] bool default_landlock_in_child() noexcept;

struct executor_options {
    std::chrono::milliseconds default_timeout{120'000};
    std::chrono::milliseconds max_timeout{600'000};
    kill_plan plan = kill_plan::standard();
    output_limits limits;  // per stream: 64,000-byte tail, 64 MiB spill
    // Processes: 4096; memory: half of what the host gives cordon (limits.hpp).
    run_limits default_limits{default_max_processes, default_max_memory()};
    std::filesystem::path spill_root = "/var/tmp";
    bool spill = true;
    bool cgroup_containment = true;  // when the host allows it
    spawn_method method = default_spawn_method();
    // spawn_request::die_with_spawning_thread for every run: only when async_run() and launch()
    // are always called on a thread that outlives the runs (the job supervisor's loop thread).
    bool die_with_spawning_thread = false;
    // More paths (globs as for provider::refusal) that no workspace-write run may be able to
    // write, beside the executor's own spill files: the job supervisor's stream files.
    std::vector<std::filesystem::path> protected_paths;
    // The Landlock rung: applied in the forked child (one exec fewer per run), or by exec'ing
    // cordon-landlock, as a consumer that spawns confine()'s argv does. Both put up the same
    // walls in the same order and give the same record; the test suites run on both paths.
    bool landlock_in_child = default_landlock_in_child();
    // The network proxy that runs under network proxy use (proxy/service.hpp): null, the
    // executor's own, whose thread starts with the first such run and stops after the last.
    // A caller with several executors may give them one, so that they serve one proxy.
    std::shared_ptr<proxy::service> proxy;
};

// Throws std::invalid_argument when `request` breaks async_run's contract: an empty argv, a
// relative workspace, a non-positive timeout, or both stdin_data and stdin_fd.
void check_request(const run_request& request);

class run_handle {
public:
    run_handle() = default;
    explicit run_handle(process_handle process) : process_(std::move(process)) {}
    // Cancels the run with the executor's kill plan (SIGTERM to the tree, SIGKILL after the
    // grace), or with `plan`; safe from any thread. Only the first cancel counts.
    void cancel(std::optional<kill_plan> plan = std::nullopt) const {
        process_.cancel(std::move(plan));
    }

private:
    process_handle process_;
};

// A run that executor::prepare() made ready: the program found, the request checked against the
// policy, the argv confined and the Landlock ruleset built; nothing started yet. Move-only.
// Dropping one starts nothing and closes what it holds (the workspace, the runner's image).
class prepared_run {
public:
    prepared_run(prepared_run&&) noexcept = default;
    prepared_run& operator=(prepared_run&&) noexcept = default;
    prepared_run(const prepared_run&) = delete;
    prepared_run& operator=(const prepared_run&) = delete;
    ~prepared_run() = default;

    [[nodiscard]] sandbox::sandbox_mode mode() const noexcept { return mode_; }
    [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

private:
    friend class executor;
    prepared_run() = default;

    process_spec spec_;
    std::optional<sandbox::confined_argv> confined_;
    sandbox::sandbox_mode mode_ = sandbox::sandbox_mode::read_only;
    sandbox::tmp_policy tmp_ = sandbox::tmp_policy::private_tmp;
    std::vector<std::string> writable_roots_;
    std::chrono::milliseconds timeout_{0};
    std::string command_;          // the caller's argv[0]
    bool network_denied_ = false;  // confined under network deny or proxy: its dialect is a denial
    // Network proxy: the run's session, closed once the run is over.
    std::shared_ptr<proxy::session> proxy_session_;
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
    // The lifetime `request` gets: its own timeout, else the default, capped at the maximum.
    [[nodiscard]] std::chrono::milliseconds timeout_for(const run_request& request) const noexcept;

    [[nodiscard]] const executor_options& options() const noexcept { return options_; }
    // Whether runs are contained in their own cgroup (see cgroup.hpp), and why not.
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
    std::shared_ptr<class child_confinement_cache> confinements_;
};

// The synchronous form for simple callers: runs on a private event loop. Returns the record, or
// throws sandbox::sandbox_unavailable_error when the sandbox could not run the command (the
// contract's one exception: sandbox_unavailable(record)).
[[nodiscard]] run_record run(std::shared_ptr<sandbox::provider> provider, run_request request,
                             executor_options options = {});

}  // namespace cordon::runtime
