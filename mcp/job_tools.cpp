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
    const std::string wait = args.choice("wait", {"output", "exit", "none"}).value_or("output");
    const auto timeout = args.integer("timeout_ms", 0, most_wait_ms, true);
    const auto max_bytes = args.integer("max_bytes", 1, most_output_bytes, true);
    const auto filter = args.text("filter");
    const std::string stream = args.choice("stream", {"both", "stdout", "stderr"}).value_or("both");
    const bool verbose = args.flag("verbose").value_or(false);
    if (!args.ok()) return tool_error(args.error());
    auto found = find_job(jobs, *id);
    if (auto* error = std::get_if<json>(&found)) return *error;
    const auto& job = std::get<std::shared_ptr<runtime::job>>(found);

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
    if (wait == "output") {
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
    const auto wait = args.integer("wait_ms", 0, most_wait_ms, true);
    const bool verbose = args.flag("verbose").value_or(false);
    if (!args.ok()) return tool_error(args.error());
    if (!data && !eof)
        return tool_error("invalid arguments for job_write: give data, eof, or both");
    auto found = find_job(jobs, *id);
    if (auto* error = std::get_if<json>(&found)) return *error;
    const auto& job = std::get<std::shared_ptr<runtime::job>>(found);

    const std::uint64_t before = stream_size(*job, runtime::job_output::merged);
    const runtime::job_write_result written = job->write(data.value_or(""), eof);
    if (written.error) {
        std::string text = *id + ": " + written.error->message;
        if (written.written > 0) {
            text += " (" + std::to_string(written.written) + " of " + std::to_string(data->size()) +
                    " bytes were written)";
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
