// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon confine`: print the argv a command would be spawned as under a policy, without running
// it. Probes the ladder to pick the backend, exactly as a run would. The argv refers to the
// descriptors cordon passes its runners (the sealed launcher at fd 6, the workspace at fds 5 and
// 7, the command's environment at fd 4, the status channel at fd 3), so it documents a run rather
// than being one to paste into a shell: a line on stderr says so. (It does not print a `cordon
// run` line: rebuilt from the parsed options it would drop what it does not know, and quote
// names it cannot show.)
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>

#include "base/json_text.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/path_options.hpp"
#include "cli/shell_quote.hpp"
#include "cordon/limits.hpp"
#include "cordon/record_json.hpp"
#include "runtime/local_provider_factory.hpp"

namespace cordon::cli {

namespace {

struct confine_options {
    std::string mode;
    std::string workspace;
    std::string backend = "auto";
    bool json = false;
    std::vector<std::string> argv;
    path_flags paths;
};

// Why the printed argv is a description of a run and not a command line: the descriptors it names
// are cordon's, opened when it spawns the run. One line on stderr; nothing when it names none.
std::string cannot_run_as_printed(const sandbox::confined_argv& confined) {
    std::vector<int> named;
    if (confined.status) named.push_back(confined.status->child_fd);
    for (const sandbox::passed_fd& passed : confined.fds)
        named.push_back(passed.child_fd);
    if (named.empty()) return {};
    std::sort(named.begin(), named.end());
    named.erase(std::unique(named.begin(), named.end()), named.end());
    std::string list;
    for (std::size_t i = 0; i < named.size(); ++i) {
        if (i > 0) list += i + 1 == named.size() ? " and " : ", ";
        list += std::to_string(named[i]);
    }
    return "cordon confine: not runnable as printed: it names descriptor" +
           std::string(named.size() == 1 ? " " : "s ") + list +
           ", which cordon opens and passes when it spawns the run; `cordon run` with the same "
           "options runs it\n";
}

int run_confine_command(const confine_options& options) {
    constexpr std::string_view command = "cordon confine";
    auto mode = sandbox::parse_sandbox_mode(options.mode);
    if (!mode) {
        return usage_error(command, "unknown mode \"" + options.mode +
                                        "\" (expected read-only or workspace-write)");
    }
    if (!sandbox::is_confined(*mode)) {
        return usage_error(command, "danger-full-access is not confined; there is nothing to wrap");
    }
    auto choice = sandbox::parse_backend_choice(options.backend);
    if (!choice) {
        return usage_error(command, "unknown backend \"" + options.backend +
                                        "\" (expected auto, bwrap, landlock or seatbelt)");
    }
    if (options.argv.empty()) return usage_error(command, "missing `-- ARGV...` command");
    std::filesystem::path workspace =
        sandbox::canonical_path(options.workspace.empty() ? "." : options.workspace);
    std::error_code ec;
    if (!std::filesystem::is_directory(workspace, ec)) {
        return usage_error(command, "workspace is not a directory: " + workspace.string());
    }
    auto rules = path_rules_of(options.paths);
    if (auto* message = std::get_if<std::string>(&rules)) return usage_error(command, *message);
    auto network = network_rules_of(options.paths);
    if (auto* message = std::get_if<std::string>(&network)) return usage_error(command, *message);
    if (std::get<sandbox::network_rules>(network).policy == sandbox::network_policy::proxy) {
        // The argv's launcher would wait for a proxy at its --proxy-fd that nobody gives it.
        return usage_error(command,
                           "network proxy needs cordon's proxy, which only cordon run and cordon "
                           "mcp start; a printed argv would have no network at all");
    }
    sandbox::local_provider_options provider_options;
    provider_options.choice = *choice;
    provider_options.verdict_directory = sandbox::default_verdict_cache();
    provider_options.judge_runs = false;
    // The printed argv cannot carry the run's mount namespace (docs/sandbox.md, "Identity"): it
    // runs as whoever runs it.
    provider_options.identities.count = 0;
    auto provider = runtime::make_local_provider(std::move(provider_options));
    try {
        sandbox::sandbox_policy policy{*mode, workspace, std::get<sandbox::path_rules>(rules)};
        // No cgroup limits what the argv will run under: its tmpfs mounts are bounded as an
        // unlimited run's are (runtime/executor.cpp).
        policy.tmpfs_bytes = runtime::host_memory().value_or(sandbox::default_tmpfs_bytes);
        policy.network = std::get<sandbox::network_rules>(std::move(network));
        // Nobody would serve the witness's listener: its connects would wait for ever.
        policy.network_witness = false;
        sandbox::confined_argv confined = provider->confine(options.argv, policy, workspace);
        if (options.json) {
            std::cout << base::dump_json(nlohmann::json(confined.argv)) << '\n';
        } else {
            std::cout << shell_join(confined.argv) << '\n';
        }
        std::cerr << cannot_run_as_printed(confined);
        return 0;
    } catch (const sandbox::request_refused_error& error) {
        return usage_error(command, error.reason());
    } catch (const sandbox::sandbox_unavailable_error& error) {
        if (options.json) {
            std::cout << base::dump_json(runtime::to_json(error)) << '\n';
        } else {
            std::cerr << error.what() << '\n';
        }
        return exit_sandbox_unavailable;
    }
}

}  // namespace

std::function<int()> add_confine_command(CLI::App& app, std::vector<std::string> command) {
    auto options = std::make_shared<confine_options>();
    options->argv = std::move(command);
    auto* sub = app.add_subcommand("confine", "Print the confined argv for a command");
    // The values are checked after the parse, with confine's own messages.
    offer_choices(
        sub->add_option("--mode", options->mode, "read-only or workspace-write"),
        names_of({sandbox::sandbox_mode::read_only, sandbox::sandbox_mode::workspace_write}))
        ->required();
    sub->add_option("--workspace", options->workspace, "Workspace root (default: .)")
        ->type_name("DIR");
    offer_choices(
        sub->add_option("--backend", options->backend, "auto, bwrap, landlock or seatbelt"),
        backend_names());
    sub->add_flag("--json", options->json, "Print the argv as a JSON array");
    add_path_options(*sub, options->paths);
    return [options] { return run_confine_command(*options); };
}

}  // namespace cordon::cli
