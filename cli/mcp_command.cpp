// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon mcp`: the MCP server of cordon/mcp_server.hpp on cordon's stdin and stdout (docs/mcp.md).
// Its options mirror `cordon run`'s; every call runs under the standing mode (the --session's
// sandbox/mode, else --mode), or, escalated and approved, under a wider one for that call only.
//
// Exit codes: 0 when the input ended; 128+N when signal N (INT, TERM, HUP) stopped it; 2 for a
// bad invocation. Either way, every job's tree has ended before cordon exits.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>

#include "base/log.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/path_options.hpp"
#include "cli/settings.hpp"
#include "cli/standing.hpp"
#include "cordon/approval.hpp"
#include "cordon/mcp_server.hpp"
#include "cordon/policy.hpp"
#include "cordon/session_log.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/unique_fd.hpp"
#include "sandbox/runner_path.hpp"

namespace cordon::cli {

namespace {

constexpr std::string_view mcp_command_name = "cordon mcp";

struct mcp_options {
    policy_flags policy;  // --mode, --workspace, --backend, --approval(-timeout), --session
    path_flags paths;     // --writable-root, --deny-read, --protect, --tmp, ...
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<std::chrono::milliseconds> job_timeout;
    std::size_t max_jobs = 10;
    std::optional<std::uint64_t> max_memory;  // 0: unlimited
    std::optional<std::chrono::milliseconds> progress_interval;
    env_flags environment;  // --env-clear, --env-keep, --env-unset
};

int run_mcp_command(mcp_options& given) {
    // The settings (cli/settings.hpp): the flags over the configuration files. The session's
    // layer is the server's to fold in, per call (policy/resolve.hpp).
    auto loaded = load_config(given.policy.profile);
    if (auto* message = std::get_if<std::string>(&loaded)) {
        return usage_error(mcp_command_name, *message);
    }
    const loaded_config& config = std::get<loaded_config>(loaded);
    const limit_flags limits{given.timeout, std::nullopt, std::nullopt, given.max_memory};
    auto resolved =
        resolve_settings({given.policy, limits, given.paths, given.environment}, config);
    if (auto* message = std::get_if<std::string>(&resolved)) {
        return usage_error(mcp_command_name, *message);
    }
    const settings& deployed = std::get<settings>(resolved);
    mcp::server_options options;
    options.version = CORDON_VERSION;
    const sandbox::sandbox_mode mode = deployed.mode.value;
    options.limits.mode = mode;
    auto where = deployment_of(deployed, mode);
    if (auto* message = std::get_if<std::string>(&where)) {
        return usage_error(mcp_command_name, *message);
    }
    options.workspace = std::get<policy::deployment>(where).workspace_root;
    options.rules = deployed.rules.rules;
    options.network = deployed.rules.network;
    options.limits.network = options.network.policy;
    options.limits.allowed_domains = options.network.allowed_domains;
    if (auto timeout = unless_default(deployed.timeout)) options.limits.default_timeout = *timeout;
    if (given.job_timeout) {
        options.limits.job_timeout = *given.job_timeout;
        options.limits.max_job_timeout =
            std::max(options.limits.max_job_timeout, *given.job_timeout);
    }
    if (given.max_jobs < 1 || given.max_jobs > 1000) {
        return usage_error(mcp_command_name, "invalid --max-jobs (1 to 1000)");
    }
    options.limits.max_jobs = given.max_jobs;
    options.max_memory = unless_default(deployed.max_memory);
    options.environment = deployed.environment();
    options.approval.policy = deployed.approval.value;
    if (auto timeout = unless_default(deployed.approval_timeout)) {
        options.approval.timeout = *timeout;
    }
    options.approval.rules = deployed.approval_rule_values();
    if (given.progress_interval) options.progress_interval = *given.progress_interval;
    if (!given.policy.session.empty()) {
        auto session = open_protected_session(given.policy.session, options.workspace, mode,
                                              options.jobs.executor.protected_paths);
        if (auto* message = std::get_if<std::string>(&session)) {
            return usage_error(mcp_command_name, *message);
        }
        options.session = std::get<std::shared_ptr<const policy::session_log>>(std::move(session));
        // Nor may a run read it: it holds what earlier calls were given (their env, their input),
        // and whoever can open it can hold its lock (cordon/session_log.hpp).
        options.rules.deny_read.push_back(sandbox::canonical_path(options.session->path()));
    }
    // No run may write the configuration: whoever can write it sets every later server's
    // defaults.
    // One that holds approval rules, not even a call escalated to workspace-write: whoever can
    // write it allows what nobody is asked about.
    const sandbox::sandbox_mode config_guard =
        options.approval.rules.empty() ? mode
                                       : std::max(mode, sandbox::sandbox_mode::workspace_write);
    if (auto refused = config_refusal(config, {config_guard, options.workspace, options.rules},
                                      options.jobs.executor.protected_paths)) {
        return usage_error(mcp_command_name, *refused);
    }
    options.bash = sandbox::find_trusted_executable("bash");
    if (options.bash.empty()) {
        return usage_error(mcp_command_name,
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
        return usage_error(mcp_command_name, "cannot watch for signals (signalfd failed)");
    }

    // A session may narrow the standing mode, and an escalation from a confined mode still runs
    // confined: a provider whenever a confined run can happen.
    std::shared_ptr<sandbox::provider> provider;
    if (sandbox::is_confined(mode) || options.session) {
        sandbox::local_provider_options provider_options;
        provider_options.choice = deployed.backend.value;
        provider_options.verdict_directory = sandbox::default_verdict_cache();
        if (auto identities = unless_default(deployed.identity_range)) {
            provider_options.identities = *identities;
        }
        auto local = runtime::make_local_provider(std::move(provider_options));
        if (!local->selected() && sandbox::is_confined(mode)) {
            log::warn(
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
    const auto rule = [](std::function<std::string(const std::string&)> message,
                         bool empty_is_unset) {
        return value_rule{std::string(mcp_command_name), std::move(message), empty_is_unset};
    };
    const auto quoting = [](std::string before, std::string after) {
        return [before = std::move(before), after = std::move(after)](const std::string& text) {
            return before + " \"" + text + "\" " + after;
        };
    };
    const bool unset = true;  // an empty value means the option was not given
    add_policy_options(*sub, options->policy, mcp_command_name);
    add_duration_option(*sub, "--timeout", options->timeout,
                        "Default timeout of a bash call, e.g. 2m (default 120s, max 600s)",
                        rule(quoting("invalid --timeout", "(e.g. 30s, 2m; at most 10m)"), unset),
                        mcp::tool_limits{}.max_timeout);
    add_duration_option(*sub, "--job-timeout", options->job_timeout,
                        "Default lifetime of a background job, e.g. 30m (default 30m)",
                        rule(quoting("invalid --job-timeout", "(e.g. 30m, 2h)"), unset));
    add_path_options(*sub, options->paths);
    sub->add_option("--max-jobs", options->max_jobs, "Jobs that may run at once (default 10)");
    sub->add_option("--max-memory", options->max_memory,
                    "Memory each command may use, e.g. 512M, 2G, or unlimited (default: half of "
                    "the host's memory)")
        ->transform(size_value(
            rule(quoting("invalid --max-memory", "(at least 4M, e.g. 512M, 2G, or unlimited)"),
                 unset),
            least_memory, std::numeric_limits<std::uint64_t>::max(), true))
        ->type_name("TEXT");
    add_env_options(*sub, options->environment, mcp_command_name);
    // How often a waiting call with a progress token hears from the server (default 5s). Hidden:
    // the tests shorten it so that they wait on a tick in milliseconds, not seconds.
    add_duration_option(*sub, "--progress-interval", options->progress_interval, "",
                        rule(quoting("invalid --progress-interval", "(e.g. 5s, 200ms)"), unset))
        ->group("");
    return [options] { return run_mcp_command(*options); };
}

}  // namespace cordon::cli
