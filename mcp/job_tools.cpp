// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The job tools: job_output (wait for and read a job's output by offset), job_write (feed its
// stdin), job_kill (end its whole tree) and job_list. Each job keeps its own read cursor
// (runtime::job::cursor), so that what the server remembers goes when the job does.
#include <boost/regex.hpp>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <optional>
#include <string>

#include "base/json_text.hpp"
#include "mcp/arguments.hpp"
#include "mcp/tool_context.hpp"
#include "mcp/tools.hpp"

namespace cordon::mcp {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

// How much output job_kill returns: the end of it.
constexpr std::size_t kill_tail_bytes = 4'000;

std::string iso8601(std::chrono::system_clock::time_point when) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

}  // namespace

json run_job_output(tool_context& context, call& running, const json& given) {
    runtime::supervisor& jobs = context.jobs();
    arguments args(context.declared("job_output"), given);
    const auto id = args.text("job_id", true);
    const auto offset = args.integer("offset", -INT64_MAX, INT64_MAX, true);
    const auto asked_wait = args.choice("wait", {"output", "exit", "none"});
    const auto timeout = args.integer("timeout_ms", 0, most_wait_ms, true);
    const auto max_bytes = args.integer("max_bytes", 1, most_output_bytes, true);
    const auto filter = args.text("filter");
    const std::string stream = args.choice("stream", {"both", "stdout", "stderr"}).value_or("both");
    const bool screen = args.flag("screen").value_or(false);
    const bool attributes = args.flag("attributes").value_or(false);
    const auto scrollback = args.integer("scrollback", 0, most_scrollback_lines, true);
    const auto wait_for = args.text("wait_for");
    const bool verbose = args.flag("verbose").value_or(false);
    if (!args.ok()) return tool_error(args.error());
    // A screen is read as it is now unless asked to wait; bytes, once there are new ones.
    const std::string wait = asked_wait.value_or(screen ? "none" : "output");
    auto found = find_job(jobs, *id);
    if (auto* error = std::get_if<json>(&found)) return *error;
    const auto& job = std::get<std::shared_ptr<runtime::job>>(found);
    if ((attributes || scrollback) && !screen) {
        return tool_error(
            "invalid arguments for job_output: attributes and scrollback go with screen: true");
    }
    if (screen && !job->has_terminal()) {
        return tool_error(*id +
                          " has no terminal, so no screen: it was not started with tty: true");
    }
    if (wait_for && !screen) {
        return tool_error("invalid arguments for job_output: wait_for goes with screen: true");
    }
    if (screen && (filter || stream != "both")) {
        return tool_error(
            "invalid arguments for job_output: a screen is not filtered by line or stream");
    }

    const runtime::job_output which = stream == "stdout"   ? runtime::job_output::stdout_only
                                      : stream == "stderr" ? runtime::job_output::stderr_only
                                                           : runtime::job_output::merged;
    std::optional<boost::regex> pattern;
    if (filter) {
        try {
            pattern.emplace(*filter, boost::regex::ECMAScript);
        } catch (const std::exception& error) {
            return tool_error(
                "invalid arguments for job_output: filter is not a regular "
                "expression: " +
                std::string(error.what()));
        }
    }
    std::uint64_t from = job->cursor(which);
    if (offset) {
        const std::uint64_t size = stream_size(*job, which);
        from = *offset >= 0 ? static_cast<std::uint64_t>(*offset)
                            : size - std::min(size, static_cast<std::uint64_t>(-*offset));
    }
    const auto deadline = steady_clock::now() + milliseconds(timeout.value_or(default_wait_ms));
    if (wait_for) {
        // Until the screen shows it (a program that takes its time to draw), the job ended, or
        // the timeout.
        (void)context.wait_for(
            running, deadline,
            [&](steady_clock::time_point until) {
                return job->wait_screen({*wait_for, std::nullopt, std::nullopt}, until) !=
                       runtime::screen_wait_result::timed_out;
            },
            [&job] { return progress_of(*job); });
    } else if (wait == "output") {
        (void)context.wait_for(
            running, deadline,
            [&](steady_clock::time_point until) { return job->wait_output(which, from, until); },
            [&job] { return progress_of(*job); });
    } else if (wait == "exit") {
        (void)context.wait_for(
            running, deadline,
            [&job](steady_clock::time_point until) { return job->wait_settled(until); },
            [&job] { return progress_of(*job); });
    }
    if (running.cancelled) return nullptr;
    const runtime::job_snapshot now = job->snapshot();
    if (screen) {
        auto drawn = job->screen(attributes, static_cast<std::size_t>(scrollback.value_or(0)));
        const bool cut = fit_screen(*drawn, screen_budget_bytes);
        const window shown = screen_window(*drawn, cut, now);
        job->set_cursor(which, shown.next_offset);
        job_view shown_job = context.show(*job, now, shown);
        show_screen(shown_job, *drawn);
        return tool_result(shown_job, verbose);
    }
    window shown = read_window(*job, which, from,
                               static_cast<std::size_t>(max_bytes.value_or(default_output_bytes)));
    if (pattern) {
        try {
            shown = keep_lines(std::move(shown), [&pattern](std::string_view line) {
                return boost::regex_search(line.begin(), line.end(), *pattern);
            });
        } catch (const std::exception& error) {
            return tool_error("job_output: the filter could not be applied: " +
                              std::string(error.what()));
        }
    }
    job->set_cursor(which, shown.next_offset);
    return tool_result(context.show(*job, now, shown), verbose);
}

