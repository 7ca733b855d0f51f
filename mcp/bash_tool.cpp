// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The `bash` tool: a command under the standing policy (the session's, else the server's), or
// once under a wider mode when the person behind the client approves; it returns within
// yield_ms, and a command still running then goes on as a job.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cordon/network_request.hpp"
#include "cordon/policy.hpp"
#include "mcp/arguments.hpp"
#include "mcp/tool_context.hpp"
#include "mcp/tools.hpp"
#include "policy/escalation_json.hpp"
#include "policy/resolve.hpp"
#include "sandbox/domain_pattern.hpp"

namespace cordon::mcp {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

constexpr std::string_view owner = "mcp";  // the jobs' owner, for the running-job cap

// What sandbox_network and sandbox_domains ask for (nullopt: nothing), or the tool error: proxy
// needs domains, domains need proxy (implied when sandbox_network is not given), and each domain
// is a pattern of sandbox/domain_pattern.hpp, kept in its canonical text.
std::variant<std::optional<policy::network_request>, std::string> network_asked_for(
    const std::string& network, const std::optional<std::vector<std::string>>& domains) {
    const std::string wrong = "invalid arguments for bash: ";
    if (network == "allow") {
        if (domains)
            return wrong + "sandbox_domains needs sandbox_network \"proxy\", not \"allow\"";
        return policy::network_request{sandbox::network_policy::allow, {}};
    }
    if (!domains) {
        if (network == "proxy") return wrong + "sandbox_network \"proxy\" needs sandbox_domains";
        return std::optional<policy::network_request>();
    }
    policy::network_request out{sandbox::network_policy::proxy, {}};
    for (const std::string& each : *domains) {
        const auto parsed = sandbox::parse_domain_pattern(each);
        if (const auto* reason = std::get_if<std::string>(&parsed)) {
            return wrong + "sandbox_domains: invalid domain \"" + each + "\": " + *reason;
        }
        std::string canonical = sandbox::to_string(std::get<sandbox::domain_pattern>(parsed));
        if (std::find(out.domains.begin(), out.domains.end(), canonical) == out.domains.end()) {
            out.domains.push_back(std::move(canonical));
        }
    }
    if (out.domains.empty()) return wrong + "sandbox_domains is empty";
    return out;
}

}  // namespace

