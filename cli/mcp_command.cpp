// `cordon mcp`: the MCP server of mcp/server.hpp on cordon's stdin and stdout (docs/mcp.md).
// Its options mirror `cordon run`'s; every call runs under the standing mode (the --session's
// sandbox/mode, else --mode), or, escalated and approved, under a wider one for that call only.
//
// Exit codes: 0 when the input ended; 128+N when signal N (INT, TERM, HUP) stopped it; 2 for a
// bad invocation. Either way, every job's tree has ended before cordon exits.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <iostream>

#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cli/duration.hpp"
#include "cli/workspace.hpp"
#include "mcp/server.hpp"
#include "policy/approval.hpp"
#include "policy/session_log.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/unique_fd.hpp"
#include "sandbox/policy.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/runner_path.hpp"

namespace cordon::cli {

namespace {

constexpr std::string_view command_name = "cordon mcp";

struct mcp_options {
    std::string mode = "read-only";
    std::string workspace;
    std::string backend = "auto";
    std::string timeout;
    std::string job_timeout;
    std::size_t max_jobs = 10;
    std::string session;
    std::string approval = "ask";
    std::string approval_timeout;
    std::string progress_interval;
};

// Opens the session log (creating it, recorded as started in `workspace`) where no run of this
// server may write it: refused at start-up when it lies where a workspace-write deployment's
// runs could write, and protected for every run (a run under which it would be writable is
// refused), since whoever can write the log can widen every later run.
std::variant<std::shared_ptr<const policy::session_log>, std::string> open_session(
    const std::string& raw, const std::filesystem::path& workspace, sandbox::sandbox_mode mode,
    std::vector<std::filesystem::path>& protected_paths) {
    // Where the log is, as a run would reach it (its directory's symlinks resolved), checked
    // before anything is created there.
    const std::filesystem::path given = std::filesystem::absolute(raw);
    const std::filesystem::path where =
        sandbox::canonical_path(given.parent_path()) / given.filename();
    if (mode == sandbox::sandbox_mode::workspace_write) {
        for (const auto& root : sandbox::writable_roots({mode, workspace})) {
            if (sandbox::is_within(where, root)) {
                return "--session " + where.string() + " lies in " + root.string() +
                       ", which workspace-write commands may write; keep the log elsewhere";
            }
        }
    }
    auto opened = policy::session_log::open_or_create(where, workspace);
    if (auto* error = std::get_if<policy::log_error>(&opened)) {
        return "cannot use --session " + raw + ": " + error->message;
    }
    auto log = std::make_shared<const policy::session_log>(
        std::get<policy::session_log>(std::move(opened)));
    protected_paths.push_back(where);
    return log;
}

int run_mcp_command(const mcp_options& given) {
    mcp::server_options options;
    options.version = CORDON_VERSION;
    auto parsed_mode = parse_mode_option(given.mode);
    if (auto* message = std::get_if<std::string>(&parsed_mode)) {
        return usage_error(command_name, *message);
    }
    const sandbox::sandbox_mode mode = std::get<sandbox::sandbox_mode>(parsed_mode);
    options.limits.mode = mode;
    auto backend = parse_backend_option(given.backend);
    if (auto* message = std::get_if<std::string>(&backend)) {
        return usage_error(command_name, *message);
    }
    auto workspace = resolve_workspace(given.workspace, mode);
    if (auto* message = std::get_if<std::string>(&workspace)) {
        return usage_error(command_name, *message);
    }
    options.workspace = std::get<std::filesystem::path>(workspace);
    if (!given.timeout.empty()) {
        auto timeout = parse_duration(given.timeout);
        if (!timeout || *timeout > options.limits.max_timeout) {
            return usage_error(command_name, "invalid --timeout \"" + given.timeout +
                                                 "\" (e.g. 30s, 2m; at most 10m)");
        }
        options.limits.default_timeout = *timeout;
    }
    if (!given.job_timeout.empty()) {
        auto timeout = parse_duration(given.job_timeout);
        if (!timeout) {
            return usage_error(
                command_name, "invalid --job-timeout \"" + given.job_timeout + "\" (e.g. 30m, 2h)");
        }
        options.limits.job_timeout = *timeout;
        options.limits.max_job_timeout = std::max(options.limits.max_job_timeout, *timeout);
    }
    if (given.max_jobs < 1 || given.max_jobs > 1000) {
        return usage_error(command_name, "invalid --max-jobs (1 to 1000)");
    }
    options.limits.max_jobs = given.max_jobs;
    const auto approval_policy = policy::parse_approval_policy(given.approval);
    if (!approval_policy) {
        return usage_error(command_name,
                           "invalid --approval \"" + given.approval + "\" (ask or never)");
    }
    options.approval.policy = *approval_policy;
    if (!given.approval_timeout.empty()) {
        auto timeout = parse_duration(given.approval_timeout);
        if (!timeout) {
            return usage_error(command_name, "invalid --approval-timeout \"" +
                                                 given.approval_timeout + "\" (e.g. 30s, 5m)");
        }
        options.approval.timeout = *timeout;
    }
    if (!given.progress_interval.empty()) {
        auto interval = parse_duration(given.progress_interval);
        if (!interval) {
            return usage_error(command_name, "invalid --progress-interval \"" +
                                                 given.progress_interval + "\" (e.g. 5s, 200ms)");
        }
        options.progress_interval = *interval;
    }
    if (!given.session.empty()) {
        auto session = open_session(given.session, options.workspace, mode,
                                    options.jobs.executor.protected_paths);
        if (auto* message = std::get_if<std::string>(&session)) {
            return usage_error(command_name, *message);
        }
        options.session = std::get<std::shared_ptr<const policy::session_log>>(std::move(session));
    }
    options.bash = sandbox::find_trusted_executable("bash");
    if (options.bash.empty()) {
        return usage_error(command_name,
                           "needs bash in a system directory (/usr/local/bin, /usr/bin, /bin)");
    }

    // INT, TERM and HUP end the server the way the end of its input does: they are blocked
    // before any thread starts (so every thread inherits the mask; commands start with an empty
    // one) and read from a signalfd that the server watches.
    sigset_t stops;
    sigemptyset(&stops);
    for (int signal : {SIGINT, SIGTERM, SIGHUP})
        sigaddset(&stops, signal);
    ::pthread_sigmask(SIG_BLOCK, &stops, nullptr);
    runtime::unique_fd interrupt(::signalfd(-1, &stops, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!interrupt) {
        return usage_error(command_name, "cannot watch for signals (signalfd failed)");
    }

    // A session may narrow the standing mode, and an escalation from a confined mode still runs
    // confined: a provider whenever a confined run can happen.
    std::shared_ptr<sandbox::provider> provider;
    if (sandbox::is_confined(mode) || options.session) {
        sandbox::local_provider_options provider_options;
        provider_options.choice = std::get<sandbox::backend_choice>(backend);
        provider_options.verdict_directory = sandbox::default_verdict_cache();
        auto local = runtime::make_local_provider(std::move(provider_options));
        if (!local->selected() && sandbox::is_confined(mode)) {
            spdlog::warn(
                "no sandbox backend can enforce {} here: every bash call will fail "
                "and nothing will run (cordon probe says why)",
                sandbox::to_string(mode));
        }
        provider = std::move(local);
    }
    mcp::server server(std::move(provider), std::move(options));
    server.serve(STDIN_FILENO, STDOUT_FILENO, interrupt.get());

    signalfd_siginfo got{};
    if (::read(interrupt.get(), &got, sizeof got) == static_cast<ssize_t>(sizeof got)) {
        return exit_signal_base + static_cast<int>(got.ssi_signo);
    }
    return 0;
}

}  // namespace

std::function<int()> add_mcp_command(CLI::App& app) {
    auto options = std::make_shared<mcp_options>();
    auto* sub = app.add_subcommand("mcp", "Serve MCP (Model Context Protocol) on stdin/stdout");
    sub->footer(
        "Tools: bash, job_output, job_write, job_kill, job_list (docs/mcp.md). Every command "
        "runs under --mode (or the session's mode); a bash call may ask for a wider mode, which "
        "the client's user approves through MCP elicitation.");
    sub->add_option("--mode", options->mode,
                    "read-only (default), workspace-write or danger-full-access");
    sub->add_option("--workspace", options->workspace, "Workspace root (default: .)");
    sub->add_option("--backend", options->backend, "auto, bwrap, landlock or seatbelt");
    sub->add_option("--timeout", options->timeout,
                    "Default timeout of a bash call, e.g. 2m (default 120s, max 600s)");
    sub->add_option("--job-timeout", options->job_timeout,
                    "Default lifetime of a background job, e.g. 30m (default 30m)");
    sub->add_option("--max-jobs", options->max_jobs, "Jobs that may run at once (default 10)");
    sub->add_option("--session", options->session,
                    "Session log (created if missing): standing mode, approval policy, grants "
                    "and the audit trail of every approval");
    sub->add_option("--approval", options->approval,
                    "ask (default: escalations ask the client's user) or never (rejected)");
    sub->add_option("--approval-timeout", options->approval_timeout,
                    "How long a question may stay unanswered, e.g. 2m (default 5m)");
    // How often a waiting call with a progress token hears from the server (default 5s). Hidden:
    // the tests shorten it so that they wait on a tick in milliseconds, not seconds.
    sub->add_option("--progress-interval", options->progress_interval)->group("");
    return [options] { return run_mcp_command(*options); };
}

}  // namespace cordon::cli