json run_job_write(tool_context& context, call& running, const json& given) {
    runtime::supervisor& jobs = context.jobs();
    arguments args(context.declared("job_write"), given);
    const auto id = args.text("job_id", true);
    const auto data = args.text("data");
    const bool eof = args.flag("eof").value_or(false);
    const auto key_names = args.strings("keys");
    const auto wait_for = args.text("wait_for");
    const auto quiet = args.integer("quiet_ms", 0, most_wait_ms, true);
    const auto rows = args.integer("rows", runtime::min_terminal_rows, runtime::max_terminal_rows);
    const auto cols = args.integer("cols", runtime::min_terminal_cols, runtime::max_terminal_cols);
    const auto wait = args.integer("wait_ms", 0, most_wait_ms, true);
    const bool verbose = args.flag("verbose").value_or(false);
    if (!args.ok()) return tool_error(args.error());
    const bool resize = rows || cols;
    if (!data && !eof && !key_names && !resize) {
        return tool_error(
            "invalid arguments for job_write: give data, keys, eof, or rows and cols");
    }
    std::vector<runtime::terminal_key> keys;
    for (const std::string& name : key_names.value_or(std::vector<std::string>{})) {
        auto parsed = runtime::parse_key(name);
        if (const auto* reason = std::get_if<std::string>(&parsed)) {
            return tool_error("invalid arguments for job_write: keys: " + *reason);
        }
        keys.push_back(std::get<runtime::terminal_key>(parsed));
    }
    auto found = find_job(jobs, *id);
    if (auto* error = std::get_if<json>(&found)) return *error;
    const auto& job = std::get<std::shared_ptr<runtime::job>>(found);
    const bool terminal = job->has_terminal();
    if (!terminal && (key_names || wait_for || quiet || resize)) {
        return tool_error(*id +
                          " has no terminal: keys, wait_for, quiet_ms, rows and cols are for "
                          "a job started with tty: true");
    }

    const std::uint64_t before = stream_size(*job, runtime::job_output::merged);
    const auto typed_at = steady_clock::now();
    if (resize) {
        const auto now_size = job->screen()->size;
        const runtime::terminal_size size{static_cast<std::uint16_t>(rows.value_or(now_size.rows)),
                                          static_cast<std::uint16_t>(cols.value_or(now_size.cols))};
        if (!job->resize(size))
            return tool_error(*id +
                              ": the terminal was not resized: the job has ended, or is not "
                              "started yet");
    }
    runtime::job_write_result written;
    if (data || eof) written = job->write(data.value_or(""), eof && keys.empty());
    if (!written.error && !keys.empty()) {
        const runtime::job_write_result pressed = job->press(keys);
        written.written += pressed.written;
        written.error = pressed.error;
        if (!written.error && eof) written.error = job->write("", true).error;
    }
    if (written.error) {
        std::string text = *id + ": " + written.error->message;
        if (written.written > 0) {
            text += " (" + std::to_string(written.written) + " bytes were written)";
        }
        switch (written.error->kind) {
            case runtime::job_write_error::not_open:
                text += ". Only a job started with keep_stdin_open: true takes input.";
                break;
            case runtime::job_write_error::ended:
                text += ". Start the command again to give it input.";
                break;
            case runtime::job_write_error::closed_by_command:
            case runtime::job_write_error::not_reading:
            case runtime::job_write_error::io:
                break;
        }
        return tool_error(text);
    }
    if (terminal) {
        // What the program drew in answer: once the screen shows wait_for, or once its output
        // has been quiet for quiet_ms, or the job ended; at most wait_ms.
        const runtime::screen_wait until{
            wait_for.value_or(""),
            quiet || !wait_for ? std::optional(milliseconds(quiet.value_or(screen_quiet.count())))
                               : std::nullopt,
            typed_at};
        runtime::screen_wait_result waited = runtime::screen_wait_result::timed_out;
        (void)context.wait_for(
            running, steady_clock::now() + milliseconds(wait.value_or(default_wait_ms)),
            [&](steady_clock::time_point slice) {
                waited = job->wait_screen(until, slice);
                return waited != runtime::screen_wait_result::timed_out;
            },
            [&job] { return progress_of(*job); });
        if (running.cancelled) return nullptr;
        const runtime::job_snapshot now = job->snapshot();
        auto drawn = job->screen();
        const bool cut = fit_screen(*drawn, screen_budget_bytes);
        const window shown = screen_window(*drawn, cut, now);
        job->set_cursor(runtime::job_output::merged, shown.next_offset);
        job_view shown_job = context.show(*job, now, shown);
        show_screen(shown_job, *drawn);
        shown_job.structured["written"] = written.written;
        shown_job.structured["waited"] = runtime::to_string(waited);
        if (wait_for && waited != runtime::screen_wait_result::shown) {
            shown_job.text = "[the screen does not show " +
                             base::dump_json(json(shortened(*wait_for, 200))) + "]\n" +
                             shown_job.text;
        }
        return tool_result(shown_job, verbose);
    }
    (void)context.wait_for(
        running, steady_clock::now() + milliseconds(wait.value_or(250)),
        [&](steady_clock::time_point until) {
            return job->wait_output(runtime::job_output::merged, before, until);
        },
        [&job] { return progress_of(*job); });
    if (running.cancelled) return nullptr;
    const runtime::job_snapshot now = job->snapshot();
    const window shown =
        read_window(*job, runtime::job_output::merged, before, default_output_bytes);
    job->set_cursor(runtime::job_output::merged, shown.next_offset);
    job_view shown_job = context.show(*job, now, shown);
    shown_job.structured["written"] = written.written;
    return tool_result(shown_job, verbose);
}

