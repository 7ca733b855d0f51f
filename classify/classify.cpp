// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "classify/classify.hpp"

#include <algorithm>
#include <cerrno>
#include <vector>

#include "classify/network_denial.hpp"
#include "classify/signature_scanner.hpp"

namespace cordon::classify {

namespace {

bool blank(std::string_view text) {
    return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// Calls `visit(line)` for each line of `text` (without its "\n" or "\r\n") until it returns true;
// returns whether one did.
template <typename Visit>
bool any_line(std::string_view text, Visit visit) {
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (visit(line)) return true;
        start = end + 1;
    }
    return false;
}

std::vector<std::string> lowered(const std::vector<std::string>& texts) {
    std::vector<std::string> out;
    for (const auto& text : texts) {
        if (!blank(text)) out.push_back(ascii_lower(text));
    }
    return out;
}

bool contains_any(const std::string& lower_line, const std::vector<std::string>& lower_needles) {
    return std::any_of(lower_needles.begin(), lower_needles.end(), [&](const std::string& needle) {
        return lower_line.find(needle) != std::string::npos;
    });
}

// The line of stderr that names the runner (one with any fatal signature of the backend), else
// the first non-blank line.
std::string runner_line(std::string_view stderr_text, const sandbox::confined_argv& confined) {
    std::vector<std::string> fatal;
    for (const auto& rule : confined.runner_failure_rules) {
        for (auto& signature : lowered(rule.fatal_signatures))
            fatal.push_back(std::move(signature));
    }
    std::string first;
    std::string named;
    any_line(stderr_text, [&](std::string_view line) {
        if (contains_any(ascii_lower(line), fatal)) {
            named = std::string(line);
            return true;
        }
        if (first.empty() && !blank(line)) first = std::string(line);
        return false;
    });
    return named.empty() ? first : named;
}

// A confined run's spawned program is the runner: when it could not be found or executed, the
// sandbox failed and the command never ran. Failures at other stages (an unusable working
// directory), and exec failures that the request itself causes (an argv or environment too
// large, the machine out of memory), are the request's. Confined in the child, the spawned
// program is the command, and only a failure to put the walls up is the sandbox's.
bool is_runner_spawn_failure(const spawn_error& error, bool in_child) {
    if (in_child) return error.stage == spawn_stage::confine;
    if (error.stage != spawn_stage::resolve && error.stage != spawn_stage::exec) return false;
    return error.error != E2BIG && error.error != ENOMEM;
}

// Why a runner that exited on its own never proved that the command started.
std::string unproven_start(const run_evidence& evidence, const run_context& context) {
    std::string line = runner_line(context.stderr_text, *context.confined);
    if (!line.empty()) return line;
    if (evidence.exit_code) {
        return "the sandbox runner exited with status " + std::to_string(*evidence.exit_code) +
               " without starting the command";
    }
    return "the sandbox runner was killed by " + signal_name(evidence.signal.value_or(0)) +
           " before starting the command";
}

// When the run met its memory or process limit before the command started, that limit, not the
// sandbox, kept the command from running: sets `out` to say so and returns true.
bool stopped_by_limit(const run_evidence& evidence, verdict& out) {
    if (!evidence.limits_hit.memory && !evidence.limits_hit.processes) return false;
    const bool memory = evidence.limits_hit.memory;
    out.outcome.kind = outcome_kind::not_started;
    out.outcome.start_failure = spawn_error{spawn_stage::cgroup, memory ? ENOMEM : EAGAIN};
    out.outcome.message = std::string("the run met its ") + (memory ? "memory" : "process") +
                          " limit before the command started";
    return true;
}

// A runner failure proven by the status channel, or nullopt when the channel proved what the
// runner was asked to do. Sets `out` for the not-started cases the channel decides.
std::optional<std::string> channel_failure(const run_evidence& evidence, const run_context& context,
                                           verdict& out) {
    const sandbox::status_report& status = *evidence.status;
    const bool probing = context.confined->status &&
                         context.confined->status->job == sandbox::runner_job::answer_probe;
    switch (status.outcome) {
        case sandbox::status_report::verdict::failed:
            if (status.stage == sandbox::launcher_stage::exec) {
                // The launcher had confined itself and only the command's own exec failed: the
                // sandbox worked; the program could not be run, and the record says so in the
                // words a run without a sandbox uses.
                const spawn_error error{spawn_stage::exec, status.error};
                out.outcome.kind = outcome_kind::not_started;
                out.outcome.start_failure = error;
                out.outcome.message =
                    context.command.empty() ? status.message : describe(error, context.command);
                return std::nullopt;
            }
            // The launcher could not go on (it could not fork the command, say) because the run
            // had already met its limit.
            if (stopped_by_limit(evidence, out)) return std::nullopt;
            return status.message.empty() ? runner_line(context.stderr_text, *context.confined)
                                          : status.message;
        case sandbox::status_report::verdict::malformed:
            return status.message;
        case sandbox::status_report::verdict::started:
            if (probing) return "the sandbox runner started a command instead of answering";
            return std::nullopt;
        case sandbox::status_report::verdict::probed:
            if (!probing) return "the sandbox runner answered a probe instead of running";
            return std::nullopt;
        case sandbox::status_report::verdict::silent:
            // The runner died at the run's limit before the launcher could say anything.
            if (stopped_by_limit(evidence, out)) return std::nullopt;
            // Silence proves nothing. When cordon ended the runner, the run is a timeout or a
            // cancellation; otherwise the runner gave up before the command started.
            if (evidence.timed_out || evidence.aborted) return std::nullopt;
            return unproven_start(evidence, context);
    }
    return "the sandbox runner's status is unknown";
}

}  // namespace

std::optional<std::string> match_runner_failure(
    std::optional<int> exit_code, std::string_view stderr_text,
    std::span<const sandbox::runner_failure_rule> rules) {
    if (!exit_code || *exit_code == 0) return std::nullopt;
    for (const auto& rule : rules) {
        if (!rule.allowed_exit_codes.empty() &&
            std::find(rule.allowed_exit_codes.begin(), rule.allowed_exit_codes.end(), *exit_code) ==
                rule.allowed_exit_codes.end()) {
            continue;
        }
        std::vector<std::string> informational;
        for (const auto& line : rule.informational_lines)
            informational.push_back(ascii_lower(line));
        const std::vector<std::string> fatal = lowered(rule.fatal_signatures);
        std::string found;
        const bool matched = any_line(stderr_text, [&](std::string_view line) {
            const std::string lower = ascii_lower(line);
            if (std::find(informational.begin(), informational.end(), lower) !=
                informational.end()) {
                return false;
            }
            if (!contains_any(lower, fatal)) return false;
            found = std::string(line);
            return true;
        });
        if (matched) return found;
    }
    return std::nullopt;
}

bool matches_denial(std::optional<int> exit_code, std::string_view stderr_text,
                    std::span<const std::string> signatures) {
    if (!exit_code || *exit_code == 0) return false;
    signature_scanner scanner(signatures);
    scanner.feed(stderr_text);
    return scanner.matched();
}

namespace {

// The file walls' denial of a confined run that failed, or nullopt. A path the walls govern,
// named with their refusal, proves it; otherwise the dialect seen anywhere in the stream stands
// unless the whole stream was retained and its lines refute it. (`denial_seen` may also be the
// network's dialect: then no line of a whole stream carries the file walls' words, and the
// network's denial is decided beside this one.)
std::optional<denial_evidence> file_evidence(const run_evidence& evidence,
                                             const run_context& context) {
    if (context.walls == nullptr) {
        if (!evidence.denial_seen) return std::nullopt;
        return denial_evidence{denial_source::dialect, {}, {}};
    }
    std::vector<std::string> dialect = lowered(context.confined->denial_signatures);
    for (const std::string& sentence : runtime_denial_signatures())
        dialect.push_back(sentence);
    const host_view this_host;
    const file_reading read = read_file_denial(context.stderr_text, *context.walls, dialect,
                                               context.host ? *context.host : this_host);
    if (read.evidence) return read.evidence;
    if (!evidence.denial_seen) return std::nullopt;
    if (context.stderr_whole && (read.refuted || read.dialect_line.empty())) return std::nullopt;
    return denial_evidence{denial_source::dialect, {}, read.dialect_line};
}

verdict decided(const run_evidence& evidence, const run_context& context) {
    verdict out;
    run_outcome& outcome = out.outcome;

    // 1. Nothing started.
    if (evidence.spawn_failure) {
        const spawn_error& error = *evidence.spawn_failure;
        std::string message = evidence.spawn_detail.empty() ? describe(error, context.program)
                                                            : evidence.spawn_detail;
        if (context.confined && is_runner_spawn_failure(error, context.confined_in_child)) {
            outcome.kind = outcome_kind::runner_failed;
        } else {
            outcome.kind = outcome_kind::not_started;
            outcome.start_failure = error;
        }
        outcome.message = std::move(message);
        return out;
    }

    // 2. The runner failed, or proved that the command could not start. Confined in the child,
    // there was no runner: the exec itself proved the start.
    if (context.confined && !context.confined_in_child) {
        std::optional<std::string> failure;
        if (evidence.status) {
            failure = channel_failure(evidence, context, out);
            if (!outcome.started()) return out;
        } else if (!evidence.timed_out && !evidence.aborted) {
            failure = match_runner_failure(evidence.exit_code, context.stderr_text,
                                           context.confined->runner_failure_rules);
        }
        if (failure) {
            outcome.kind = outcome_kind::runner_failed;
            outcome.message = failure->empty() ? "the sandbox runner failed" : std::move(*failure);
            return out;
        }
    }

    // 3. The command ran; who ended it. A launcher that ran the command as its child knows how it
    // ended better than the runner's own status does (bwrap folds a signal into 128+N).
    const bool reported = evidence.status && evidence.status->ended;
    outcome.exit_code = reported ? evidence.status->ended->exit_code : evidence.exit_code;
    outcome.signal = reported ? evidence.status->ended->signal : evidence.signal;
    if (evidence.timed_out) {
        outcome.kind = outcome_kind::timed_out;
    } else if (evidence.aborted) {
        outcome.kind = outcome_kind::aborted;
        outcome.message = evidence.abort_reason;
    } else if (evidence.limits_hit.memory || evidence.limits_hit.sockets) {
        // The OOM killer ended the run at its memory limit (every process of it: cgroup.hpp),
        // or cordon did, its sockets far past their bound, whatever the leader's own status says.
        outcome.kind = outcome_kind::out_of_memory;
    } else if (outcome.signal) {
        outcome.kind = outcome_kind::signaled;
    } else {
        outcome.kind = outcome_kind::exited;
        if (!outcome.exit_code) {
            // Someone else reaped the leader (a host that sets SIGCHLD to SIG_IGN): say so
            // rather than invent a status.
            outcome.message = "the exit status was lost: another process reaped the command";
        }
    }
    // The command's own exit code: under bwrap a death by signal N is not an exit of 128+N.
    const bool network_dialect =
        context.network_denied && matches_network_denial(context.stderr_text);
    const bool network_refused = network_dialect || context.proxy_blocked;
    const bool failed = context.confined != nullptr && outcome.exit_code.value_or(0) != 0;
    if (failed) out.evidence = file_evidence(evidence, context);
    out.denied = failed && (out.evidence || network_refused);
    out.network_denied = out.denied && network_refused;
    return out;
}

}  // namespace

verdict decide(const run_evidence& evidence, const run_context& context) {
    verdict out = decided(evidence, context);
    if (out.outcome.kind == outcome_kind::runner_failed) {
        runner_failure failure;
        failure.detail = out.outcome.message;
        if (context.confined) failure.backend = context.confined->backend;
        out.outcome.runner = std::move(failure);
    }
    return out;
}

}  // namespace cordon::classify
