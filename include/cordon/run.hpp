// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The front of the library: run one command confined, request in, record out.
//
//     #include <cordon/cordon.hpp>
//
//     cordon::run_request request;
//     request.argv = {"bash", "-c", "make test"};
//     request.mode = cordon::sandbox_mode::read_only;
//     request.workspace_root = "/home/me/src/app";  // absolute and canonical
//     cordon::run_record record = cordon::run(request);
//     if (record.sandbox.denied) { /* the sandbox stopped a write: ask, then retry wider */ }
//
// run() blocks until the command's whole tree has ended, on a private event loop; it may be called
// from any number of threads at once. The record is the one value every outcome arrives as, the
// sandbox that could not run the command included (outcome runner_failed, what
// SANDBOX_UNAVAILABLE says). Only a request that breaks the contract (an empty argv, a relative
// workspace, a non-positive timeout, a stdout_max_bytes of 0, both stdin_data and stdin_fd)
// throws std::invalid_argument: a programmer's error, not an outcome (check_request, below).
// Running on the caller's own event loop is executor.hpp; in the background, jobs.hpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/environment.hpp"
#include "cordon/export.hpp"
#include "cordon/kill_plan.hpp"
#include "cordon/limits.hpp"
#include "cordon/output.hpp"
#include "cordon/policy.hpp"
#include "cordon/provider.hpp"
#include "cordon/record.hpp"
#include "cordon/terminal.hpp"
#include "cordon/unique_fd.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::proxy {
class service;
}  // namespace cordon::proxy

namespace cordon::runtime {

class process_tree;  // private (runtime/process.hpp)

struct run_request {
    std::vector<std::string> argv;  // e.g. {"bash", "-c", command}
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    std::filesystem::path workspace_root;  // absolute and canonical
    // The policy's other parts (policy.hpp): protected names and the credential stores
    // hidden by default, extra writable roots, read-only carve-outs, what /tmp is.
    sandbox::path_rules rules;
    // What the command may reach over the network (docs/network.md). Ignored under
    // danger-full-access, which has the host's network.
    sandbox::network_rules network;
    std::optional<std::filesystem::path> workdir;           // default: the workspace root
    std::optional<std::chrono::milliseconds> timeout;       // default and cap: executor_options
    std::optional<std::size_t> stdout_max_bytes;            // the stdout tail for this call; > 0
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
    // Run the command under a pseudo-terminal of this size (docs/terminal.md) instead of pipes:
    // it is the command's stdin, stdout, stderr and controlling terminal, in a session of its own
    // inside the sandbox. Everything it writes arrives as stdout; `stdin_data` is typed into it;
    // not with `stdin_fd`. executor::prepare() gives the terminal's master
    // (prepared_run::terminal()) for a caller who drives it; a background job does that itself
    // (jobs.hpp: job::press(), job::screen(), job::resize()). `stdin_data` is typed as it is and
    // no end-of-file follows (a terminal has none until one is typed): end it with "\x04" at
    // the start of a line for a program that reads to the end of its input.
    std::optional<terminal_size> tty;
    // Live output, called on the run's strand as chunks arrive. The callbacks (and the pace
    // functions, below) should not throw: they run on a loop other runs may share. If one does
    // while the command runs, the run is ended as run_handle::cancel() would end it (its whole
    // tree killed and reaped) and its record says so: outcome aborted, outcome.message "a
    // callback of the caller's threw: <what()>". The exception is logged and goes no further (never
    // std::terminate, never into another run), and no callback of the run is called again. A
    // background job keeps its own streams whole to the end (jobs.hpp).
    std::function<void(std::string_view)> on_stdout;
    std::function<void(std::string_view)> on_stderr;
    // Backpressure for live output (cordon run paces the command by its own reader): when set,
    // after each chunk handed to on_stdout (on_stderr) the stream is not read again until the
    // function passed here is called, from any thread, at once or later; so a command that
    // writes faster than the reader reads waits on its full pipe, as it would writing to the
    // reader itself. Only while the command runs: once it has exited or is being ended (timeout,
    // cancel), what is left is read as fast as it comes, so that nothing waits on a reader to
    // end a run.
    std::function<void(std::function<void()> more)> stdout_pace;
    std::function<void(std::function<void()> more)> stderr_pace;
};

// How a command is started: clone(CLONE_VM|CLONE_VFORK), with no page-table copy (the fast
// default), or fork(), which the sanitizer builds use because their runtimes cannot follow a
// CLONE_VM child.
enum class spawn_method {
    vfork,
    fork,
};
[[nodiscard]] spawn_method default_spawn_method() noexcept;

// Where a program is taken from when no path is given for it, as cordon's own commands do it:
// the first `name` in /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin, /sbin, /bin (in the
// order PATH lists them) that is a root-owned executable no one else may write, all the way up;
// never a PATH entry outside them, where a command run earlier (or anyone who sets PATH) could
// have planted one that a later run, an approved unconfined one included, would start. Empty when
// none qualifies. trusted_shell() is trusted_program("bash"), for a command line:
//
//     request.argv = {cordon::trusted_shell().string(), "-c", "make test"};
[[nodiscard]] std::filesystem::path trusted_program(std::string_view name);
[[nodiscard]] std::filesystem::path trusted_shell();

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
    // What is kept of the spill files dead cordons left under spill_root (output.hpp).
    spill_budget kept_spills;
    bool cgroup_containment = true;  // when the host allows it
    spawn_method method = default_spawn_method();
    // Every run's leader dies with the thread that spawned it (PR_SET_PDEATHSIG): only when
    // async_run() and launch() are always called on a thread that outlives the runs (the job
    // supervisor's loop thread).
    bool die_with_spawning_thread = false;
    // More paths (globs as for provider::refusal) that no workspace-write run may be able to
    // write, beside the executor's own spill files: the job supervisor's stream files.
    std::vector<std::filesystem::path> protected_paths;
    // The Landlock rung: applied in the forked child (one exec fewer per run), or by exec'ing
    // cordon-landlock, as a consumer that spawns confine()'s argv does. Both put up the same
    // walls in the same order and give the same record; the test suites run on both paths.
    bool landlock_in_child = default_landlock_in_child();
    // The network proxy that runs under network proxy use (docs/network.md): null, the
    // process's own, shared by every executor given none; its one thread starts with the first
    // such run and lasts as long as the process. A caller may give an executor a service of its
    // own, to keep its runs apart.
    std::shared_ptr<proxy::service> proxy;
};

