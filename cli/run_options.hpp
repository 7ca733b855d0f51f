// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run`'s options: registered on CLI11 with the shared validators of cli/options.hpp (so a
// bad mode, backend, approval policy, duration or size is a usage error while the command line is
// parsed), then checked as a whole (validate): the command, the escalation fields, the workspace
// and working directory, the --stdin-file, --tty against the options it excludes. Everything that
// can be wrong with the invocation is found before anything runs.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli/path_options.hpp"
#include "cli/standing.hpp"
#include "cordon/executor.hpp"
#include "cordon/mode.hpp"
#include "cordon/network_request.hpp"
#include "sandbox/local_provider.hpp"

namespace cordon::cli {

inline constexpr std::string_view run_command_name = "cordon run";

// How long a question at the terminal stays open by default: then it is withdrawn
// (`cancelled`).
inline constexpr std::chrono::minutes default_approval_timeout{5};

// The options as parsed.
struct run_options {
    policy_flags policy;  // --mode, --workspace, --backend, --approval(-timeout), --session
    path_flags paths;     // --writable-root, --deny-read, --protect, --tmp, ...
    // What the configuration made of the defaults (cli/config_file.hpp); the flags apply on top.
    sandbox::path_rules configured_rules;
    sandbox::network_rules configured_network;
    std::optional<sandbox::sandbox_mode> escalate;
    std::string escalate_network;               // --escalate-network proxy|allow ("" not given)
    std::vector<std::string> escalate_domains;  // --escalate-domain D
    std::string justification;
    bool has_justification = false;
    std::string workdir;
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<std::uint64_t> max_output;
    std::optional<std::uint64_t> max_processes;  // 0: unlimited
    std::optional<std::uint64_t> max_memory;     // 0: unlimited
    std::vector<std::string> env;                // NAME=VALUE each
    env_flags environment;                       // --env-clear, --env-keep, --env-unset
    std::string stdin_file;
    bool tty = false;      // --tty
    std::string tty_size;  // --tty-size ROWSxCOLS ("" not given); implies --tty
    bool json = false;
    std::string shell_command;
    bool has_shell_command = false;
    std::vector<std::string> argv;
};

// Registers the options on `sub`; `options` must outlive the parse.
void add_run_options(CLI::App& sub, run_options& options);

// The invocation, checked. The request's mode and workspace root are the deployment's here; the
// session and an approved escalation may change them (resolve_standing, then the escalation).
struct validated {
    runtime::run_request request;
    policy::deployment where;
    sandbox::backend_choice backend = sandbox::backend_choice::automatic;
    std::chrono::milliseconds approval_timeout = default_approval_timeout;
    std::vector<policy::command_rule> approval_rules;  // the configuration's [[approval_rule]]
    std::optional<sandbox::sandbox_mode> escalate;     // --escalate
    // --escalate-network and --escalate-domain: what the run asks for beside its own network.
    std::optional<policy::network_request> escalate_network;
    std::string justification;
    std::string command_text;  // the command as the person asked sees it
    std::string input_text;    // what --stdin-file feeds it, as the person asked sees it
    // --tty: the run has a terminal (request.tty, its size filled in by the command from
    // cordon's own terminal unless --tty-size gave it).
    bool tty = false;
    bool tty_size_given = false;
};

// The checked invocation, or the one-line message for a usage error.
[[nodiscard]] std::variant<validated, std::string> validate(run_options& options);

}  // namespace cordon::cli