json run_bash(tool_context& context, call& running, const json& given) {
    const server_options& options = context.options();
    runtime::supervisor& jobs = context.jobs();
    arguments args(context.declared("bash"), given);
    const auto command = args.text("command", true);
    const auto description = args.text("description");
    const auto workdir = args.text("workdir");
    const bool background = args.flag("run_in_background").value_or(false);
    const auto& limits = options.limits;
    const milliseconds most = background ? limits.max_job_timeout : limits.max_timeout;
    const auto timeout = args.integer("timeout_ms", 1, most.count());
    const auto yield = args.integer("yield_ms", 0, most_yield_ms, true);
    auto input = args.text("stdin");
    const bool keep_stdin_open = args.flag("keep_stdin_open").value_or(false);
    const bool tty = args.flag("tty").value_or(false);
    const auto rows = args.integer("rows", runtime::min_terminal_rows, runtime::max_terminal_rows);
    const auto cols = args.integer("cols", runtime::min_terminal_cols, runtime::max_terminal_cols);
    const auto budget =
        args.integer("max_output_bytes", least_output_bytes, most_output_bytes, true);
    auto env = args.environment("env");
    const std::string permissions =
        args.choice("sandbox_permissions",
                    {"use_default", "require_escalated", "workspace-write", "danger-full-access"})
            .value_or("use_default");
    const std::string network =
        args.choice("sandbox_network", {"use_default", "proxy", "allow"}).value_or("use_default");
    const auto domains = args.strings("sandbox_domains");
    const auto justification = args.text("justification");
    const bool verbose = args.flag("verbose").value_or(false);
    if (!args.ok()) return tool_error(args.error());
    if ((rows || cols) && !tty) {
        return tool_error(
            "invalid arguments for bash: rows and cols are a tty's size; add tty: true");
    }
    if (command->find_first_not_of(" \t\r\n") == std::string::npos) {
        return tool_error("invalid arguments for bash: command is empty");
    }
    // argv and paths end at a NUL: what follows one would be dropped without a word.
    for (const auto* each : {&command, &workdir}) {
        if (*each && (*each)->find('\0') != std::string::npos) {
            return tool_error("invalid arguments for bash: a NUL byte in " +
                              std::string(each == &command ? "command" : "workdir"));
        }
    }

    // The standing policy: the session's mode and root, else the server's.
    std::optional<policy::session_state> session;
    if (options.session) {
        auto state = options.session->standing();
        if (auto* error = std::get_if<policy::log_error>(&state)) {
            return tool_error(
                "the session log " + options.session->path().string() + " cannot be read" +
                (error->line != 0 ? " (line " + std::to_string(error->line) + ")" : std::string()) +
                ": " + error->message + "; nothing ran");
        }
        session = std::get<policy::session_state>(std::move(state));
    }
    auto resolved =
        policy::resolve(policy::deployment{limits.mode, options.workspace},
                        policy::resolve_request{session ? &*session : nullptr, std::nullopt});
    if (auto* refused = std::get_if<std::string>(&resolved)) return tool_error(*refused);
    const policy::resolved_policy standing = std::get<policy::resolved_policy>(resolved);
    // require_escalated is the widest mode, as in Codex; use_default asks for nothing.
    std::optional<sandbox::sandbox_mode> requested;
    if (permissions == "require_escalated" || permissions == "danger-full-access") {
        requested = sandbox::sandbox_mode::danger_full_access;
    } else if (permissions == "workspace-write") {
        requested = sandbox::sandbox_mode::workspace_write;
    }
    auto asked_network = network_asked_for(network, domains);
    if (auto* wrong = std::get_if<std::string>(&asked_network)) return tool_error(*wrong);
    const auto& network_asked = std::get<std::optional<policy::network_request>>(asked_network);
    const char* field = "sandbox_permissions";
    if (!requested && network_asked) {
        field = network == "use_default" ? "sandbox_domains" : "sandbox_network";
    }
    if (auto wrong = policy::check_escalation_fields(
            requested.has_value() || network_asked.has_value(), justification, field)) {
        return tool_error(*wrong);
    }

    runtime::job_request request;
    request.run.argv = {options.bash.string(), "-c", *command};
    request.run.mode = standing.mode;
    request.run.workspace_root = standing.workspace_root;
    request.run.rules = options.rules;
    request.run.network = options.network;
    if (workdir) {
        std::filesystem::path dir = *workdir;
        if (dir.is_relative()) dir = standing.workspace_root / dir;
        dir = sandbox::canonical_path(dir);
        std::error_code ec;
        if (!std::filesystem::is_directory(dir, ec)) {
            return tool_error("invalid arguments for bash: workdir is not a directory: " +
                              *workdir);
        }
        request.run.workdir = dir;
    }
    request.run.timeout = milliseconds(
        timeout.value_or(background ? limits.job_timeout.count() : limits.default_timeout.count()));
    if (env) request.run.env = std::move(*env);
    request.run.environment = options.environment;
    request.run.max_memory = options.max_memory;
    request.run.stdin_data = std::move(input);
    request.keep_stdin_open = keep_stdin_open;
    if (tty) {
        request.run.tty = runtime::terminal_size{static_cast<std::uint16_t>(rows.value_or(24)),
                                                 static_cast<std::uint16_t>(cols.value_or(80))};
    }
    request.owner = owner;
    request.label = description && !description->empty() ? *description : *command;

    // An escalation is decided before anything runs, and widens this one call only.
    json approval;
    if (requested || network_asked) {
        policy::escalation_ask ask;
        ask.mode = requested;
        ask.network = network_asked;
        ask.justification = *justification;
        ask.tool = "bash";
        ask.command = *command;
        ask.input = policy::describe_input(request.run.stdin_data, keep_stdin_open || tty);
        const policy::escalation_outcome decided =
            context.escalate(running, request.run, ask,
                             {context.provider().get(), options.jobs.executor.protected_paths});
        if (running.cancelled) return nullptr;
        if (decided.status == policy::escalation_status::refused) {
            return tool_error("refusing to ask for " +
                              std::string(sandbox::to_string(requested.value_or(standing.mode))) +
                              ": " + decided.error + "; nothing ran");
        }
        approval = decided.approval;
        if (decided.status != policy::escalation_status::granted) {
            return text_result(decided.error,
                               json{{"status", "not_run"},
                                    {"message", decided.error},
                                    {"approval", std::move(approval)}},
                               true);
        }
    }

    auto started = jobs.start(std::move(request));
    if (auto* refused = std::get_if<runtime::job_refused>(&started)) {
        return tool_error(refused->message);
    }
    auto job = std::get<std::shared_ptr<runtime::job>>(std::move(started));
    {
        std::lock_guard lock(running.mutex);
        running.job = job;
    }
    const milliseconds patience(background ? 0 : yield.value_or(default_yield_ms));
    if (patience.count() > 0 && job->has_terminal()) {
        // An interactive program never ends by itself: the screen is shown once it has been
        // quiet for a moment (it waits for a key), or the job ended.
        (void)context.wait_for(
            running, steady_clock::now() + patience,
            [&job, since = steady_clock::now()](steady_clock::time_point until) {
                return job->wait_screen({{}, screen_quiet, since}, until) !=
                       runtime::screen_wait_result::timed_out;
            },
            [&job] { return progress_of(*job); });
    } else if (patience.count() > 0) {
        (void)context.wait_for(
            running, steady_clock::now() + patience,
            [&job](steady_clock::time_point until) { return job->wait_settled(until); },
            [&job] { return progress_of(*job); });
    }
    {
        std::lock_guard lock(running.mutex);
        running.job.reset();
    }
    if (running.cancelled) {
        job->kill();
        return nullptr;
    }
    const runtime::job_snapshot now = job->snapshot();
    if (auto screen = job->screen()) {
        const bool cut = fit_screen(*screen, screen_budget_bytes);
        const window shown = screen_window(*screen, cut, now);
        job->set_cursor(runtime::job_output::merged, shown.next_offset);
        job_view shown_job = context.show(*job, now, shown);
        show_screen(shown_job, *screen);
        if (!approval.is_null()) shown_job.structured["approval"] = std::move(approval);
        return tool_result(shown_job, verbose);
    }
    const window shown =
        read_head_and_tail(*job, runtime::job_output::merged,
                           static_cast<std::size_t>(budget.value_or(default_output_bytes)));
    job->set_cursor(runtime::job_output::merged, shown.next_offset);
    job_view shown_job = context.show(*job, now, shown);
    if (!approval.is_null()) shown_job.structured["approval"] = std::move(approval);
    return tool_result(shown_job, verbose);
}

}  // namespace cordon::mcp
