#include "runtime/local_provider_factory.hpp"

#include "runtime/environment.hpp"
#include "runtime/process.hpp"

extern char** environ;

namespace cordon::runtime {

sandbox::probe_run_result run_probe(const sandbox::confined_argv& wrapped,
                                    std::chrono::milliseconds timeout) {
    process_spec spec;
    spec.argv = wrapped.argv;
    spec.env = build_environment(environ, {});
    spec.environment_fd = wrapped.environment_fd;
    spec.cwd = "/";
    spec.status = wrapped.status;
    spec.fds = wrapped.fds;
    spec.exec_image = wrapped.runner;
    spec.spare_leader_from_polite_signals = wrapped.backend == sandbox::backend_kind::bwrap;
    spec.timeout = timeout;
    spec.plan = kill_plan::standard(std::chrono::milliseconds(200));
    process_outcome outcome = run_process(std::move(spec));

    sandbox::probe_run_result result;
    if (outcome.spawn_failure) {
        result.spawn_error = describe(*outcome.spawn_failure, wrapped.argv.front());
        return result;
    }
    result.exit_code = outcome.exit_code;
    result.timed_out = outcome.timed_out;
    result.stdout_text = outcome.stdout_output.text;
    result.stderr_text = outcome.stderr_output.text;
    if (outcome.status) result.status = *outcome.status;
    return result;
}

std::shared_ptr<sandbox::local_provider> make_local_provider(
    sandbox::local_provider_options options) {
    if (!options.run_probe) options.run_probe = run_probe;
    return std::make_shared<sandbox::local_provider>(std::move(options));
}

}  // namespace cordon::runtime
