// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run`: run one command confined, stream or collect its output, and exit with its status
// (the table in commands.hpp and docs/contract.md, one code per outcome).
//
// With --session the standing policy comes from a session log (cli/standing.hpp), and with
// --escalate one run may go under a wider mode once someone said yes (cli/escalation_prompt.hpp):
// everything is checked (cli/run_options.hpp), and the question asked and answered, before
// anything runs. What is printed at the end, and the exit code, come from cli/run_output.hpp.
// With --tty the run has a terminal of its own, and cordon relays its own to it: what is typed
// (raw), the size as it changes (cli/terminal_relay.hpp).
#include <signal.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <system_error>
#include <variant>

#include "base/json_text.hpp"
#include "base/log.hpp"
#include "cli/commands.hpp"
#include "cli/escalation_prompt.hpp"
#include "cli/live_writer.hpp"
#include "cli/run_options.hpp"
#include "cli/run_output.hpp"
#include "cli/settings.hpp"
#include "cli/standing.hpp"
#include "cli/start_signals.hpp"
#include "cli/terminal_relay.hpp"
#include "cordon/executor.hpp"
#include "cordon/policy.hpp"
#include "policy/escalation.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/pty.hpp"
#include "sandbox/verdict_cache.hpp"

namespace cordon::cli {

namespace {

// How long a command whose reader went away has, after SIGPIPE, before SIGKILL: what `timeout`
// and a shell give it is nothing, since the kernel sends SIGPIPE at its next write.
constexpr std::chrono::milliseconds reader_gone_grace{200};

int run_run_command(run_options& options) {
    // Every signal that would end cordon where it stands (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
    // SIGUSR1, ...: cli/start_signals.hpp) is caught before anything is made (main() kept them
    // blocked until now), so that none leaves the run's tree, its cgroups or a person's raw
    // terminal behind, and what one that comes during the set-up means is
    // decided at its checkpoints below: nothing starts, what the set-up made is removed on the
    // way out (the probe's workspace, a private /tmp, the spill directory), and the record says
    // `aborted`, exit 128+N. The probes run synchronously: one that comes while they run is
    // kept by the set (asio's handler notes it; the loop delivers it at the next checkpoint), so
    // the run is ended once probing is done: several probe runs, each bounded by the probe
    // timeout only (docs/execution.md, "Signals").
    // Once the run is launched, the same handler cancels it.
    boost::asio::io_context io;
    runtime::run_handle handle;
    boost::asio::signal_set interrupts(io);
    for (const int ending : ending_signals())
        interrupts.add(ending);
    int interrupted_by = 0;
    interrupts.async_wait([&](boost::system::error_code ec, int signal) {
        if (ec) return;
        interrupted_by = signal;
        handle.cancel();
    });
    release_interrupts();
    const auto told_to_stop = [&] {
        io.poll();
        io.restart();  // poll() leaves the loop stopped once it has no work left
        return interrupted_by != 0;
    };

    // The settings (cli/settings.hpp): the flags over the configuration files, then, once the
    // session log is open, over what it records. The request takes them once (take_settings).
    auto loaded = load_config(options.policy.profile);
    if (auto* message = std::get_if<std::string>(&loaded)) {
        return usage_error(run_command_name, *message);
    }
    const loaded_config& config = std::get<loaded_config>(loaded);
    auto deployed = resolve_settings(setting_flags_of(options), config);
    if (auto* message = std::get_if<std::string>(&deployed)) {
        return usage_error(run_command_name, *message);
    }
    auto checked = validate(options, std::get<settings>(deployed));
    if (auto* message = std::get_if<std::string>(&checked)) {
        return usage_error(run_command_name, *message);
    }
    auto resolved = resolve_standing(options.policy, std::get<validated>(checked).where,
                                     std::get<settings>(deployed).approval.value);
    if (auto* message = std::get_if<std::string>(&resolved)) {
        return usage_error(run_command_name, *message);
    }
    const standing& stand = std::get<standing>(resolved);
    const settings effective =
        stand.log ? with_session(std::get<settings>(std::move(deployed)),
                                 {sandbox::canonical_path(stand.log->path()), stand.state})
                  : std::get<settings>(std::move(deployed));
    validated& valid = std::get<validated>(checked);
    runtime::run_request& request = valid.request;
    take_settings(request, effective, stand.policy);
    const std::optional<sandbox::sandbox_mode> escalate = valid.escalate;

    // No run may be able to write the session log: whoever can write it widens every later run.
    // Nor read it: it holds what earlier runs were given (their env, their input), and whoever
    // can open it can hold its lock (cordon/session_log.hpp).
    runtime::executor_options executor_options;
    if (stand.log) {
        executor_options.protected_paths.push_back(sandbox::canonical_path(stand.log->path()));
        request.rules.deny_read.push_back(sandbox::canonical_path(stand.log->path()));
    }
    // Nor the configuration: whoever can write it sets the defaults of every later run. One
    // that holds approval rules, not even a run escalated to workspace-write: whoever can write
    // it allows what nobody is asked about.
    const sandbox::sandbox_mode config_guard =
        effective.approval_rules.empty()
            ? stand.policy.mode
            : std::max(stand.policy.mode, sandbox::sandbox_mode::workspace_write);
    if (auto refused =
            config_refusal(config, {config_guard, stand.policy.workspace_root, request.rules},
                           executor_options.protected_paths)) {
        return usage_error(run_command_name, *refused);
    }
    std::shared_ptr<sandbox::provider> provider;
    const auto provider_for = [&](sandbox::sandbox_mode mode) {
        if (provider || !sandbox::is_confined(mode)) return;
        sandbox::local_provider_options provider_options;
        provider_options.choice = effective.backend.value;
        provider_options.verdict_directory = sandbox::default_verdict_cache();
        if (auto identities = unless_default(effective.identity_range)) {
            provider_options.identities = *identities;
        }
        provider = runtime::make_local_provider(std::move(provider_options));
    };

    std::optional<nlohmann::json> approval_record;
    // The record of a run that cordon was told to stop before it started: nothing ran.
    const auto stopped_before_start = [&](sandbox::sandbox_mode mode,
                                          std::optional<std::chrono::milliseconds> timeout) {
        runtime::run_record record;
        record.outcome.kind = runtime::outcome_kind::aborted;
        record.outcome.message = "cordon got " + classify::signal_name(interrupted_by) +
                                 " before the command started; nothing ran";
        const runtime::executor_options defaults;
        record.timeout = std::min(timeout.value_or(defaults.default_timeout), defaults.max_timeout);
        record.sandbox.mode = mode;
        return report_run(record, run_report{options, stand, mode, approval_record, nullptr,
                                             nullptr, 0, 0, interrupted_by, false});
    };
    if (told_to_stop()) return stopped_before_start(request.mode, request.timeout);
    if (escalate || valid.escalate_network) {
        if (escalate && sandbox::is_confined(*escalate) &&
            policy::is_strictly_wider(*escalate, stand.policy.mode)) {
            provider_for(*escalate);
            if (told_to_stop()) return stopped_before_start(request.mode, request.timeout);
        }
        escalation_answer answer = ask_to_escalate(
            valid, stand, effective, {provider.get(), executor_options.protected_paths});
        if (answer.status == policy::escalation_status::refused) {
            return usage_error(run_command_name, answer.error);
        }
        const bool granted = answer.status == policy::escalation_status::granted;
        if (answer.interrupted_by != 0 && granted) {
            // Allowed, but cordon was told to stop while it was asking: nothing runs, and the
            // record says so with the approval it had.
            interrupted_by = answer.interrupted_by;
            approval_record = std::move(answer.approval);
            return stopped_before_start(request.mode, request.timeout);
        }
        if (!granted) {
            if (options.json) {
                nlohmann::json refused = {{"error",
                                           {{"name", "EscalationNotApproved"},
                                            {"code", "ESCALATION_NOT_APPROVED"},
                                            {"message", answer.error}}},
                                          {"approval", answer.approval}};
                std::cout << base::dump_json(refused) << '\n';
            } else {
                std::cerr << run_command_name << ": " << answer.error << '\n';
            }
            return exit_not_approved;
        }
        // The grant widened the request (cordon/escalate.hpp). Its root is checked again: a
        // symlink may have taken its place while cordon asked (policy/resolve.hpp).
        auto escalated = stand.with(request.mode);
        if (auto* refused = std::get_if<std::string>(&escalated)) {
            return usage_error(run_command_name, *refused);
        }
        approval_record = std::move(answer.approval);
    }
    // Live: the command's streams go to ours through writer threads, so that a stalled reader
    // of cordon's output cannot stall the event loop and with it the timeout. The command is
    // paced by the reader instead (run_request::stdout_pace): nothing is dropped while it runs.
    // A reader that goes away ends the command's tree as SIGPIPE would have ended a command
    // writing to it, and cordon exits as that command would have: 141.
    std::atomic<bool> reader_gone{false};
    const auto end_for_reader = [&io, &handle, &reader_gone] {
        reader_gone = true;
        boost::asio::post(io, [&handle] {
            handle.cancel(runtime::kill_plan{{{SIGPIPE, reader_gone_grace}}, {}});
        });
    };
    std::optional<live_writer> live_out;
    std::optional<live_writer> live_err;
    if (!options.json) {
        live_out.emplace(STDOUT_FILENO, end_for_reader);
        live_err.emplace(STDERR_FILENO, end_for_reader);
        request.on_stdout = [&live_out](std::string_view chunk) { live_out->push(chunk); };
        request.on_stderr = [&live_err](std::string_view chunk) { live_err->push(chunk); };
        request.stdout_pace = [&live_out](std::function<void()> more) {
            live_out->when_room(std::move(more));
        };
        request.stderr_pace = [&live_err](std::function<void()> more) {
            live_err->when_room(std::move(more));
        };
    }

    provider_for(request.mode);  // probes, unless a current verdict is cached
    if (told_to_stop()) return stopped_before_start(request.mode, request.timeout);
    const sandbox::sandbox_mode run_mode = request.mode;
    runtime::executor exec(io.get_executor(), provider, std::move(executor_options));

    // --tty: the run's terminal has the size of cordon's own and follows it (SIGWINCH), unless
    // --tty-size said otherwise. The signal is caught before the size is read, so that a resize
    // in between is not missed.
    boost::asio::signal_set resizes(io);
    const int own = valid.tty && !valid.tty_size_given ? own_terminal() : -1;
    if (own >= 0) {
        resizes.add(SIGWINCH);
        if (auto size = terminal_size_of(own)) request.tty = *size;
    }

    std::optional<runtime::run_record> result;
    const auto started = std::chrono::steady_clock::now();
    const auto done = [&](runtime::run_record r) {
        result = std::move(r);
        interrupts.cancel();
        resizes.cancel();
    };
    // Declared before the relay, so that the modes come back after the relay stopped reading
    // whatever way this function is left.
    std::optional<raw_terminal> raw;
    std::unique_ptr<input_relay> relay;
    std::shared_ptr<const unique_fd> master;
    const std::optional<std::chrono::milliseconds> run_timeout = request.timeout;
    runtime::preparation prepared = exec.prepare(std::move(request));
    // The last moment before anything starts: a signal that came while the run was prepared
    // ends it here, whatever the preparation gave (its private /tmp and workspace go with it).
    if (told_to_stop()) return stopped_before_start(run_mode, run_timeout);
    if (auto* ready = std::get_if<runtime::prepared_run>(&prepared)) {
        master = ready->terminal();
        if (master) {
            // What is typed goes to the run's terminal, raw: Ctrl-C is the command's, as it
            // would be at its own terminal, not cordon's. cordon's stdin is read only when cordon
            // may read it (raw_terminal: in the terminal's foreground) or it is no terminal.
            raw.emplace(STDIN_FILENO);
            const bool typed = ::isatty(STDIN_FILENO) == 1;
            if (!typed || raw->engaged()) {
                auto relaying = input_relay::start(STDIN_FILENO, typed, master);
                if (auto* error = std::get_if<std::error_code>(&relaying)) {
                    // cordon failed (a pipe, a thread), not the invocation: nothing ran.
                    return internal_error(run_command_name,
                                          "cannot type cordon's stdin into the command's "
                                          "terminal: " +
                                              error->message());
                }
                relay = std::get<std::unique_ptr<input_relay>>(std::move(relaying));
            }
        }
        handle = exec.launch(std::move(*ready), done);
    } else {
        // A run that cannot start is reported from the event loop, as async_run() does.
        boost::asio::post(
            io, [&done, record = std::get<runtime::run_record>(std::move(prepared))]() mutable {
                done(std::move(record));
            });
    }
    std::function<void()> follow_resizes = [&] {
        resizes.async_wait([&](boost::system::error_code ec, int) {
            if (ec) return;
            if (auto size = terminal_size_of(own); size && master) {
                if (const int error = runtime::resize_pty(master->get(), *size); error != 0) {
                    log::debug("cannot resize the run's terminal: {}", std::strerror(error));
                }
            }
            follow_resizes();
        });
    };
    if (own >= 0 && master) follow_resizes();
    io.run();
    // cordon's terminal has its modes back before anything else happens: the lines below are
    // written in them, and a signal that kills cordon from here on leaves them as they were.
    if (relay) relay->stop();
    if (raw) raw->restore();
    // From here on SIGINT/SIGTERM take their default action again: nothing is left to cancel, and
    // cordon must stay killable while it flushes the live output.
    interrupts.clear();

    // What is still queued reaches a reader that is slow but reading while the run's own timeout
    // lasts (a command writing to it directly would have waited that long), and at least 5 s.
    const auto patience = std::max<std::chrono::milliseconds>(
        std::chrono::seconds(5), std::chrono::duration_cast<std::chrono::milliseconds>(
                                     started + result->timeout - std::chrono::steady_clock::now()));
    std::uint64_t dropped_out = live_out ? live_out->finish(patience) : 0;
    std::uint64_t dropped_err = live_err ? live_err->finish(patience) : 0;
    if (reader_gone && result->outcome.kind == runtime::outcome_kind::aborted &&
        interrupted_by == 0) {
        interrupted_by = SIGPIPE;
    }
    // Every byte reached cordon's reader (or the reader left): nobody will ask for the spill
    // files, which only a reader that missed bytes is shown. They go now rather than wait for a
    // later cordon's budget; the executor removes their directory once it is empty.
    if (live_out && ((dropped_out == 0 && dropped_err == 0) || reader_gone)) {
        for (const runtime::collected_output* output :
             {&result->stdout_output, &result->stderr_output}) {
            if (output->spill_path) (void)::unlink(output->spill_path->c_str());
        }
    }
    return report_run(*result,
                      run_report{options, stand, run_mode, approval_record,
                                 live_out ? &*live_out : nullptr, live_err ? &*live_err : nullptr,
                                 dropped_out, dropped_err, interrupted_by, reader_gone});
}

}  // namespace

std::function<int()> add_run_command(CLI::App& app, std::vector<std::string> command) {
    auto options = std::make_shared<run_options>();
    options->argv = std::move(command);
    auto* sub = app.add_subcommand("run", "Run a command under a sandbox policy");
    add_run_options(*sub, *options);
    return [options] { return run_run_command(*options); };
}

}  // namespace cordon::cli