// Throws std::invalid_argument when `request` breaks async_run's contract: an empty argv, a
// relative workspace, a non-positive timeout, a stdout_max_bytes of 0, both stdin_data and
// stdin_fd, or a tty with stdin_fd or of a size terminal_size_error() refuses. Checked before
// anything is set up for the run.
void check_request(const run_request& request);

// A started run (executor.hpp) or background job: how to end it early.
class run_handle {
public:
    run_handle() = default;
    explicit run_handle(std::shared_ptr<process_tree> tree) : tree_(std::move(tree)) {}
    // Cancels the run with the executor's kill plan (SIGTERM to the tree, SIGKILL after the
    // grace), or with `plan`; safe from any thread. Only the first cancel counts.
    void cancel(std::optional<kill_plan> plan = std::nullopt) const;

private:
    std::shared_ptr<process_tree> tree_;  // null: nothing was started
};

// Runs `request` confined by `provider` (null: only danger-full-access can run; a confined mode
// fails closed, as a runner_failed record) and returns its record. A caller that wants the
// contract's exception for a sandbox that could not run the command throws
// sandbox_unavailable(record) itself.
[[nodiscard]] run_record run(std::shared_ptr<sandbox::provider> provider, run_request request,
                             executor_options options = {});

// The same with the process's default provider: the local sandbox ladder (bwrap, then the
// Landlock launcher), probed once, on the first call, and shared by every later one.
[[nodiscard]] run_record run(run_request request, executor_options options = {});

}  // namespace cordon::runtime

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using runtime::executor_options;
using runtime::run;
using runtime::run_handle;
using runtime::run_request;
using runtime::spawn_method;
using runtime::trusted_program;
using runtime::trusted_shell;
}  // namespace cordon
CORDON_PUBLIC_END
