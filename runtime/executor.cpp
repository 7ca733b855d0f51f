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
#include "sandbox/launcher_status.hpp"

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
        cgroups_ = cgroup_host::create();
        if (!cgroups_) {
            spdlog::info("runs are contained by process group only: {}",
                         cgroup_host::unavailable_reason());
        }
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
    spec.method = options_.method;
    spec.on_stdout = std::move(request.on_stdout);
    spec.on_stderr = std::move(request.on_stderr);

    // A program that is not there is reported the same way in every mode, before any runner is
    // involved (otherwise bwrap's or the launcher's execvp would report it as a runner failure).
    if (auto resolved = resolve_program(request.argv.front(), spec.env, workdir);
        std::holds_alternative<int>(resolved)) {
        run_record record;
        record.timeout = timeout;
        record.sandbox.mode = mode;
        spawn_error error{spawn_stage::resolve, std::get<int>(resolved)};
        record.not_started = spawn_failure{error, describe(error, request.argv.front())};
        boost::asio::post(io_, [done = std::move(done), record = std::move(record)]() mutable {
            done(std::move(record));
        });
        return {};
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
        try {
            confined = provider_->confine(request.argv,
                                          sandbox::sandbox_policy{mode, request.workspace_root});
        } catch (const sandbox::sandbox_unavailable_error& error) {
            boost::asio::post(io_, [done = std::move(done), error]() mutable { done(error); });
            return {};
        }
        spec.argv = confined->argv;
        spec.status = confined->status;
        spec.exec_image = confined->runner;
        spec.denial_signatures = confined->denial_signatures;
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
            record.not_started = spawn_failure{error, describe(error, spawned)};
            done(std::move(record));
            return;
        }

        record.stdout_output = std::move(outcome.stdout_output);
        record.stderr_output = std::move(outcome.stderr_output);
        if (confined && outcome.status == classify::runner_status::runner_failed &&
            outcome.status_stage == static_cast<std::uint32_t>(sandbox::launcher_stage::exec)) {
            // The launcher had confined itself and only the command's own exec failed: the
            // sandbox worked; the program could not be run, as in danger-full-access.
            record.exit_code.reset();
            record.not_started =
                spawn_failure{{spawn_stage::exec, outcome.status_error}, outcome.status_detail};
            done(std::move(record));
            return;
        }
        if (confined) {
            classify::run_evidence evidence;
            evidence.exit_code = outcome.exit_code;
            evidence.killed_by_cordon = outcome.timed_out || outcome.aborted;
            evidence.status = outcome.status;
            evidence.status_detail = outcome.status_detail;
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
