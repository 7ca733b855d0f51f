#include "runtime/executor.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <cstring>
#include <stdexcept>

#include "classify/classify.hpp"
#include "runtime/environment.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/launcher_status.hpp"
#include "sandbox/protected_paths.hpp"

extern char** environ;

namespace cordon::runtime {

namespace {

// Spawn-time attribution (reference 5.3). For a confined run the spawned program is the runner:
// if it could not be found or executed, the sandbox failed and the command never ran. Failures
// at other stages (an unusable working directory), and exec failures that the request itself
// causes (an argv or environment too large, the machine out of memory), are the request's.
bool is_runner_spawn_failure(const spawn_error& error) {
    if (error.stage != spawn_stage::resolve && error.stage != spawn_stage::exec) return false;
    return error.error != E2BIG && error.error != ENOMEM;
}

// What the status channel established, in the classifier's terms.
classify::runner_status runner_status_of(const std::optional<sandbox::status_report>& status) {
    if (!status) return classify::runner_status::no_channel;
    switch (status->outcome) {
        case sandbox::status_report::verdict::silent:
            return classify::runner_status::no_proof;
        case sandbox::status_report::verdict::started:
            return classify::runner_status::command_started;
        case sandbox::status_report::verdict::failed:
        case sandbox::status_report::verdict::malformed:
        case sandbox::status_report::verdict::probed:
            return classify::runner_status::runner_failed;
    }
    return classify::runner_status::runner_failed;
}

// One limit of a run: the one asked for (0: none), else the default when this host can enforce
// it. `enforceable` is empty when it can, else the reason.
std::optional<std::uint64_t> effective_limit(std::optional<std::uint64_t> asked,
                                             std::optional<std::uint64_t> fallback,
                                             const std::string& enforceable) {
    if (asked) return *asked == 0 ? std::nullopt : asked;
    return enforceable.empty() ? fallback : std::nullopt;
}

}  // namespace

std::string signal_name(int signal) {
    if (const char* abbrev = ::sigabbrev_np(signal); abbrev != nullptr) {
        return std::string("SIG") + abbrev;
    }
    return "SIG" + std::to_string(signal);
}

executor::executor(boost::asio::any_io_executor io, std::shared_ptr<sandbox::provider> provider,
                   executor_options options)
    : io_(std::move(io)), provider_(std::move(provider)), options_(std::move(options)) {
    if (options_.spill) spill_ = std::make_shared<spill_directory>(options_.spill_root);
    if (options_.cgroup_containment) {
        auto host = cgroup_host::create();
        if (auto* reason = std::get_if<std::string>(&host)) {
            no_cgroup_ = *reason;
            spdlog::info("runs are contained by process group only: {}", no_cgroup_);
        } else {
            cgroups_ = std::move(std::get<std::shared_ptr<cgroup_host>>(host));
        }
    } else {
        no_cgroup_ = "cgroup containment is turned off";
    }
}

run_handle executor::async_run(run_request request, std::function<void(run_result)> done) {
    if (request.argv.empty() || request.argv.front().empty()) {
        throw std::invalid_argument("run_request: argv must name a program");
    }
    if (!request.workspace_root.is_absolute()) {
        throw std::invalid_argument("run_request: workspace_root must be absolute");
    }
    if (request.timeout && request.timeout->count() <= 0) {
        throw std::invalid_argument("run_request: timeout must be positive");
    }
    const auto timeout =
        std::min(request.timeout.value_or(options_.default_timeout), options_.max_timeout);
    const std::filesystem::path workdir = request.workdir.value_or(request.workspace_root);
    const sandbox::sandbox_mode mode = request.mode;

    process_spec spec;
    spec.env = build_environment(environ, request.env);
    spec.cwd = workdir;
    spec.stdin_data = std::move(request.stdin_data);
    spec.stdout_limits = options_.limits;
    if (request.stdout_max_bytes) spec.stdout_limits.tail_bytes = *request.stdout_max_bytes;
    spec.stderr_limits = options_.limits;
    spec.spill = spill_;
    spec.timeout = timeout;
    spec.plan = options_.plan;
    spec.cgroups = cgroups_;
    const std::string& no_pids = cgroups_ ? cgroups_->processes_unlimitable() : no_cgroup_;
    const std::string& no_memory = cgroups_ ? cgroups_->memory_unlimitable() : no_cgroup_;
    spec.limits.max_processes =
        effective_limit(request.max_processes, options_.default_limits.max_processes, no_pids);
    spec.limits.max_memory =
        effective_limit(request.max_memory, options_.default_limits.max_memory, no_memory);
    spec.method = options_.method;
    spec.on_stdout = std::move(request.on_stdout);
    spec.on_stderr = std::move(request.on_stderr);

    // A run that cannot start is reported from the event loop like any other.
    auto not_started = [&](spawn_error error, std::string message) {
        run_record record;
        record.timeout = timeout;
        record.sandbox.mode = mode;
        record.not_started = spawn_failure{error, std::move(message)};
        boost::asio::post(io_, [done = std::move(done), record = std::move(record)]() mutable {
            done(std::move(record));
        });
        return run_handle{};
    };

    // A limit that was asked for and cannot be enforced is never dropped silently.
    spec.limits_required = (request.max_processes && *request.max_processes != 0) ||
                           (request.max_memory && *request.max_memory != 0);
    if (spec.limits_required && !cgroups_) {
        return not_started({spawn_stage::cgroup, EOPNOTSUPP},
                           "cannot enforce the requested limits: " + no_cgroup_);
    }

    // A program that is not there is reported the same way in every mode, before any runner is
    // involved (otherwise bwrap's or the launcher's execvp would report it as a runner failure).
    if (auto resolved = resolve_program(request.argv.front(), spec.env, workdir);
        std::holds_alternative<int>(resolved)) {
        spawn_error error{spawn_stage::resolve, std::get<int>(resolved)};
        return not_started(error, describe(error, request.argv.front()));
    }

    std::optional<sandbox::confined_argv> confined;
    if (sandbox::is_confined(mode)) {
        if (!provider_) {
            // No provider was composed: nothing can enforce the mode, so nothing runs.
            boost::asio::post(io_, [done = std::move(done), mode]() mutable {
                done(sandbox::sandbox_unavailable_error(mode));
            });
            return {};
        }
        const sandbox::sandbox_policy policy{mode, request.workspace_root};
        // A workspace the command must not be able to write is the request's fault, not the
        // host's: reported as such, never as an unusable sandbox.
        std::vector<std::filesystem::path> spill_files;
        if (spill_) spill_files.push_back(spill_->root() / "cordon-spill-*");
        if (auto refused = provider_->refusal(policy, spill_files)) {
            return not_started({spawn_stage::policy, EPERM}, *refused);
        }
        for (const char* special : {"/proc", "/sys", "/dev"}) {
            if (sandbox::is_within(workdir, special)) {
                return not_started({spawn_stage::policy, EPERM},
                                   "refusing the working directory " + workdir.string() +
                                       ": a confined command does not see " + special +
                                       " as the host does");
            }
        }
        try {
            confined = provider_->confine(request.argv, policy, workdir);
        } catch (const sandbox::sandbox_unavailable_error& error) {
            boost::asio::post(io_, [done = std::move(done), error]() mutable { done(error); });
            return {};
        }
        if (sandbox::profile_hides(confined->backend, policy, workdir)) {
            return not_started({spawn_stage::chdir, ENOENT},
                               "the working directory " + workdir.string() +
                                   " is hidden inside the sandbox: bwrap gives workspace-write "
                                   "a private, empty /tmp");
        }
        spec.argv = confined->argv;
        spec.status = confined->status;
        spec.environment_fd = confined->environment_fd;
        spec.fds = confined->fds;
        spec.exec_image = confined->runner;
        spec.denial_signatures = confined->denial_signatures;
        // bwrap does not forward signals, and its death takes the sandbox down with SIGKILL.
        spec.spare_leader_from_polite_signals = confined->backend == sandbox::backend_kind::bwrap;
    } else {
        spec.argv = std::move(request.argv);
    }

    auto on_done = [done = std::move(done), confined = std::move(confined), mode, timeout,
                    spawned = spec.argv.front()](process_outcome outcome) mutable {
        run_record record;
        record.exit_code = outcome.exit_code;
        record.signal = outcome.signal;
        record.timed_out = outcome.timed_out;
        record.aborted = outcome.aborted;
        record.timeout = timeout;
        record.duration_ms = outcome.duration_ms;
        record.sandbox.mode = mode;
        record.limits = outcome.limits_applied;
        record.limits_hit = outcome.limits_hit;
        if (confined) {
            record.sandbox.level = confined->level;
            record.sandbox.backend = confined->backend;
        }

        if (outcome.spawn_failure) {
            const spawn_error& error = *outcome.spawn_failure;
            if (confined && is_runner_spawn_failure(error)) {
                done(sandbox::sandbox_unavailable_error(mode, describe(error, spawned)));
                return;
            }
            record.not_started = spawn_failure{error, outcome.spawn_detail.empty()
                                                          ? describe(error, spawned)
                                                          : std::move(outcome.spawn_detail)};
            done(std::move(record));
            return;
        }

        record.stdout_output = std::move(outcome.stdout_output);
        record.stderr_output = std::move(outcome.stderr_output);
        if (confined && outcome.status &&
            outcome.status->outcome == sandbox::status_report::verdict::failed &&
            outcome.status->stage == sandbox::launcher_stage::exec) {
            // The launcher had confined itself and only the command's own exec failed: the
            // sandbox worked; the program could not be run, as in danger-full-access.
            record.exit_code.reset();
            record.not_started =
                spawn_failure{{spawn_stage::exec, outcome.status->error}, outcome.status->message};
            done(std::move(record));
            return;
        }
        if (confined && outcome.status &&
            outcome.status->outcome == sandbox::status_report::verdict::silent &&
            (outcome.limits_hit.memory || outcome.limits_hit.processes)) {
            // The runner died at the run's limit before the launcher could say anything: the
            // limit, not the sandbox, kept the command from starting.
            record.exit_code.reset();
            record.signal.reset();
            record.not_started =
                spawn_failure{{spawn_stage::cgroup, outcome.limits_hit.memory ? ENOMEM : EAGAIN},
                              std::string("the run met its ") +
                                  (outcome.limits_hit.memory ? "memory" : "process") +
                                  " limit before the command started"};
            done(std::move(record));
            return;
        }
        if (confined) {
            classify::run_evidence evidence;
            evidence.exit_code = outcome.exit_code;
            evidence.killed_by_cordon = outcome.timed_out || outcome.aborted;
            evidence.status = runner_status_of(outcome.status);
            if (outcome.status) evidence.status_detail = outcome.status->message;
            evidence.stderr_tail = record.stderr_output.text;
            evidence.denial_seen = outcome.denial_seen;
            classify::verdict verdict = classify::classify(*confined, evidence);
            if (verdict.runner_failure) {
                spdlog::debug("runner failure under {}: {}", sandbox::to_string(mode),
                              *verdict.runner_failure);
                done(sandbox::sandbox_unavailable_error(mode, *verdict.runner_failure));
                return;
            }
            record.sandbox.denied = verdict.denied;
        }
        done(std::move(record));
    };
    return run_handle(start_process(io_, std::move(spec), std::move(on_done)));
}

run_record run(std::shared_ptr<sandbox::provider> provider, run_request request,
               executor_options options) {
    boost::asio::io_context context;
    executor exec(context.get_executor(), std::move(provider), std::move(options));
    std::optional<run_result> result;
    exec.async_run(std::move(request), [&result](run_result r) { result = std::move(r); });
    context.run();
    if (auto* error = std::get_if<sandbox::sandbox_unavailable_error>(&*result)) throw *error;
    return std::get<run_record>(std::move(*result));
}

}  // namespace cordon::runtime