json run_job_kill(tool_context& context, call& running, const json& given) {
    runtime::supervisor& jobs = context.jobs();
    arguments args(context.declared("job_kill"), given);
    const auto id = args.text("job_id", true);
    const std::string name = args.choice("signal", {"TERM", "INT", "HUP", "KILL"}).value_or("TERM");
    const auto grace = args.integer("grace_ms", 0, 60'000, true);
    const bool verbose = args.flag("verbose").value_or(false);
    if (!args.ok()) return tool_error(args.error());
    auto found = find_job(jobs, *id);
    if (auto* error = std::get_if<json>(&found)) return *error;
    const auto& job = std::get<std::shared_ptr<runtime::job>>(found);

    const milliseconds wait(grace.value_or(3'000));
    runtime::kill_plan plan;
    if (name == "KILL") {
        plan.steps = {{SIGKILL, milliseconds(0)}};
    } else {
        const int signal = name == "INT" ? SIGINT : name == "HUP" ? SIGHUP : SIGTERM;
        plan.steps = {{signal, wait}, {SIGKILL, milliseconds(0)}};
    }
    const bool killed = job->kill(plan);
    // The plan ends in SIGKILL and a sweep: the job settles soon after the grace.
    (void)context.wait_for(
        running, steady_clock::now() + wait + std::chrono::seconds(30),
        [&job](steady_clock::time_point until) { return job->wait_settled(until); },
        [&job] { return progress_of(*job); });
    if (running.cancelled) return nullptr;
    const runtime::job_snapshot now = job->snapshot();
    const std::uint64_t size = stream_size(*job, runtime::job_output::merged);
    const window shown =
        read_window(*job, runtime::job_output::merged,
                    size - std::min<std::uint64_t>(size, kill_tail_bytes), kill_tail_bytes);
    job_view shown_job = context.show(*job, now, shown);
    shown_job.structured["killed"] = killed;
    shown_job.text = (killed ? "killed " + *id + " with SIG" + name + "\n"
                             : *id + " had already ended; nothing was killed\n") +
                     shown_job.text;
    return tool_result(shown_job, verbose);
}

json run_job_list(tool_context& context, call& /*running*/, const json& given) {
    runtime::supervisor& jobs = context.jobs();
    const server_options& options = context.options();
    arguments args(context.declared("job_list"), given);
    const std::string which = args.choice("status", {"running", "all"}).value_or("all");
    if (!args.ok()) return tool_error(args.error());
    json listed = json::array();
    std::string text;
    std::size_t running = 0;
    for (const auto& each : jobs.list()) {
        const bool live = each.status() == runtime::job_status::running;
        running += live ? 1 : 0;
        if (which == "running" && !live) continue;
        const auto kept = jobs.find(each.id);
        const std::uint64_t read = kept ? kept->cursor(runtime::job_output::merged) : 0;
        const std::uint64_t unread = each.output_bytes - std::min(each.output_bytes, read);
        json listed_job = ending_json(each);
        listed_job.update(json{{"description", shortened(each.label, 200)},
                               {"startedAt", iso8601(each.started_at)},
                               {"bytes",
                                {{"output", each.output_bytes},
                                 {"stdout", each.stdout_bytes},
                                 {"stderr", each.stderr_bytes}}},
                               {"unreadBytes", unread}});
        listed.push_back(std::move(listed_job));
        text += each.id + "  " + std::string(runtime::to_string(each.status()));
        const runtime::run_outcome* ended = each.outcome ? &*each.outcome : nullptr;
        if (ended && ended->exit_code) {
            text += " (exit code " + std::to_string(*ended->exit_code) + ")";
        }
        if (ended && ended->signal) text += " (" + runtime::signal_name(*ended->signal) + ")";
        text += "  " + duration_text(running_for(each)) + "  " + shortened(each.label, 80) + "  [" +
                std::to_string(each.output_bytes) + " bytes, " + std::to_string(unread) +
                " unread]\n";
    }
    if (listed.empty()) text = which == "running" ? "(no running jobs)\n" : "(no jobs)\n";
    const std::size_t most = options.limits.max_jobs;
    text +=
        "[" + std::to_string(running) + " of at most " + std::to_string(most) + " jobs running]\n";
    if (running * 5 >= most * 4) {
        text += "[close to the limit: end jobs you no longer need with job_kill]\n";
    }
    return text_result(
        text,
        json{{"jobs", std::move(listed)}, {"limits", {{"maxRunning", most}, {"running", running}}}},
        false);
}

}  // namespace cordon::mcp
