// `cordon mcp`: the MCP server of mcp/server.hpp on cordon's stdin and stdout (docs/mcp.md).
// Its options mirror `cordon run`'s; every call runs under the one mode the server was started
// with.
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
#include "runtime/local_provider_factory.hpp"
#include "runtime/unique_fd.hpp"
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
};

int run_mcp_command(const mcp_options& given) {
    mcp::server_options options;
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

    std::shared_ptr<sandbox::provider> provider;
    if (sandbox::is_confined(mode)) {
        sandbox::local_provider_options provider_options;
        provider_options.choice = std::get<sandbox::backend_choice>(backend);
        provider_options.verdict_directory = sandbox::default_verdict_cache();
        auto local = runtime::make_local_provider(std::move(provider_options));
        if (!local->selected()) {
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
        "runs under --mode.");
    sub->add_option("--mode", options->mode,
                    "read-only (default), workspace-write or danger-full-access");
    sub->add_option("--workspace", options->workspace, "Workspace root (default: .)");
    sub->add_option("--backend", options->backend, "auto, bwrap, landlock or seatbelt");
    sub->add_option("--timeout", options->timeout,
                    "Default timeout of a bash call, e.g. 2m (default 120s, max 600s)");
    sub->add_option("--job-timeout", options->job_timeout,
                    "Default lifetime of a background job, e.g. 30m (default 30m)");
    sub->add_option("--max-jobs", options->max_jobs, "Jobs that may run at once (default 10)");
    return [options] { return run_mcp_command(*options); };
}

}  // namespace cordon::cli
