// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cli/run_output.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "base/json_text.hpp"
#include "cli/commands.hpp"
#include "cordon/record_json.hpp"
#include "cordon/terminal_prompt.hpp"
#include "policy/escalation.hpp"
#include "runtime/render.hpp"
#include "runtime/write_within.hpp"

namespace cordon::cli {

namespace {

// Writes the whole of a JSON document to `fd`, however long its reader takes (the document is what
// was asked for): 0, or the errno that stopped it (a closed or full stdout).
int write_document(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n >= 0) {
            data.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return errno;
        pollfd room{fd, POLLOUT, 0};  // a descriptor someone made non-blocking
        if (::poll(&room, 1, -1) < 0 && errno != EINTR) return errno;
    }
    return 0;
}

bool same_file(int a, int b) {
    struct stat first {};
    struct stat second {};
    return ::fstat(a, &first) == 0 && ::fstat(b, &second) == 0 && first.st_dev == second.st_dev &&
           first.st_ino == second.st_ino;
}

int exit_code_for(const runtime::run_outcome& outcome, int interrupted_by) {
    switch (outcome.kind) {
        case runtime::outcome_kind::exited:
            return outcome.exit_code.value_or(exit_status_lost);
        case runtime::outcome_kind::signaled:
            return exit_signal_base + outcome.signal.value_or(0);
        case runtime::outcome_kind::timed_out:
            return exit_timeout;
        case runtime::outcome_kind::out_of_memory:
            // What a shell (and a container runtime) reports for a command the OOM killer
            // ended: 128 + SIGKILL, whoever of the run the kernel picked first.
            return exit_signal_base + SIGKILL;
        case runtime::outcome_kind::aborted:
            // Only cordon's own SIGINT/SIGTERM/SIGHUP cancels a `cordon run`: exit as it would
            // have, had it not stayed to end the command's tree first.
            if (interrupted_by != 0) return exit_signal_base + interrupted_by;
            if (outcome.signal) return exit_signal_base + *outcome.signal;
            return outcome.exit_code.value_or(exit_status_lost);
        case runtime::outcome_kind::runner_failed:
            return exit_sandbox_unavailable;
        case runtime::outcome_kind::not_started:
            break;
    }
    const classify::spawn_error error =
        outcome.start_failure.value_or(classify::spawn_error{classify::spawn_stage::exec, 0});
    switch (error.stage) {
        case classify::spawn_stage::policy:
            return exit_usage;  // the invocation asked for something cordon refuses to do
        case classify::spawn_stage::cgroup:
            // A limit that was asked for could not be enforced, or stopped the runner: the
            // command never ran, as when the sandbox is unavailable.
        case classify::spawn_stage::confine:  // (a runner failure; never reaches here)
            return exit_sandbox_unavailable;
        case classify::spawn_stage::resolve:
        case classify::spawn_stage::exec:
            return error.error == ENOENT ? exit_not_found : exit_cannot_execute;
        case classify::spawn_stage::resources:
        case classify::spawn_stage::signals:
        case classify::spawn_stage::session:
        case classify::spawn_stage::fds:
        case classify::spawn_stage::chdir:
            return exit_cannot_execute;
    }
    return exit_cannot_execute;
}

}  // namespace

int report_run(const runtime::run_record& record, const run_report& report) {
    const run_options& options = report.options;
    const standing& stand = report.stand;
    const sandbox::sandbox_mode run_mode = report.run_mode;
    const std::optional<nlohmann::json>& approval_record = report.approval_record;
    const live_writer* live_out = report.live_out;
    const live_writer* live_err = report.live_err;
    const std::uint64_t dropped_out = report.dropped_out;
    const std::uint64_t dropped_err = report.dropped_err;
    const int interrupted_by = report.interrupted_by;

    // cordon's own lines start lines of their own: a command that ends its output without a
    // newline must not be able to glue a forged marker to the start of a real one.
    const auto own_lines = [&](std::string text) {
        if (text.empty()) return;
        const bool shared_terminal = same_file(STDOUT_FILENO, STDERR_FILENO);
        if ((live_err && !live_err->at_line_start()) ||
            (shared_terminal && live_out && !live_out->at_line_start())) {
            text.insert(0, "\n");
        }
        // A reader that stopped reading does not hold cordon forever: what does not fit within
        // the patience is dropped (the run was still classified).
        (void)runtime::write_within(STDERR_FILENO, text,
                                    std::chrono::steady_clock::now() + std::chrono::seconds(5));
    };

    const auto with_approval = [&approval_record](nlohmann::json json) {
        if (approval_record) json["approval"] = *approval_record;
        return json;
    };
    if (options.json) {
        // The record is the answer: one that cannot be written (stdout closed, a full disk) is
        // cordon's failure, never a silent success with the command's exit code.
        std::cout.flush();
        const std::string document =
            base::dump_json(with_approval(runtime::to_json(record))) + "\n";
        if (const int error = write_document(STDOUT_FILENO, document); error != 0) {
            return internal_error(
                run_command_name,
                std::string("cannot write the record to stdout: ") + std::strerror(error));
        }
    } else if (record.outcome.kind == runtime::outcome_kind::runner_failed) {
        own_lines(record.outcome.message + "\n");  // SANDBOX_UNAVAILABLE: the error's message
    } else {
        std::string markers;
        if (record.outcome.kind == runtime::outcome_kind::not_started) {
            markers += "cordon run: " + record.outcome.message + "\n";
        }
        auto note_dropped = [&markers](std::string_view stream, std::uint64_t dropped,
                                       const runtime::collected_output& output,
                                       const live_writer* writer) {
            if (dropped == 0 || (writer != nullptr && writer->reader_left())) return;
            // Why: cordon's own stream failed (closed, a full disk), or its reader was still
            // behind when the command ended (or had stopped reading at all).
            const int failure = writer != nullptr ? writer->failure() : 0;
            const std::string why = failure != 0 ? "writing to cordon's " + std::string(stream) +
                                                       " failed: " + std::strerror(failure)
                                                 : std::string("the reader fell behind");
            markers += "[" + std::to_string(dropped) + " bytes of live " + std::string(stream) +
                       " not shown: " + why + "; full output: " +
                       (output.spill_path ? output.spill_path->string() : "(unavailable)") + "]\n";
        };
        note_dropped("stdout", dropped_out, record.stdout_output, live_out);
        note_dropped("stderr", dropped_err, record.stderr_output, live_err);
        if (record.outcome.kind != runtime::outcome_kind::not_started) {
            // After a denial, say how to retry wider, when that could work: a wider mode exists,
            // the policy asks, and there is a terminal to ask on.
            const bool hint =
                record.sandbox.denied &&
                policy::escalation_possible(run_mode, stand.approval, policy::terminal_can_ask());
            const auto retry = runtime::network_retry_after(record.sandbox);
            const std::string how =
                !hint                            ? std::string()
                : !record.sandbox.network_denied ? policy::cli_escalation_hint()
                : retry.destination ? policy::cli_network_domain_escalation_hint(*retry.destination)
                : retry.whole_network ? policy::cli_network_escalation_hint()
                                      : std::string();
            markers += runtime::render_markers(record, how, !report.reader_gone);
        }
        own_lines(std::move(markers));
    }
    return exit_code_for(record.outcome, interrupted_by);
}

}  // namespace cordon::cli
