// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/local_provider_factory.hpp"

#include "classify/classify.hpp"
#include "cordon/environment.hpp"
#include "runtime/process.hpp"

extern char** environ;

namespace cordon::runtime {

namespace {

// The first line of `text`, or empty.
std::string_view first_line(std::string_view text) {
    const auto end = text.find('\n');
    return end == std::string_view::npos ? text : text.substr(0, end);
}

}  // namespace

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
    // Probed as it will run: as the run's own id, in its mount namespace (sandbox/identity.hpp).
    // A host that refuses that id a user namespace fails bwrap's probe, not every run after it.
    spec.identity = wrapped.identity_setup;
    spec.spare_leader_from_polite_signals = wrapped.backend == sandbox::backend_kind::bwrap;
    spec.timeout = timeout;
    spec.plan = kill_plan::standard(std::chrono::milliseconds(200));
    const process_outcome outcome = run_process(std::move(spec));

    // The same judgement as every run; a probe succeeds only when the runner proved it did its
    // job and the run exited 0.
    const classify::run_outcome judged =
        classify::decide(outcome, {&wrapped, wrapped.argv.front(), outcome.stderr_output.text})
            .outcome;
    sandbox::probe_run_result result;
    if (outcome.status) result.abi = outcome.status->abi;
    switch (judged.kind) {
        case classify::outcome_kind::exited:
            if (!judged.exit_code) {
                // Reaped by someone else (process.cpp, sweep): no answer, not a failure.
                result.status_lost = true;
                result.failure = judged.message;
                return result;
            }
            if (judged.exit_code == 0) return result;
            if (const auto line = first_line(outcome.stderr_output.text); !line.empty()) {
                result.failure = std::string(line);
            } else {
                result.failure =
                    "exited with status " + std::to_string(judged.exit_code.value_or(-1));
            }
            return result;
        case classify::outcome_kind::signaled:
            result.failure = "killed by " + classify::signal_name(judged.signal.value_or(0));
            return result;
        case classify::outcome_kind::timed_out:
            result.failure = "timed out after " + std::to_string(timeout.count()) + "ms";
            return result;
        case classify::outcome_kind::aborted:
            result.failure = "cancelled";
            return result;
        case classify::outcome_kind::out_of_memory:
            result.failure = "ended at its memory limit";
            return result;
        case classify::outcome_kind::not_started:
        case classify::outcome_kind::runner_failed:
            result.failure = judged.message;
            return result;
    }
    return result;
}

std::shared_ptr<sandbox::local_provider> make_local_provider(
    sandbox::local_provider_options options) {
    if (!options.run_probe) options.run_probe = run_probe;
    auto provider = std::make_shared<sandbox::local_provider>(std::move(options));
    (void)provider->selected();  // the probing phase: confine() finds the verdict cached
    return provider;
}

}  // namespace cordon::runtime

namespace cordon {

std::shared_ptr<sandbox::provider> make_local_provider(sandbox::local_provider_options options) {
    return runtime::make_local_provider(std::move(options));
}

}  // namespace cordon
