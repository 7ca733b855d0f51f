// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The effective settings of a run or an MCP server, each with where it came from: one resolver
// for `cordon run`, `cordon mcp` and `cordon config show`, so that what `config show` prints is
// what a run with the same options gets.
//
// Layers, highest first (cli/config_file.hpp; docs/contract.md, "Configuration"):
//
//   flags    the command line (add_policy_options, add_limit_options, the path and env options)
//   session  --session: the mode, the approval policy and the root the session log records
//   profile  --profile NAME: the [profile.NAME] tables of the files
//   files    each file's top level, a later file over an earlier one
//   default  cordon's own
//
// A session records only a mode, an approval policy and a root; every other key comes from the
// layers below it. `cordon run` refuses a flag that contradicts what the session records
// (resolve_standing, cli/standing.hpp): the flags win here, as they would if they agreed.
// `cordon mcp` resolves without the session, which its server folds in per call (the session can
// change while it serves: policy/resolve.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli/config_file.hpp"
#include "cli/path_options.hpp"
#include "cli/standing.hpp"
#include "cordon/environment.hpp"
#include "cordon/session_log.hpp"
#include "policy/resolve.hpp"

namespace cordon::cli {

// How long a question stays open by default: then it is withdrawn (`cancelled`).
inline constexpr std::chrono::minutes default_approval_timeout{5};

// The limits of a run as given on the command line (add_limit_options).
struct limit_flags {
    std::optional<std::chrono::milliseconds> timeout;  // --timeout
    std::optional<std::uint64_t> max_output;           // --max-output
    std::optional<std::uint64_t> max_processes;        // --max-processes; 0: unlimited
    std::optional<std::uint64_t> max_memory;           // --max-memory; 0: unlimited
};

// Everything a command line says about the settings.
struct setting_flags {
    const policy_flags& policy;
    const limit_flags& limits;
    const path_flags& paths;
    const env_flags& environment;
};

// What a session log records, as a layer: `state` folded from the log at `file`.
struct session_layer {
    std::filesystem::path file;
    const policy::session_state& state;
};

// Every effective value and its origin. Durations in milliseconds, sizes in bytes; 0 is
// "unlimited" for max_processes and max_memory.
struct settings {
    sourced<sandbox::sandbox_mode> mode;
    // As given (--workspace; "" is the current directory) or as the session records it; the
    // command checks it (cli/workspace.hpp, policy/resolve.hpp) before anything uses it.
    sourced<std::filesystem::path> workspace;
    sourced<sandbox::backend_choice> backend;
    sourced<std::chrono::milliseconds> timeout;
    sourced<std::uint64_t> max_output;
    sourced<std::uint64_t> max_processes;
    sourced<std::uint64_t> max_memory;
    sourced<policy::approval_policy> approval;
    sourced<std::chrono::milliseconds> approval_timeout;
    sourced<sandbox::identity_range> identity_range;
    sourced<bool> env_clear;
    std::vector<sourced<std::string>> env_keep;   // the files', then the flags'
    std::vector<sourced<std::string>> env_unset;  // the files', then the flags'
    // The policy beyond the mode (paths, network) with the flags applied, and each entry's origin.
    configured_rules rules;
    std::vector<sourced<policy::command_rule>> approval_rules;  // in layer order

    // The environment policy of every run these settings govern.
    [[nodiscard]] runtime::environment_policy environment() const;
    // The approval rules' values, in layer order.
    [[nodiscard]] std::vector<policy::command_rule> approval_rule_values() const;
};

// The value of `setting` when a flag, a session or the configuration set it; nullopt for cordon's
// default, which the executor (or the MCP server) applies itself.
template <typename T>
[[nodiscard]] std::optional<T> unless_default(const sourced<T>& setting) {
    if (setting.from.from == origin::kind::built_in) return std::nullopt;
    return setting.value;
}

// The settings `flags` ask for over the loaded configuration and, when given, the session; the
// usage error (a bad path or network flag) otherwise.
[[nodiscard]] std::variant<settings, std::string> resolve_settings(
    const setting_flags& flags, const loaded_config& config,
    const session_layer* session = nullptr);

// The deployment `deployed` (settings resolved without a session) names: its mode and its
// workspace, checked as one the `widest` mode a run may get (the mode itself, or an escalation)
// could write (cli/workspace.hpp); the usage error otherwise.
[[nodiscard]] std::variant<policy::deployment, std::string> deployment_of(
    const settings& deployed, sandbox::sandbox_mode widest);

// `below` (settings resolved without a session) with the session's layer: its mode, approval
// policy and root wherever no flag gave them.
[[nodiscard]] settings with_session(settings below, const session_layer& session);

// Registers the options that choose the policy a run stands under, the same for every command
// that takes them (`cordon run`, `cordon mcp`, `cordon config show`): --mode, --workspace,
// --session, --profile, --approval, --approval-timeout and --backend. A bad value is a usage
// error "<command>: <message>" (cli/options.hpp). `flags` must outlive the parse.
void add_policy_options(CLI::App& sub, policy_flags& flags, std::string_view command);

// Registers a run's limits (`cordon run`, `cordon config show`): --timeout, --max-output,
// --max-processes and --max-memory, with the bounds a configuration file has (cli/options.hpp).
void add_limit_options(CLI::App& sub, limit_flags& flags, std::string_view command);

}  // namespace cordon::cli
